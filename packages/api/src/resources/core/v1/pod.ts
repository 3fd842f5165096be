import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectMeta, objectSchema } from '../../../meta-schema.js';
import { s, type Schema } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import { NONE, countOf } from '../../../table-format.js';
import { podReady, podRestarts, podStatusReason } from './pod-printer.js';
import { localObjectReference, podCondition, quantityMap } from './common.js';

const httpHeader = s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }, { required: ['name', 'value'] });

const httpGetAction = s.obj(
  {
    path: s.str({ tag: 1 }),
    port: s.intOrString({ tag: 2 }),
    host: s.str({ tag: 3 }),
    scheme: s.str({ tag: 4 }),
    httpHeaders: s.atomic(httpHeader, { tag: 5 }),
  },
  { required: ['port'] },
);
const execAction = s.obj({ command: s.atomic(s.str(), { tag: 1 }) });
const tcpSocketAction = s.obj({ port: s.intOrString({ tag: 1 }), host: s.str({ tag: 2 }) }, { required: ['port'] });

/** Probe: JSON inlines its ProbeHandler, which Protobuf nests at field 1. */
const probe = s.obj({
  exec: { ...execAction, tag: 1, embeddedIn: 1 },
  httpGet: { ...httpGetAction, tag: 2, embeddedIn: 1 },
  tcpSocket: { ...tcpSocketAction, tag: 3, embeddedIn: 1 },
  grpc: s.obj({ port: s.int32({ tag: 1 }), service: s.str({ tag: 2 }) }, { required: ['port'], tag: 4, embeddedIn: 1 }),
  initialDelaySeconds: s.int32({ tag: 2 }),
  timeoutSeconds: s.int32({ tag: 3 }),
  periodSeconds: s.int32({ tag: 4 }),
  successThreshold: s.int32({ tag: 5 }),
  failureThreshold: s.int32({ tag: 6 }),
  terminationGracePeriodSeconds: s.int64({ tag: 7 }),
});

const lifecycleHandler = s.obj({
  exec: { ...execAction, tag: 1 },
  httpGet: { ...httpGetAction, tag: 2 },
  tcpSocket: { ...tcpSocketAction, tag: 3 },
  sleep: s.obj({ seconds: s.int64({ tag: 1 }) }, { required: ['seconds'], tag: 4 }),
});

/** A ConfigMap's or Secret's name: LocalObjectReference, embedded at field 1 of the selectors and env sources. */
const embeddedName = { name: s.str({ tag: 1, embeddedIn: 1 }) };
const keySelector = s.obj(
  { ...embeddedName, key: s.str({ tag: 2 }), optional: s.bool({ tag: 3 }) },
  { required: ['key'] },
);
const envSource = s.obj({ ...embeddedName, optional: s.bool({ tag: 2 }) });

const objectFieldSelector = s.obj(
  { apiVersion: s.str({ tag: 1 }), fieldPath: s.str({ tag: 2 }) },
  { required: ['fieldPath'] },
);
const resourceFieldSelector = s.obj(
  { containerName: s.str({ tag: 1 }), resource: s.str({ tag: 2 }), divisor: s.quantity({ tag: 3 }) },
  { required: ['resource'] },
);

const envVarSource = s.obj({
  fieldRef: { ...objectFieldSelector, tag: 1 },
  resourceFieldRef: { ...resourceFieldSelector, tag: 2 },
  configMapKeyRef: { ...keySelector, tag: 3 },
  secretKeyRef: { ...keySelector, tag: 4 },
});

const envVar = s.obj(
  { name: s.str({ tag: 1 }), value: s.str({ tag: 2 }), valueFrom: { ...envVarSource, tag: 3 } },
  { required: ['name'] },
);

const envFromSource = s.obj({
  prefix: s.str({ tag: 1 }),
  configMapRef: { ...envSource, tag: 2 },
  secretRef: { ...envSource, tag: 3 },
});

const containerState = s.obj({
  waiting: s.obj({ reason: s.str({ tag: 1 }), message: s.str({ tag: 2 }) }, { tag: 1 }),
  running: s.obj({ startedAt: s.time({ tag: 1 }) }, { tag: 2 }),
  terminated: s.obj(
    {
      exitCode: s.int32({ tag: 1 }),
      signal: s.int32({ tag: 2 }),
      reason: s.str({ tag: 3 }),
      message: s.str({ tag: 4 }),
      startedAt: s.time({ tag: 5 }),
      finishedAt: s.time({ tag: 6 }),
      containerID: s.str({ tag: 7 }),
    },
    { required: ['exitCode'], tag: 3 },
  ),
});

