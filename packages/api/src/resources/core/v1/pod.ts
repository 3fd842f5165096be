import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectMeta, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE, countOf } from '../../../table-format.js';
import { podReady, podRestarts, podStatusReason } from './pod-printer.js';
import { condition, localObjectReference, quantityMap } from './common.js';

const httpHeader = s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }, { required: ['name', 'value'] });

const httpGetAction = s.obj({
  path: s.str({ tag: 1 }), port: s.intOrString({ tag: 2 }), host: s.str({ tag: 3 }), scheme: s.str({ tag: 4 }),
  httpHeaders: s.atomic(httpHeader, { tag: 5 }),
}, { required: ['port'] });
const execAction = s.obj({ command: s.atomic(s.str(), { tag: 1 }) });
const tcpSocketAction = s.obj({ port: s.intOrString({ tag: 1 }), host: s.str({ tag: 2 }) }, { required: ['port'] });

/** Probe: JSON inlines its ProbeHandler, which Protobuf nests at field 1. */
const probe = s.obj({
  exec: { ...execAction, tag: 1, embeddedIn: 1 },
  httpGet: { ...httpGetAction, tag: 2, embeddedIn: 1 },
  tcpSocket: { ...tcpSocketAction, tag: 3, embeddedIn: 1 },
  grpc: s.obj({ port: s.int32({ tag: 1 }), service: s.str({ tag: 2 }) }, { required: ['port'], tag: 4, embeddedIn: 1 }),
  initialDelaySeconds: s.int32({ tag: 2 }), timeoutSeconds: s.int32({ tag: 3 }), periodSeconds: s.int32({ tag: 4 }),
  successThreshold: s.int32({ tag: 5 }), failureThreshold: s.int32({ tag: 6 }), terminationGracePeriodSeconds: s.int64({ tag: 7 }),
});

const lifecycleHandler = s.obj({
  exec: { ...execAction, tag: 1 }, httpGet: { ...httpGetAction, tag: 2 }, tcpSocket: { ...tcpSocketAction, tag: 3 },
  sleep: s.obj({ seconds: s.int64({ tag: 1 }) }, { required: ['seconds'], tag: 4 }),
});

/** A ConfigMap's or Secret's name: LocalObjectReference, embedded at field 1 of the selectors and env sources. */
const embeddedName = { name: s.str({ tag: 1, embeddedIn: 1 }) };
const keySelector = s.obj({ ...embeddedName, key: s.str({ tag: 2 }), optional: s.bool({ tag: 3 }) }, { required: ['key'] });
const envSource = s.obj({ ...embeddedName, optional: s.bool({ tag: 2 }) });

const objectFieldSelector = s.obj({ apiVersion: s.str({ tag: 1 }), fieldPath: s.str({ tag: 2 }) }, { required: ['fieldPath'] });
const resourceFieldSelector = s.obj({ containerName: s.str({ tag: 1 }), resource: s.str({ tag: 2 }), divisor: s.quantity({ tag: 3 }) }, { required: ['resource'] });

const envVarSource = s.obj({
  fieldRef: { ...objectFieldSelector, tag: 1 },
  resourceFieldRef: { ...resourceFieldSelector, tag: 2 },
  configMapKeyRef: { ...keySelector, tag: 3 },
  secretKeyRef: { ...keySelector, tag: 4 },
});

const envVar = s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }), valueFrom: { ...envVarSource, tag: 3 } }, { required: ['name'] });

const envFromSource = s.obj({ prefix: s.str({ tag: 1 }), configMapRef: { ...envSource, tag: 2 }, secretRef: { ...envSource, tag: 3 } });

const containerState = s.obj({
  waiting: s.obj({ reason: s.str({ tag: 1 }), message: s.str({ tag: 2 }) }, { tag: 1 }),
  running: s.obj({ startedAt: s.time({ tag: 1 }) }, { tag: 2 }),
  terminated: s.obj({
    exitCode: s.int32({ tag: 1 }), signal: s.int32({ tag: 2 }), reason: s.str({ tag: 3 }), message: s.str({ tag: 4 }),
    startedAt: s.time({ tag: 5 }), finishedAt: s.time({ tag: 6 }), containerID: s.str({ tag: 7 }),
  }, { required: ['exitCode'], tag: 3 }),
});

const containerPort = s.obj({
  name: s.str({ tag: 1 }), hostPort: s.int32({ tag: 2 }), containerPort: s.int32({ tag: 3 }),
  protocol: s.str({ tag: 4, enum: ['TCP', 'UDP', 'SCTP'] }), hostIP: s.str({ tag: 5 }),
}, { required: ['containerPort'] });