const containerPort = s.obj(
  {
    name: s.str({ tag: 1 }),
    hostPort: s.int32({ tag: 2 }),
    containerPort: s.int32({ tag: 3 }),
    protocol: s.str({ tag: 4, enum: ['TCP', 'UDP', 'SCTP'] }),
    hostIP: s.str({ tag: 5 }),
  },
  { required: ['containerPort'] },
);

const seLinuxOptions = s.obj({
  user: s.str({ tag: 1 }),
  role: s.str({ tag: 2 }),
  type: s.str({ tag: 3 }),
  level: s.str({ tag: 4 }),
});
const seccompProfile = s.obj({ type: s.str({ tag: 1 }), localhostProfile: s.str({ tag: 2 }) }, { required: ['type'] });
const windowsOptions = s.obj({
  gmsaCredentialSpecName: s.str({ tag: 1 }),
  gmsaCredentialSpec: s.str({ tag: 2 }),
  runAsUserName: s.str({ tag: 3 }),
  hostProcess: s.bool({ tag: 4 }),
});
const appArmorProfile = s.obj({ type: s.str({ tag: 1 }), localhostProfile: s.str({ tag: 2 }) }, { required: ['type'] });

const podSecurityContext = s.obj({
  seLinuxOptions: { ...seLinuxOptions, tag: 1 },
  runAsUser: s.int64({ tag: 2 }),
  runAsNonRoot: s.bool({ tag: 3 }),
  supplementalGroups: s.atomic(s.int64(), { tag: 4 }),
  fsGroup: s.int64({ tag: 5 }),
  runAsGroup: s.int64({ tag: 6 }),
  sysctls: s.atomic(s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }, { required: ['name', 'value'] }), {
    tag: 7,
  }),
  windowsOptions: { ...windowsOptions, tag: 8 },
  fsGroupChangePolicy: s.str({ tag: 9 }),
  seccompProfile: { ...seccompProfile, tag: 10 },
  appArmorProfile: { ...appArmorProfile, tag: 11 },
  supplementalGroupsPolicy: s.str({ tag: 12 }),
  seLinuxChangePolicy: s.str({ tag: 13 }),
});

const securityContext = s.obj({
  capabilities: s.obj({ add: s.atomic(s.str(), { tag: 1 }), drop: s.atomic(s.str(), { tag: 2 }) }, { tag: 1 }),
  privileged: s.bool({ tag: 2 }),
  seLinuxOptions: { ...seLinuxOptions, tag: 3 },
  runAsUser: s.int64({ tag: 4 }),
  runAsNonRoot: s.bool({ tag: 5 }),
  readOnlyRootFilesystem: s.bool({ tag: 6 }),
  allowPrivilegeEscalation: s.bool({ tag: 7 }),
  runAsGroup: s.int64({ tag: 8 }),
  procMount: s.str({ tag: 9 }),
  windowsOptions: { ...windowsOptions, tag: 10 },
  seccompProfile: { ...seccompProfile, tag: 11 },
  appArmorProfile: { ...appArmorProfile, tag: 12 },
});

export const nodeSelectorTerm = s.obj(
  {
    matchExpressions: s.atomic(
      s.obj(
        { key: s.str({ tag: 1 }), operator: s.str({ tag: 2 }), values: s.atomic(s.str(), { tag: 3 }) },
        { required: ['key', 'operator'] },
      ),
      { tag: 1 },
    ),
    matchFields: s.atomic(
      s.obj(
        { key: s.str({ tag: 1 }), operator: s.str({ tag: 2 }), values: s.atomic(s.str(), { tag: 3 }) },
        { required: ['key', 'operator'] },
      ),
      { tag: 2 },
    ),
  },
  { structType: 'atomic' },
);

const podAffinityTerm = s.obj(
  {
    labelSelector: { ...labelSelector, tag: 1 },
    namespaces: s.atomic(s.str(), { tag: 2 }),
    topologyKey: s.str({ tag: 3 }),
    namespaceSelector: { ...labelSelector, tag: 4 },
    matchLabelKeys: s.atomic(s.str(), { tag: 5 }),
    mismatchLabelKeys: s.atomic(s.str(), { tag: 6 }),
  },
  { required: ['topologyKey'] },
);

const podAffinity = s.obj({
  requiredDuringSchedulingIgnoredDuringExecution: s.atomic(podAffinityTerm, { tag: 1 }),
  preferredDuringSchedulingIgnoredDuringExecution: s.atomic(
    s.obj(
      { weight: s.int32({ tag: 1 }), podAffinityTerm: { ...podAffinityTerm, tag: 2 } },
      { required: ['weight', 'podAffinityTerm'] },
    ),
    { tag: 2 },
  ),
});

const affinity = s.obj({
  nodeAffinity: s.obj(
    {
      requiredDuringSchedulingIgnoredDuringExecution: s.obj(
        { nodeSelectorTerms: s.atomic(nodeSelectorTerm, { tag: 1 }) },
        { required: ['nodeSelectorTerms'], structType: 'atomic', tag: 1 },
      ),
      preferredDuringSchedulingIgnoredDuringExecution: s.atomic(
        s.obj(
          { weight: s.int32({ tag: 1 }), preference: { ...nodeSelectorTerm, tag: 2 } },
          { required: ['weight', 'preference'] },
        ),
        { tag: 2 },
      ),
    },
    { tag: 1 },
  ),
  podAffinity: { ...podAffinity, tag: 2 },
  podAntiAffinity: { ...podAffinity, tag: 3 },
});

const topologySpreadConstraint = s.obj(
  {
    maxSkew: s.int32({ tag: 1 }),
    topologyKey: s.str({ tag: 2 }),
    whenUnsatisfiable: s.str({ tag: 3 }),
    labelSelector: { ...labelSelector, tag: 4 },
    minDomains: s.int32({ tag: 5 }),
    nodeAffinityPolicy: s.str({ tag: 6 }),
    nodeTaintsPolicy: s.str({ tag: 7 }),
    matchLabelKeys: s.atomic(s.str(), { tag: 8 }),
  },
  { required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] },
);

/** ResourceRequirements: limits, requests and the pod's resource claims a container uses. */
const resourceRequirements = s.obj({
  limits: { ...quantityMap, tag: 1 },
  requests: { ...quantityMap, tag: 2 },
  claims: s.keyed(s.obj({ name: s.str({ tag: 1 }), request: s.str({ tag: 2 }) }, { required: ['name'] }), ['name'], {
    tag: 3,
  }),
});

const container = s.obj(
  {
    name: s.str({ tag: 1 }),
    image: s.str({ tag: 2 }),
    command: s.atomic(s.str(), { tag: 3 }),
    args: s.atomic(s.str(), { tag: 4 }),
    workingDir: s.str({ tag: 5 }),
    ports: s.keyed(containerPort, ['containerPort', 'protocol'], { tag: 6 }),
    envFrom: s.atomic(envFromSource, { tag: 19 }),
    env: s.keyed(envVar, ['name'], { tag: 7, listType: 'map' }),
    resources: { ...resourceRequirements, tag: 8 },
    resizePolicy: s.atomic(
      s.obj(
        { resourceName: s.str({ tag: 1 }), restartPolicy: s.str({ tag: 2 }) },
        { required: ['resourceName', 'restartPolicy'] },
      ),
      { tag: 23 },
    ),
    restartPolicy: s.str({ tag: 24 }),
    volumeMounts: s.keyed(
      s.obj(
        {
          name: s.str({ tag: 1 }),
          readOnly: s.bool({ tag: 2 }),
          mountPath: s.str({ tag: 3 }),
          subPath: s.str({ tag: 4 }),
          mountPropagation: s.str({ tag: 5 }),
          subPathExpr: s.str({ tag: 6 }),
          recursiveReadOnly: s.str({ tag: 7 }),
        },
        { required: ['name', 'mountPath'] },
      ),
      ['mountPath'],
      { tag: 9 },
    ),
    volumeDevices: s.keyed(
      s.obj({ name: s.str({ tag: 1 }), devicePath: s.str({ tag: 2 }) }, { required: ['name', 'devicePath'] }),
      ['devicePath'],
      { tag: 21 },
    ),
    livenessProbe: { ...probe, tag: 10 },
    readinessProbe: { ...probe, tag: 11 },
    startupProbe: { ...probe, tag: 22 },
    lifecycle: s.obj(
      { postStart: { ...lifecycleHandler, tag: 1 }, preStop: { ...lifecycleHandler, tag: 2 } },
      { tag: 12 },
    ),
    terminationMessagePath: s.str({ tag: 13 }),
    terminationMessagePolicy: s.str({ tag: 20 }),
    imagePullPolicy: s.str({ tag: 14, enum: ['Always', 'Never', 'IfNotPresent'] }),
    securityContext: { ...securityContext, tag: 15 },
    stdin: s.bool({ tag: 16 }),
    stdinOnce: s.bool({ tag: 17 }),
    tty: s.bool({ tag: 18 }),
  },
  { required: ['name'] },
);