const seLinuxOptions = s.obj({ user: s.str({ tag: 1 }), role: s.str({ tag: 2 }), type: s.str({ tag: 3 }), level: s.str({ tag: 4 }) });
const seccompProfile = s.obj({ type: s.str({ tag: 1 }), localhostProfile: s.str({ tag: 2 }) }, { required: ['type'] });
const windowsOptions = s.obj({
  gmsaCredentialSpecName: s.str({ tag: 1 }), gmsaCredentialSpec: s.str({ tag: 2 }), runAsUserName: s.str({ tag: 3 }), hostProcess: s.bool({ tag: 4 }),
});
/** Fields without a number here (newer than the proto we checked) keep such a pod in JSON. */
const appArmorProfile = s.obj({ type: s.str({ tag: 1 }), localhostProfile: s.str({ tag: 2 }) }, { required: ['type'] });

const podSecurityContext = s.obj({
  seLinuxOptions: { ...seLinuxOptions, tag: 1 }, runAsUser: s.int64({ tag: 2 }), runAsNonRoot: s.bool({ tag: 3 }),
  supplementalGroups: s.atomic(s.int64(), { tag: 4 }), fsGroup: s.int64({ tag: 5 }), runAsGroup: s.int64({ tag: 6 }),
  sysctls: s.atomic(s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }, { required: ['name', 'value'] }), { tag: 7 }),
  windowsOptions: { ...windowsOptions, tag: 8 }, fsGroupChangePolicy: s.str({ tag: 9 }), seccompProfile: { ...seccompProfile, tag: 10 },
  appArmorProfile, supplementalGroupsPolicy: s.str(), seLinuxChangePolicy: s.str(),
});

const securityContext = s.obj({
  capabilities: s.obj({ add: s.atomic(s.str(), { tag: 1 }), drop: s.atomic(s.str(), { tag: 2 }) }, { tag: 1 }),
  privileged: s.bool({ tag: 2 }), seLinuxOptions: { ...seLinuxOptions, tag: 3 }, runAsUser: s.int64({ tag: 4 }),
  runAsNonRoot: s.bool({ tag: 5 }), readOnlyRootFilesystem: s.bool({ tag: 6 }), allowPrivilegeEscalation: s.bool({ tag: 7 }),
  runAsGroup: s.int64({ tag: 8 }), procMount: s.str({ tag: 9 }), windowsOptions: { ...windowsOptions, tag: 10 },
  seccompProfile: { ...seccompProfile, tag: 11 }, appArmorProfile,
});

const nodeSelectorTerm = s.obj({
  matchExpressions: s.atomic(s.obj({ key: s.str({ tag: 1 }), operator: s.str({ tag: 2 }), values: s.atomic(s.str(), { tag: 3 }) }, { required: ['key', 'operator'] }), { tag: 1 }),
  matchFields: s.atomic(s.obj({ key: s.str({ tag: 1 }), operator: s.str({ tag: 2 }), values: s.atomic(s.str(), { tag: 3 }) }, { required: ['key', 'operator'] }), { tag: 2 }),
}, { structType: 'atomic' });

const podAffinityTerm = s.obj({
  labelSelector: { ...labelSelector, tag: 1 }, namespaces: s.atomic(s.str(), { tag: 2 }), topologyKey: s.str({ tag: 3 }),
  namespaceSelector: { ...labelSelector, tag: 4 }, matchLabelKeys: s.atomic(s.str(), { tag: 5 }), mismatchLabelKeys: s.atomic(s.str(), { tag: 6 }),
}, { required: ['topologyKey'] });

const podAffinity = s.obj({
  requiredDuringSchedulingIgnoredDuringExecution: s.atomic(podAffinityTerm, { tag: 1 }),
  preferredDuringSchedulingIgnoredDuringExecution: s.atomic(s.obj({ weight: s.int32({ tag: 1 }), podAffinityTerm: { ...podAffinityTerm, tag: 2 } }, { required: ['weight', 'podAffinityTerm'] }), { tag: 2 }),
});

const affinity = s.obj({
  nodeAffinity: s.obj({
    requiredDuringSchedulingIgnoredDuringExecution: s.obj({ nodeSelectorTerms: s.atomic(nodeSelectorTerm, { tag: 1 }) }, { required: ['nodeSelectorTerms'], structType: 'atomic', tag: 1 }),
    preferredDuringSchedulingIgnoredDuringExecution: s.atomic(s.obj({ weight: s.int32({ tag: 1 }), preference: { ...nodeSelectorTerm, tag: 2 } }, { required: ['weight', 'preference'] }), { tag: 2 }),
  }, { tag: 1 }),
  podAffinity: { ...podAffinity, tag: 2 },
  podAntiAffinity: { ...podAffinity, tag: 3 },
});