/** EphemeralContainer: JSON inlines its EphemeralContainerCommon (Container's fields and numbers), which Protobuf nests at 1. */
const ephemeralContainer = s.obj(
  {
    ...(Object.fromEntries(
      Object.entries(container.properties).map(([k, v]) => [k, { ...v, embeddedIn: 1 }]),
    ) as typeof container.properties),
    targetContainerName: s.str({ tag: 2 }),
  },
  { required: ['name'] },
);

const toleration = s.obj({
  key: s.str({ tag: 1 }),
  operator: s.str({ tag: 2, enum: ['Exists', 'Equal'] }),
  value: s.str({ tag: 3 }),
  effect: s.str({ tag: 4 }),
  tolerationSeconds: s.int64({ tag: 5 }),
});

const containerStatus = s.obj(
  {
    name: s.str({ tag: 1 }),
    state: { ...containerState, tag: 2 },
    lastState: { ...containerState, tag: 3 },
    ready: s.bool({ tag: 4 }),
    restartCount: s.int32({ tag: 5 }),
    image: s.str({ tag: 6 }),
    imageID: s.str({ tag: 7 }),
    containerID: s.str({ tag: 8 }),
    started: s.bool({ tag: 9 }),
    allocatedResources: { ...quantityMap, tag: 10 },
    resources: { ...resourceRequirements, tag: 11 },
    volumeMounts: s.atomic(
      s.obj(
        {
          name: s.str({ tag: 1 }),
          mountPath: s.str({ tag: 2 }),
          readOnly: s.bool({ tag: 3 }),
          recursiveReadOnly: s.str({ tag: 4 }),
        },
        { required: ['name', 'mountPath'] },
      ),
      { tag: 12 },
    ),
    user: s.obj(
      {
        linux: s.obj(
          { uid: s.int64({ tag: 1 }), gid: s.int64({ tag: 2 }), supplementalGroups: s.atomic(s.int64(), { tag: 3 }) },
          { required: ['uid', 'gid'], tag: 1 },
        ),
      },
      { tag: 13 },
    ),
    allocatedResourcesStatus: s.keyed(
      s.obj(
        {
          name: s.str({ tag: 1 }),
          resources: s.keyed(
            s.obj({ resourceID: s.str({ tag: 1 }), health: s.str({ tag: 2 }) }, { required: ['resourceID'] }),
            ['resourceID'],
            { tag: 2 },
          ),
        },
        { required: ['name'] },
      ),
      ['name'],
      { tag: 14 },
    ),
  },
  { required: ['name', 'ready', 'restartCount', 'image', 'imageID'] },
);

const keyToPath = s.obj(
  { key: s.str({ tag: 1 }), path: s.str({ tag: 2 }), mode: s.int32({ tag: 3 }) },
  { required: ['key', 'path'] },
);
const downwardAPIFile = s.obj(
  {
    path: s.str({ tag: 1 }),
    fieldRef: { ...objectFieldSelector, tag: 2 },
    resourceFieldRef: { ...resourceFieldSelector, tag: 3 },
    mode: s.int32({ tag: 4 }),
  },
  { required: ['path'] },
);
/** A ConfigMap or Secret projection: the name in the embedded LocalObjectReference at 1. */
const namedProjection = s.obj({
  ...embeddedName,
  items: s.atomic(keyToPath, { tag: 2 }),
  optional: s.bool({ tag: 4 }),
});

/** A `secretRef` of the volume sources: a LocalObjectReference. */
const secretRef = (tag: number) => ({ ...localObjectReference, tag });
const strs = (tag: number) => s.atomic(s.str(), { tag });

/** PersistentVolumeClaimTemplate of an ephemeral volume: metadata and a PVC spec. */
export const persistentVolumeClaimTemplate = s.obj(
  {
    metadata: { ...objectMeta, tag: 1 },
    spec: s.obj(
      {
        accessModes: strs(1),
        selector: { ...labelSelector, tag: 4 },
        resources: s.obj({ limits: { ...quantityMap, tag: 1 }, requests: { ...quantityMap, tag: 2 } }, { tag: 2 }),
        volumeName: s.str({ tag: 3 }),
        storageClassName: s.str({ tag: 5 }),
        volumeMode: s.str({ tag: 6 }),
        dataSource: s.obj(
          { apiGroup: s.str({ tag: 1 }), kind: s.str({ tag: 2 }), name: s.str({ tag: 3 }) },
          { required: ['kind', 'name'], structType: 'atomic', tag: 7 },
        ),
        dataSourceRef: s.obj(
          {
            apiGroup: s.str({ tag: 1 }),
            kind: s.str({ tag: 2 }),
            name: s.str({ tag: 3 }),
            namespace: s.str({ tag: 4 }),
          },
          { required: ['kind', 'name'], tag: 8 },
        ),
        volumeAttributesClassName: s.str({ tag: 9 }),
      },
      { tag: 2 },
    ),
  },
  { required: ['spec'] },
);