const topologySpreadConstraint = s.obj({
  maxSkew: s.int32({ tag: 1 }), topologyKey: s.str({ tag: 2 }), whenUnsatisfiable: s.str({ tag: 3 }), labelSelector: { ...labelSelector, tag: 4 },
  minDomains: s.int32({ tag: 5 }), nodeAffinityPolicy: s.str({ tag: 6 }), nodeTaintsPolicy: s.str({ tag: 7 }), matchLabelKeys: s.atomic(s.str(), { tag: 8 }),
}, { required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] });

const container = s.obj({
  name: s.str({ tag: 1 }),
  image: s.str({ tag: 2 }),
  command: s.atomic(s.str(), { tag: 3 }),
  args: s.atomic(s.str(), { tag: 4 }),
  workingDir: s.str({ tag: 5 }),
  ports: s.keyed(containerPort, ['containerPort', 'protocol'], { tag: 6 }),
  envFrom: s.atomic(envFromSource, { tag: 19 }),
  env: s.keyed(envVar, ['name'], { tag: 7, listType: 'map' }),
  resources: s.obj({ limits: { ...quantityMap, tag: 1 }, requests: { ...quantityMap, tag: 2 }, claims: s.any({ tag: 3 }) }, { tag: 8 }),
  resizePolicy: s.atomic(s.any(), { tag: 23 }),
  restartPolicy: s.str({ tag: 24 }),
  volumeMounts: s.keyed(s.obj({
    name: s.str({ tag: 1 }), readOnly: s.bool({ tag: 2 }), mountPath: s.str({ tag: 3 }), subPath: s.str({ tag: 4 }),
    mountPropagation: s.str({ tag: 5 }), subPathExpr: s.str({ tag: 6 }), recursiveReadOnly: s.str({ tag: 7 }),
  }, { required: ['name', 'mountPath'] }), ['mountPath'], { tag: 9 }),
  volumeDevices: s.atomic(s.any(), { tag: 21 }),
  livenessProbe: { ...probe, tag: 10 },
  readinessProbe: { ...probe, tag: 11 },
  startupProbe: { ...probe, tag: 22 },
  lifecycle: s.obj({ postStart: { ...lifecycleHandler, tag: 1 }, preStop: { ...lifecycleHandler, tag: 2 } }, { tag: 12 }),
  terminationMessagePath: s.str({ tag: 13 }),
  terminationMessagePolicy: s.str({ tag: 20 }),
  imagePullPolicy: s.str({ tag: 14, enum: ['Always', 'Never', 'IfNotPresent'] }),
  securityContext: { ...securityContext, tag: 15 },
  stdin: s.bool({ tag: 16 }), stdinOnce: s.bool({ tag: 17 }), tty: s.bool({ tag: 18 }),
}, { required: ['name'] });

const toleration = s.obj({
  key: s.str({ tag: 1 }), operator: s.str({ tag: 2, enum: ['Exists', 'Equal'] }), value: s.str({ tag: 3 }),
  effect: s.str({ tag: 4 }), tolerationSeconds: s.int64({ tag: 5 }),
});

const containerStatus = s.obj({
  name: s.str({ tag: 1 }), state: { ...containerState, tag: 2 }, lastState: { ...containerState, tag: 3 }, ready: s.bool({ tag: 4 }),
  restartCount: s.int32({ tag: 5 }), image: s.str({ tag: 6 }), imageID: s.str({ tag: 7 }), containerID: s.str({ tag: 8 }),
  started: s.bool({ tag: 9 }), allocatedResources: s.any({ tag: 10 }), resources: s.any({ tag: 11 }),
  volumeMounts: s.any({ tag: 12 }), user: s.any({ tag: 13 }), allocatedResourcesStatus: s.any({ tag: 14 }),
}, { required: ['name', 'ready', 'restartCount', 'image', 'imageID'] });

const keyToPath = s.obj({ key: s.str({ tag: 1 }), path: s.str({ tag: 2 }), mode: s.int32({ tag: 3 }) }, { required: ['key', 'path'] });
const downwardAPIFile = s.obj({
  path: s.str({ tag: 1 }),
  fieldRef: { ...objectFieldSelector, tag: 2 },
  resourceFieldRef: { ...resourceFieldSelector, tag: 3 },
  mode: s.int32({ tag: 4 }),
}, { required: ['path'] });
/** A ConfigMap or Secret projection: the name in the embedded LocalObjectReference at 1. */
const namedProjection = s.obj({ ...embeddedName, items: s.atomic(keyToPath, { tag: 2 }), optional: s.bool({ tag: 4 }) });

/**
 * Volume: JSON inlines its VolumeSource, which Protobuf nests at field 2. The common sources
 * are typed with Kubernetes' numbers; the others are kept as they come and keep the pod in JSON.
 */
const volume = s.obj({
  name: s.str({ tag: 1 }),
  hostPath: s.obj({ path: s.str({ tag: 1 }), type: s.str({ tag: 2 }) }, { required: ['path'], tag: 1, embeddedIn: 2 }),
  emptyDir: s.obj({ medium: s.str({ tag: 1 }), sizeLimit: s.quantity({ tag: 2 }) }, { tag: 2, embeddedIn: 2 }),
  secret: s.obj({ secretName: s.str({ tag: 1 }), items: s.atomic(keyToPath, { tag: 2 }), defaultMode: s.int32({ tag: 3 }), optional: s.bool({ tag: 4 }) }, { tag: 6, embeddedIn: 2 }),
  persistentVolumeClaim: s.obj({ claimName: s.str({ tag: 1 }), readOnly: s.bool({ tag: 2 }) }, { required: ['claimName'], tag: 10, embeddedIn: 2 }),
  downwardAPI: s.obj({ items: s.atomic(downwardAPIFile, { tag: 1 }), defaultMode: s.int32({ tag: 2 }) }, { tag: 16, embeddedIn: 2 }),
  configMap: s.obj({ ...embeddedName, items: s.atomic(keyToPath, { tag: 2 }), defaultMode: s.int32({ tag: 3 }), optional: s.bool({ tag: 4 }) }, { tag: 19, embeddedIn: 2 }),
  projected: s.obj({
    sources: s.atomic(s.obj({
      secret: { ...namedProjection, tag: 1 },
      downwardAPI: s.obj({ items: s.atomic(downwardAPIFile, { tag: 1 }) }, { tag: 2 }),
      configMap: { ...namedProjection, tag: 3 },
      serviceAccountToken: s.obj({ audience: s.str({ tag: 1 }), expirationSeconds: s.int64({ tag: 2 }), path: s.str({ tag: 3 }) }, { required: ['path'], tag: 4 }),
    }), { tag: 1 }),
    defaultMode: s.int32({ tag: 2 }),
  }, { tag: 26, embeddedIn: 2 }),
}, { required: ['name'], preserveUnknownFields: true });

const podIP = s.obj({ ip: s.str({ tag: 1 }) });

export const podSpec = s.obj({
  volumes: s.keyed(volume, ['name'], { tag: 1, patchStrategy: 'merge,retainKeys' }),
  initContainers: s.keyed(container, ['name'], { tag: 20 }),
  containers: s.keyed(container, ['name'], { tag: 2 }),
  ephemeralContainers: s.keyed(s.any(), ['name'], { tag: 34 }),
  restartPolicy: s.str({ tag: 3, enum: ['Always', 'OnFailure', 'Never'] }),
  terminationGracePeriodSeconds: s.int64({ tag: 4 }),
  activeDeadlineSeconds: s.int64({ tag: 5 }),
  dnsPolicy: s.str({ tag: 6 }),
  nodeSelector: s.map(s.str(), { tag: 7, mapType: 'atomic' }),
  serviceAccountName: s.str({ tag: 8 }),
  serviceAccount: s.str({ tag: 9 }),
  automountServiceAccountToken: s.bool({ tag: 21 }),
  nodeName: s.str({ tag: 10 }),
  hostNetwork: s.bool({ tag: 11 }), hostPID: s.bool({ tag: 12 }), hostIPC: s.bool({ tag: 13 }),
  shareProcessNamespace: s.bool({ tag: 27 }),
  securityContext: { ...podSecurityContext, tag: 14 },
  imagePullSecrets: s.keyed(localObjectReference, ['name'], { tag: 15 }),
  hostname: s.str({ tag: 16 }), subdomain: s.str({ tag: 17 }),
  affinity: { ...affinity, tag: 18 },
  schedulerName: s.str({ tag: 19 }),
  tolerations: s.atomic(toleration, { tag: 22 }),
  hostAliases: s.atomic(s.obj({ ip: s.str({ tag: 1 }), hostnames: s.atomic(s.str(), { tag: 2 }) }, { required: ['ip'] }), { tag: 23 }),
  priorityClassName: s.str({ tag: 24 }), priority: s.int32({ tag: 25 }),
  dnsConfig: s.obj({
    nameservers: s.atomic(s.str(), { tag: 1 }), searches: s.atomic(s.str(), { tag: 2 }),
    options: s.atomic(s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }), { tag: 3 }),
  }, { tag: 26 }),
  readinessGates: s.atomic(s.obj({ conditionType: s.str({ tag: 1 }) }, { required: ['conditionType'] }), { tag: 28 }),
  runtimeClassName: s.str({ tag: 29 }),
  enableServiceLinks: s.bool({ tag: 30 }),
  preemptionPolicy: s.str({ tag: 31 }),
  overhead: { ...quantityMap, tag: 32 },
  topologySpreadConstraints: s.keyed(topologySpreadConstraint, ['topologyKey', 'whenUnsatisfiable'], { tag: 33 }),
  setHostnameAsFQDN: s.bool({ tag: 35 }),
  os: s.obj({ name: s.str({ tag: 1 }) }, { required: ['name'], tag: 36 }),
  hostUsers: s.bool({ tag: 37 }),
  schedulingGates: s.keyed(s.obj({ name: s.str({ tag: 1 }) }, { required: ['name'] }), ['name'], { tag: 38 }),
  resourceClaims: s.atomic(s.any(), { tag: 39 }),
}, { required: ['containers'] });