/** VolumeSource's members with Kubernetes' numbers (the embedded message at 2 of Volume). */
export const volumeSources: Record<string, Schema> = {
  hostPath: s.obj({ path: s.str({ tag: 1 }), type: s.str({ tag: 2 }) }, { required: ['path'], tag: 1 }),
  emptyDir: s.obj({ medium: s.str({ tag: 1 }), sizeLimit: s.quantity({ tag: 2 }) }, { tag: 2 }),
  gcePersistentDisk: s.obj(
    {
      pdName: s.str({ tag: 1 }),
      fsType: s.str({ tag: 2 }),
      partition: s.int32({ tag: 3 }),
      readOnly: s.bool({ tag: 4 }),
    },
    { required: ['pdName'], tag: 3 },
  ),
  awsElasticBlockStore: s.obj(
    {
      volumeID: s.str({ tag: 1 }),
      fsType: s.str({ tag: 2 }),
      partition: s.int32({ tag: 3 }),
      readOnly: s.bool({ tag: 4 }),
    },
    { required: ['volumeID'], tag: 4 },
  ),
  gitRepo: s.obj(
    { repository: s.str({ tag: 1 }), revision: s.str({ tag: 2 }), directory: s.str({ tag: 3 }) },
    { required: ['repository'], tag: 5 },
  ),
  secret: s.obj(
    {
      secretName: s.str({ tag: 1 }),
      items: s.atomic(keyToPath, { tag: 2 }),
      defaultMode: s.int32({ tag: 3 }),
      optional: s.bool({ tag: 4 }),
    },
    { tag: 6 },
  ),
  nfs: s.obj(
    { server: s.str({ tag: 1 }), path: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }) },
    { required: ['server', 'path'], tag: 7 },
  ),
  iscsi: s.obj(
    {
      targetPortal: s.str({ tag: 1 }),
      iqn: s.str({ tag: 2 }),
      lun: s.int32({ tag: 3 }),
      iscsiInterface: s.str({ tag: 4 }),
      fsType: s.str({ tag: 5 }),
      readOnly: s.bool({ tag: 6 }),
      portals: strs(7),
      chapAuthDiscovery: s.bool({ tag: 8 }),
      chapAuthSession: s.bool({ tag: 11 }),
      secretRef: secretRef(10),
      initiatorName: s.str({ tag: 12 }),
    },
    { required: ['targetPortal', 'iqn', 'lun'], tag: 8 },
  ),
  glusterfs: s.obj(
    { endpoints: s.str({ tag: 1 }), path: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }) },
    { required: ['endpoints', 'path'], tag: 9 },
  ),
  persistentVolumeClaim: s.obj(
    { claimName: s.str({ tag: 1 }), readOnly: s.bool({ tag: 2 }) },
    { required: ['claimName'], tag: 10 },
  ),
  rbd: s.obj(
    {
      monitors: strs(1),
      image: s.str({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      pool: s.str({ tag: 4 }),
      user: s.str({ tag: 5 }),
      keyring: s.str({ tag: 6 }),
      secretRef: secretRef(7),
      readOnly: s.bool({ tag: 8 }),
    },
    { required: ['monitors', 'image'], tag: 11 },
  ),
  flexVolume: s.obj(
    {
      driver: s.str({ tag: 1 }),
      fsType: s.str({ tag: 2 }),
      secretRef: secretRef(3),
      readOnly: s.bool({ tag: 4 }),
      options: s.map(s.str(), { tag: 5 }),
    },
    { required: ['driver'], tag: 12 },
  ),
  cinder: s.obj(
    { volumeID: s.str({ tag: 1 }), fsType: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }), secretRef: secretRef(4) },
    { required: ['volumeID'], tag: 13 },
  ),
  cephfs: s.obj(
    {
      monitors: strs(1),
      path: s.str({ tag: 2 }),
      user: s.str({ tag: 3 }),
      secretFile: s.str({ tag: 4 }),
      secretRef: secretRef(5),
      readOnly: s.bool({ tag: 6 }),
    },
    { required: ['monitors'], tag: 14 },
  ),
  flocker: s.obj({ datasetName: s.str({ tag: 1 }), datasetUUID: s.str({ tag: 2 }) }, { tag: 15 }),
  downwardAPI: s.obj({ items: s.atomic(downwardAPIFile, { tag: 1 }), defaultMode: s.int32({ tag: 2 }) }, { tag: 16 }),
  fc: s.obj(
    {
      targetWWNs: strs(1),
      lun: s.int32({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      readOnly: s.bool({ tag: 4 }),
      wwids: strs(5),
    },
    { tag: 17 },
  ),
  azureFile: s.obj(
    { secretName: s.str({ tag: 1 }), shareName: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }) },
    { required: ['secretName', 'shareName'], tag: 18 },
  ),
  configMap: s.obj(
    {
      ...embeddedName,
      items: s.atomic(keyToPath, { tag: 2 }),
      defaultMode: s.int32({ tag: 3 }),
      optional: s.bool({ tag: 4 }),
    },
    { tag: 19 },
  ),
  vsphereVolume: s.obj(
    {
      volumePath: s.str({ tag: 1 }),
      fsType: s.str({ tag: 2 }),
      storagePolicyName: s.str({ tag: 3 }),
      storagePolicyID: s.str({ tag: 4 }),
    },
    { required: ['volumePath'], tag: 20 },
  ),
  quobyte: s.obj(
    {
      registry: s.str({ tag: 1 }),
      volume: s.str({ tag: 2 }),
      readOnly: s.bool({ tag: 3 }),
      user: s.str({ tag: 4 }),
      group: s.str({ tag: 5 }),
      tenant: s.str({ tag: 6 }),
    },
    { required: ['registry', 'volume'], tag: 21 },
  ),
  azureDisk: s.obj(
    {
      diskName: s.str({ tag: 1 }),
      diskURI: s.str({ tag: 2 }),
      cachingMode: s.str({ tag: 3 }),
      fsType: s.str({ tag: 4 }),
      readOnly: s.bool({ tag: 5 }),
      kind: s.str({ tag: 6 }),
    },
    { required: ['diskName', 'diskURI'], tag: 22 },
  ),
  photonPersistentDisk: s.obj({ pdID: s.str({ tag: 1 }), fsType: s.str({ tag: 2 }) }, { required: ['pdID'], tag: 23 }),
  portworxVolume: s.obj(
    { volumeID: s.str({ tag: 1 }), fsType: s.str({ tag: 2 }), readOnly: s.bool({ tag: 3 }) },
    { required: ['volumeID'], tag: 24 },
  ),
  scaleIO: s.obj(
    {
      gateway: s.str({ tag: 1 }),
      system: s.str({ tag: 2 }),
      secretRef: secretRef(3),
      sslEnabled: s.bool({ tag: 4 }),
      protectionDomain: s.str({ tag: 5 }),
      storagePool: s.str({ tag: 6 }),
      storageMode: s.str({ tag: 7 }),
      volumeName: s.str({ tag: 8 }),
      fsType: s.str({ tag: 9 }),
      readOnly: s.bool({ tag: 10 }),
    },
    { required: ['gateway', 'system', 'secretRef'], tag: 25 },
  ),
  projected: s.obj(
    {
      sources: s.atomic(
        s.obj({
          secret: { ...namedProjection, tag: 1 },
          downwardAPI: s.obj({ items: s.atomic(downwardAPIFile, { tag: 1 }) }, { tag: 2 }),
          configMap: { ...namedProjection, tag: 3 },
          serviceAccountToken: s.obj(
            { audience: s.str({ tag: 1 }), expirationSeconds: s.int64({ tag: 2 }), path: s.str({ tag: 3 }) },
            { required: ['path'], tag: 4 },
          ),
          clusterTrustBundle: s.obj(
            {
              name: s.str({ tag: 1 }),
              signerName: s.str({ tag: 2 }),
              labelSelector: { ...labelSelector, tag: 3 },
              optional: s.bool({ tag: 5 }),
              path: s.str({ tag: 4 }),
            },
            { required: ['path'], tag: 5 },
          ),
        }),
        { tag: 1 },
      ),
      defaultMode: s.int32({ tag: 2 }),
    },
    { tag: 26 },
  ),
  storageos: s.obj(
    {
      volumeName: s.str({ tag: 1 }),
      volumeNamespace: s.str({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      readOnly: s.bool({ tag: 4 }),
      secretRef: secretRef(5),
    },
    { tag: 27 },
  ),
  csi: s.obj(
    {
      driver: s.str({ tag: 1 }),
      readOnly: s.bool({ tag: 2 }),
      fsType: s.str({ tag: 3 }),
      volumeAttributes: s.map(s.str(), { tag: 4 }),
      nodePublishSecretRef: secretRef(5),
    },
    { required: ['driver'], tag: 28 },
  ),
  ephemeral: s.obj({ volumeClaimTemplate: { ...persistentVolumeClaimTemplate, tag: 1 } }, { tag: 29 }),
  image: s.obj({ reference: s.str({ tag: 1 }), pullPolicy: s.str({ tag: 2 }) }, { tag: 30 }),
};

/** Volume: JSON inlines its VolumeSource, which Protobuf nests at field 2. */
const volume = s.obj(
  {
    name: s.str({ tag: 1 }),
    ...Object.fromEntries(Object.entries(volumeSources).map(([k, v]) => [k, { ...v, embeddedIn: 2 }])),
  },
  { required: ['name'] },
);

const podIP = s.obj({ ip: s.str({ tag: 1 }) });

export const podSpec = s.obj(
  {
    volumes: s.keyed(volume, ['name'], { tag: 1, patchStrategy: 'merge,retainKeys' }),
    initContainers: s.keyed(container, ['name'], { tag: 20 }),
    containers: s.keyed(container, ['name'], { tag: 2 }),
    ephemeralContainers: s.keyed(ephemeralContainer, ['name'], { tag: 34 }),
    restartPolicy: s.str({ tag: 3, enum: ['Always', 'OnFailure', 'Never'] }),
    terminationGracePeriodSeconds: s.int64({ tag: 4 }),
    activeDeadlineSeconds: s.int64({ tag: 5 }),
    dnsPolicy: s.str({ tag: 6 }),
    nodeSelector: s.map(s.str(), { tag: 7, mapType: 'atomic' }),
    serviceAccountName: s.str({ tag: 8 }),
    serviceAccount: s.str({ tag: 9 }),
    automountServiceAccountToken: s.bool({ tag: 21 }),
    nodeName: s.str({ tag: 10 }),
    hostNetwork: s.bool({ tag: 11 }),
    hostPID: s.bool({ tag: 12 }),
    hostIPC: s.bool({ tag: 13 }),
    shareProcessNamespace: s.bool({ tag: 27 }),
    securityContext: { ...podSecurityContext, tag: 14 },
    imagePullSecrets: s.keyed(localObjectReference, ['name'], { tag: 15 }),
    hostname: s.str({ tag: 16 }),
    subdomain: s.str({ tag: 17 }),
    affinity: { ...affinity, tag: 18 },
    schedulerName: s.str({ tag: 19 }),
    tolerations: s.atomic(toleration, { tag: 22 }),
    hostAliases: s.atomic(
      s.obj({ ip: s.str({ tag: 1 }), hostnames: s.atomic(s.str(), { tag: 2 }) }, { required: ['ip'] }),
      { tag: 23 },
    ),
    priorityClassName: s.str({ tag: 24 }),
    priority: s.int32({ tag: 25 }),
    dnsConfig: s.obj(
      {
        nameservers: s.atomic(s.str(), { tag: 1 }),
        searches: s.atomic(s.str(), { tag: 2 }),
        options: s.atomic(s.obj({ name: s.str({ tag: 1 }), value: s.str({ tag: 2 }) }), { tag: 3 }),
      },
      { tag: 26 },
    ),
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
    resourceClaims: s.keyed(
      s.obj(
        {
          name: s.str({ tag: 1 }),
          resourceClaimName: s.str({ tag: 3 }),
          resourceClaimTemplateName: s.str({ tag: 4 }),
        },
        { required: ['name'] },
      ),
      ['name'],
      { tag: 39 },
    ),
  },
  { required: ['containers'] },
);

/** PodTemplateSpec: the pod a workload (Deployment, ReplicaSet) creates. */
export const podTemplateSpec = s.obj({ metadata: { ...objectMeta, tag: 1 }, spec: { ...podSpec, tag: 2 } });

export const podSchema = objectSchema({
  spec: { ...podSpec, tag: 2 },
  status: s.obj(
    {
      phase: s.str({ tag: 1, enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] }),
      conditions: s.keyed(podCondition, ['type'], { tag: 2 }),
      message: s.str({ tag: 3 }),
      reason: s.str({ tag: 4 }),
      nominatedNodeName: s.str({ tag: 11 }),
      hostIP: s.str({ tag: 5 }),
      hostIPs: s.atomic(podIP, { tag: 16 }),
      podIP: s.str({ tag: 6 }),
      podIPs: s.keyed(podIP, ['ip'], { tag: 12 }),
      startTime: s.time({ tag: 7 }),
      initContainerStatuses: s.atomic(containerStatus, { tag: 10 }),
      containerStatuses: s.atomic(containerStatus, { tag: 8 }),
      qosClass: s.str({ tag: 9 }),
      ephemeralContainerStatuses: s.atomic(containerStatus, { tag: 13 }),
      resize: s.str({ tag: 14 }),
      resourceClaimStatuses: s.keyed(
        s.obj({ name: s.str({ tag: 1 }), resourceClaimName: s.str({ tag: 2 }) }, { required: ['name'] }),
        ['name'],
        { tag: 15 },
      ),
    },
    { tag: 3 },
  ),
});