/** PodTemplateSpec: the pod a workload (Deployment, ReplicaSet) creates. */
export const podTemplateSpec = s.obj({ metadata: { ...objectMeta, tag: 1 }, spec: { ...podSpec, tag: 2 } });

export const pod = (): ResourceType => defineResource({
  group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', shortNames: ['po'], categories: ['all'],
  namespaced: true, subresources: ['status', 'log', 'binding'],
  tableColumns: [
    nameColumn,
    column('Ready', 'string', podReady),
    column('Status', 'string', podStatusReason),
    column('Restarts', 'string', podRestarts),
    ageColumn,
    column('IP', 'string', (o) => (o.status as { podIP?: string } | undefined)?.podIP || NONE, 1),
    column('Node', 'string', (o) => (o.spec as { nodeName?: string } | undefined)?.nodeName || NONE, 1),
    column('Nominated Node', 'string', (o) => (o.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName || NONE, 1),
    column('Readiness Gates', 'string', (o) => countOf((o.spec as { readinessGates?: unknown } | undefined)?.readinessGates) ? String(countOf((o.spec as { readinessGates?: unknown }).readinessGates)) : NONE, 1),
  ],
  schema: objectSchema({
    spec: { ...podSpec, tag: 2 },
    status: s.obj({
      phase: s.str({ tag: 1, enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] }),
      conditions: s.keyed(condition, ['type'], { tag: 2 }),
      message: s.str({ tag: 3 }), reason: s.str({ tag: 4 }), nominatedNodeName: s.str({ tag: 11 }),
      hostIP: s.str({ tag: 5 }), hostIPs: s.atomic(podIP, { tag: 16 }),
      podIP: s.str({ tag: 6 }), podIPs: s.keyed(podIP, ['ip'], { tag: 12 }),
      startTime: s.time({ tag: 7 }),
      initContainerStatuses: s.atomic(containerStatus, { tag: 10 }),
      containerStatuses: s.atomic(containerStatus, { tag: 8 }),
      qosClass: s.str({ tag: 9 }),
      ephemeralContainerStatuses: s.atomic(containerStatus, { tag: 13 }),
      resize: s.str({ tag: 14 }), resourceClaimStatuses: s.any({ tag: 15 }),
    }, { tag: 3 }),
  }),
  fieldSelectors: {
    'spec.nodeName': (o) => String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
    'spec.restartPolicy': (o) => String((o.spec as { restartPolicy?: string } | undefined)?.restartPolicy ?? ''),
    'spec.schedulerName': (o) => String((o.spec as { schedulerName?: string } | undefined)?.schedulerName ?? ''),
    'spec.serviceAccountName': (o) => String((o.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName ?? ''),
    'spec.hostNetwork': (o) => String((o.spec as { hostNetwork?: boolean } | undefined)?.hostNetwork ?? false),
    'status.phase': (o) => String((o.status as { phase?: string } | undefined)?.phase ?? ''),
    'status.podIP': (o) => String((o.status as { podIP?: string } | undefined)?.podIP ?? ''),
    'status.nominatedNodeName': (o) => String((o.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName ?? ''),
  },
});