export const pod = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    singular: 'pod',
    shortNames: ['po'],
    categories: ['all'],
    namespaced: true,
    subresources: [
      'status',
      'log',
      'binding',
      'eviction',
      'exec',
      'attach',
      'portforward',
      'proxy',
      'ephemeralcontainers',
    ],
    tableColumns: [
      nameColumn,
      column('Ready', 'string', podReady),
      column('Status', 'string', podStatusReason),
      column('Restarts', 'string', podRestarts),
      ageColumn,
      wideColumn('IP', 'string', (o) => (o.status as { podIP?: string } | undefined)?.podIP || NONE),
      wideColumn('Node', 'string', (o) => (o.spec as { nodeName?: string } | undefined)?.nodeName || NONE),
      wideColumn(
        'Nominated Node',
        'string',
        (o) => (o.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName || NONE,
      ),
      wideColumn('Readiness Gates', 'string', (o) =>
        countOf((o.spec as { readinessGates?: unknown } | undefined)?.readinessGates)
          ? String(countOf((o.spec as { readinessGates?: unknown }).readinessGates))
          : NONE,
      ),
    ],
    schema: podSchema,
    fieldSelectors: {
      'spec.nodeName': (o) => String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
      'spec.restartPolicy': (o) => String((o.spec as { restartPolicy?: string } | undefined)?.restartPolicy ?? ''),
      'spec.schedulerName': (o) => String((o.spec as { schedulerName?: string } | undefined)?.schedulerName ?? ''),
      'spec.serviceAccountName': (o) =>
        String((o.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName ?? ''),
      'spec.hostNetwork': (o) => String((o.spec as { hostNetwork?: boolean } | undefined)?.hostNetwork ?? false),
      'status.phase': (o) => String((o.status as { phase?: string } | undefined)?.phase ?? ''),
      'status.podIP': (o) => String((o.status as { podIP?: string } | undefined)?.podIP ?? ''),
      'status.nominatedNodeName': (o) =>
        String((o.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName ?? ''),
    },
  });
