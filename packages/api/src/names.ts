/**
 * The only place that spells the product's identifiers. The default naming is the spec's
 * (`svc`); `--naming=kubernetes` switches every identifier to the Kubernetes spelling so
 * stock clients work against every group. Call `useNaming` once at process start, before
 * building the catalog.
 */
export type NamingScheme = 'svc' | 'kubernetes';

export interface Naming {
  readonly scheme: NamingScheme;
  /** Suffix of built-in API groups: `svc.io` or `k8s.io`. */
  readonly groupSuffix: string;
  /** Prefix of well-known label and annotation keys: `svc.io` or `kubernetes.io`. */
  readonly labelPrefix: string;
  readonly systemNamespace: string;
  readonly publicNamespace: string;
  readonly nodeLeaseNamespace: string;
  readonly protobufMediaType: string;
  /** Prefix of OpenAPI schema extensions: `x-svc-` or `x-kubernetes-`. */
  readonly schemaExtensionPrefix: string;
  readonly lastAppliedAnnotation: string;
  readonly execInfoEnv: string;
  readonly namespaceFinalizer: string;
  readonly clusterName: string;
  /** The ConfigMap with the cluster's root CA that every namespace gets. */
  readonly rootCaConfigMap: string;
  readonly apiserverName: string;
  readonly controllerManagerName: string;
  readonly schedulerName: string;
  readonly nodeAgentName: string;
  readonly cliName: string;
  /** The built-in certificate signers, as CertificateSigningRequests name them. */
  readonly signerNames: SignerNames;
}

/** Names of the built-in signers (`spec.signerName` of a CertificateSigningRequest). */
export interface SignerNames {
  /** Client certificates for the API server: `svc.io/svc-apiserver-client`. */
  readonly apiserverClient: string;
  /** Node agents' client certificates for the API server: `svc.io/svc-apiserver-client-svclet`. */
  readonly apiserverClientNodeAgent: string;
  /** Node agents' serving certificates: `svc.io/svclet-serving`. */
  readonly nodeAgentServing: string;
  /** The old default signer; not creatable through certificates v1: `svc.io/legacy-unknown`. */
  readonly legacyUnknown: string;
}

const base = {
  apiserverName: 'svc-apiserver',
  controllerManagerName: 'svc-controller-manager',
  schedulerName: 'svc-scheduler',
  nodeAgentName: 'svclet',
  cliName: 'svcctl',
} as const;

const SVC: Naming = {
  ...base,
  scheme: 'svc',
  groupSuffix: 'svc.io',
  labelPrefix: 'svc.io',
  systemNamespace: 'svc-system',
  publicNamespace: 'svc-public',
  nodeLeaseNamespace: 'svc-node-lease',
  protobufMediaType: 'application/vnd.svc.protobuf',
  schemaExtensionPrefix: 'x-svc-',
  lastAppliedAnnotation: 'svcctl.svc.io/last-applied-configuration',
  execInfoEnv: 'SVC_EXEC_INFO',
  namespaceFinalizer: 'svc',
  clusterName: 'svc',
  rootCaConfigMap: 'svc-root-ca.crt',
  signerNames: {
    apiserverClient: 'svc.io/svc-apiserver-client',
    apiserverClientNodeAgent: 'svc.io/svc-apiserver-client-svclet',
    nodeAgentServing: 'svc.io/svclet-serving',
    legacyUnknown: 'svc.io/legacy-unknown',
  },
};

const KUBERNETES: Naming = {
  ...base,
  scheme: 'kubernetes',
  groupSuffix: 'k8s.io',
  labelPrefix: 'kubernetes.io',
  systemNamespace: 'kube-system',
  publicNamespace: 'kube-public',
  nodeLeaseNamespace: 'kube-node-lease',
  protobufMediaType: 'application/vnd.kubernetes.protobuf',
  schemaExtensionPrefix: 'x-kubernetes-',
  lastAppliedAnnotation: 'kubectl.kubernetes.io/last-applied-configuration',
  execInfoEnv: 'KUBERNETES_EXEC_INFO',
  namespaceFinalizer: 'kubernetes',
  clusterName: 'kubernetes',
  rootCaConfigMap: 'kube-root-ca.crt',
  signerNames: {
    apiserverClient: 'kubernetes.io/kube-apiserver-client',
    apiserverClientNodeAgent: 'kubernetes.io/kube-apiserver-client-kubelet',
    nodeAgentServing: 'kubernetes.io/kubelet-serving',
    legacyUnknown: 'kubernetes.io/legacy-unknown',
  },
};

export const NAMINGS: Readonly<Record<NamingScheme, Naming>> = { svc: SVC, kubernetes: KUBERNETES };

let current: Naming = SVC;

export function useNaming(scheme: NamingScheme): Naming {
  current = NAMINGS[scheme];
  return current;
}

export function naming(): Naming {
  return current;
}

export function isNamingScheme(s: string): s is NamingScheme {
  return s === 'svc' || s === 'kubernetes';
}

/** A built-in group under the current suffix: `group('rbac.authorization')` → `rbac.authorization.svc.io`. */
export function group(prefix: string): string {
  return `${prefix}.${current.groupSuffix}`;
}

/** The `meta` group used by Table and PartialObjectMetadata. */
export function metaGroup(): string {
  return group('meta');
}

/** The four namespaces that exist after start-up and cannot be deleted. */
export function systemNamespaces(): string[] {
  return ['default', current.systemNamespace, current.publicNamespace, current.nodeLeaseNamespace];
}

/**
 * Spellings a server under the default naming also accepts in Accept/Content-Type so stock
 * clients work on the core group (e.g. Table with `g=meta.k8s.io`).
 */
export function acceptedGroupSuffixes(): string[] {
  return current.scheme === 'svc' ? [SVC.groupSuffix, KUBERNETES.groupSuffix] : [KUBERNETES.groupSuffix];
}

/**
 * The spellings of a built-in group a request body may use: `authentication.svc.io` and, under
 * the default naming, `authentication.k8s.io` (stock clients); the core group is only `''`.
 */
export function groupSpellings(g: string): string[] {
  const own = `.${current.groupSuffix}`;
  if (!g.endsWith(own)) return [g];
  const base = g.slice(0, -own.length);
  return acceptedGroupSuffixes().map((sfx) => `${base}.${sfx}`);
}

export function acceptedProtobufMediaTypes(): string[] {
  return current.scheme === 'svc'
    ? [SVC.protobufMediaType, KUBERNETES.protobufMediaType]
    : [KUBERNETES.protobufMediaType];
}

/** The label every namespace carries with its own name (`kubernetes.io/metadata.name` in Kubernetes). */
export function namespaceNameLabel(): string {
  return `${current.labelPrefix}/metadata.name`;
}

/** Annotation kubectl's server-side list watch uses to mark the end of initial events. */
export function initialEventsEndAnnotation(): string {
  return `${current.groupSuffix}/initial-events-end`;
}

/**
 * Prefixes under which OpenAPI operations carry `group-version-kind` and `action`: the
 * naming's own, plus Kubernetes' under the default naming so stock kubectl recognises the
 * server's field validation (as the server also accepts Kubernetes' media types).
 */
export function operationExtensionPrefixes(): string[] {
  return current.scheme === 'svc'
    ? [SVC.schemaExtensionPrefix, KUBERNETES.schemaExtensionPrefix]
    : [KUBERNETES.schemaExtensionPrefix];
}

/** Reverse-DNS namespace of OpenAPI definition names: `io.svc` or `io.k8s`. */
export function definitionNamespace(): string {
  return current.groupSuffix.split('.').reverse().join('.');
}

/**
 * Host name of the API's own Service in the `default` namespace (`svc.default.svc.cluster.local`,
 * `kubernetes.default.svc.cluster.local`); the default service-account token issuer is
 * `https://` + this host, as in Kubernetes.
 */
export function clusterServiceHost(n: Naming = current): string {
  return `${n.clusterName}.default.svc.cluster.local`;
}

export function defaultServiceAccountIssuer(n: Naming = current): string {
  return `https://${clusterServiceHost(n)}`;
}

/** Key of the private claim in service-account tokens (`svc.io`, `kubernetes.io`). */
export function serviceAccountClaimKey(): string {
  return current.labelPrefix;
}

/** Secret type of bootstrap tokens: `bootstrap.svc.io/token`, `bootstrap.kubernetes.io/token`. */
export function bootstrapTokenSecretType(): string {
  return `bootstrap.${current.labelPrefix}/token`;
}

/**
 * Legacy service-account token Secrets (Kubernetes' type `kubernetes.io/service-account-token`,
 * annotations `kubernetes.io/service-account.name` and `.uid`, labels
 * `kubernetes.io/legacy-token-last-used` and `kubernetes.io/legacy-token-invalid-since`):
 * `svc.io/service-account-token`, `svc.io/service-account.name`, ...
 */
export function serviceAccountTokenSecretKey(
  name:
    'type' | 'service-account.name' | 'service-account.uid' | 'legacy-token-last-used' | 'legacy-token-invalid-since',
): string {
  return name === 'type' ? `${current.labelPrefix}/service-account-token` : `${current.labelPrefix}/${name}`;
}

/**
 * The issuer and private claims of legacy (Secret-held) service-account tokens: Kubernetes'
 * `kubernetes/serviceaccount` issuer and `kubernetes.io/serviceaccount/<claim>` keys;
 * `svc/serviceaccount` and `svc.io/serviceaccount/<claim>` under the default naming.
 */
export function legacyServiceAccountToken(): {
  issuer: string;
  claim(name: 'namespace' | 'secret.name' | 'service-account.name' | 'service-account.uid'): string;
} {
  const product = current.scheme === 'svc' ? 'svc' : 'kubernetes';
  const prefix = current.labelPrefix;
  return { issuer: `${product}/serviceaccount`, claim: (name) => `${prefix}/serviceaccount/${name}` };
}

/**
 * The ConfigMap in the system namespace whose `since` date says from when the API servers
 * label legacy tokens with their last use (Kubernetes'
 * `kube-apiserver-legacy-service-account-token-tracking`): `svc-apiserver-legacy-service-account-token-tracking`.
 */
export function legacyTokenTrackingConfigMap(): { name: string; dataKey: string } {
  const server = current.scheme === 'svc' ? current.apiserverName : 'kube-apiserver';
  return { name: `${server}-legacy-service-account-token-tracking`, dataKey: 'since' };
}

/**
 * Audit annotations of a legacy token's use (Kubernetes' `authentication.k8s.io/legacy-token-autogenerated-secret`,
 * `-manual-secret`, `-invalidated`): `authentication.svc.io/legacy-token-...`.
 */
export function legacyTokenAuditAnnotation(name: 'autogenerated-secret' | 'manual-secret' | 'invalidated'): string {
  return `${group('authentication')}/legacy-token-${name}`;
}

/** A key of the user's `extra` set by the server's authenticators: `authentication.svc.io/pod-name`. */
export function authenticationExtraKey(name: string): string {
  return `authentication.${current.labelPrefix}/${name}`;
}

/**
 * Audit annotation keys the server sets itself (Kubernetes' `authorization.k8s.io/decision` and
 * `/reason`, `k8s.io/deprecated`, `audit.k8s.io/truncated`): `authorization.svc.io/decision`,
 * `svc.io/deprecated`, `audit.svc.io/truncated`.
 */
export function auditAnnotationKey(name: 'decision' | 'reason' | 'deprecated' | 'truncated'): string {
  switch (name) {
    case 'decision':
    case 'reason':
      return `${group('authorization')}/${name}`;
    case 'deprecated':
      return `${current.groupSuffix}/deprecated`;
    case 'truncated':
      return `${group('audit')}/truncated`;
  }
}

/** The node taints Kubernetes defines, by their last segment. */
export type NodeTaintName =
  | 'not-ready'
  | 'unreachable'
  | 'unschedulable'
  | 'memory-pressure'
  | 'disk-pressure'
  | 'pid-pressure'
  | 'network-unavailable'
  | 'out-of-service';

/** Key of a well-known node taint: `node.svc.io/unreachable`, `node.kubernetes.io/not-ready`. */
export function nodeTaintKey(name: NodeTaintName): string {
  return `node.${current.labelPrefix}/${name}`;
}

/**
 * Namespace annotations of the scheduling admission plugins (Kubernetes' `scheduler.alpha.kubernetes.io/...`):
 * `scheduler.alpha.svc.io/node-selector` (PodNodeSelector), `.../defaultTolerations` and
 * `.../tolerationsWhitelist` (PodTolerationRestriction).
 */
export function schedulerNamespaceAnnotation(
  name: 'node-selector' | 'defaultTolerations' | 'tolerationsWhitelist',
): string {
  return `scheduler.alpha.${current.labelPrefix}/${name}`;
}

/**
 * Keys of the ImagePolicyWebhook admission plugin (Kubernetes' `*.image-policy.k8s.io/*`): what a pod
 * annotation's key contains to be sent in an ImageReview (`.image-policy.svc.io/`), the prefix of
 * the plugin's audit annotations (`imagepolicywebhook.image-policy.svc.io/`), and the pod
 * annotation set when the plugin failed open (`alpha.image-policy.svc.io/failed-open`).
 */
export function imagePolicyKey(name: 'annotation-infix' | 'audit-prefix' | 'failed-open'): string {
  const domain = `image-policy.${current.groupSuffix}`;
  switch (name) {
    case 'annotation-infix':
      return `.${domain}/`;
    case 'audit-prefix':
      return `imagepolicywebhook.${domain}/`;
    case 'failed-open':
      return `alpha.${domain}/failed-open`;
  }
}

/**
 * Prefix of the resource names the project reserves (Kubernetes' `kubernetes.io/`): `svc.io/`.
 * Names without a prefix are native too; others are extended resources.
 */
export function nativeResourcePrefix(): string {
  return `${current.labelPrefix}/`;
}

/** The label a Deployment adds to its ReplicaSets' selector and template (Kubernetes' spelling, no prefix). */
export function podTemplateHashLabel(): string {
  return 'pod-template-hash';
}

/**
 * Annotations the deployment controller keeps on Deployments and their ReplicaSets:
 * `deployment.svc.io/revision`, `.../revision-history`, `.../desired-replicas`, `.../max-replicas`.
 */
export function deploymentAnnotation(
  name: 'revision' | 'revision-history' | 'desired-replicas' | 'max-replicas',
): string {
  return `deployment.${current.labelPrefix}/${name}`;
}

/** Pod annotation ranking pods for scale-down (lower cost goes first): `controller.svc.io/pod-deletion-cost`. */
export function podDeletionCostAnnotation(): string {
  return `controller.${current.labelPrefix}/pod-deletion-cost`;
}

/**
 * Node annotation the ttl controller sets (Kubernetes' `node.alpha.kubernetes.io/ttl`): how many
 * seconds a node agent may cache the objects it reads, by cluster size: `node.alpha.svc.io/ttl`.
 */
export function nodeTtlAnnotation(): string {
  return `node.alpha.${current.labelPrefix}/ttl`;
}

/**
 * The annotation a leader-election lock on an Endpoints or ConfigMap carries (Kubernetes'
 * `control-plane.alpha.kubernetes.io/leader`): `control-plane.alpha.svc.io/leader`.
 */
export function leaderElectionAnnotation(): string {
  return `control-plane.alpha.${current.labelPrefix}/leader`;
}

/** Where a pod finds its service-account token, CA and namespace: `/var/run/secrets/svc.io/serviceaccount`. */
export function serviceAccountMountPath(): string {
  return `/var/run/secrets/${current.labelPrefix}/serviceaccount`;
}

/** Prefix of the Pod Security labels and audit annotations: `pod-security.svc.io` (`pod-security.kubernetes.io`). */
export function podSecurityLabelPrefix(): string {
  return `pod-security.${current.labelPrefix}`;
}

/** Prefix of the projected volume the ServiceAccount admission plugin adds: `svc-api-access` (`kube-api-access`). */
export function serviceAccountVolumePrefix(): string {
  return `${current.scheme === 'svc' ? 'svc' : 'kube'}-api-access`;
}

/** The annotation LimitRanger sets on pods it gave defaults: `svc.io/limit-ranger` (`kubernetes.io/limit-ranger`). */
export function limitRangerAnnotation(): string {
  return `${current.labelPrefix}/limit-ranger`;
}

/**
 * Pod annotations of the older security APIs Pod Security still reads, and the ServiceAccount
 * annotation that limits a pod to the account's secrets: `container.apparmor.security.beta.svc.io/`,
 * `seccomp.security.alpha.svc.io/pod`, `container.seccomp.security.alpha.svc.io/`, `svc.io/enforce-mountable-secrets`.
 */
export function securityAnnotationKey(
  name: 'apparmor-container-prefix' | 'seccomp-pod' | 'seccomp-container-prefix' | 'enforce-mountable-secrets',
): string {
  const p = current.labelPrefix;
  switch (name) {
    case 'apparmor-container-prefix':
      return `container.apparmor.security.beta.${p}/`;
    case 'seccomp-pod':
      return `seccomp.security.alpha.${p}/pod`;
    case 'seccomp-container-prefix':
      return `container.seccomp.security.alpha.${p}/`;
    case 'enforce-mountable-secrets':
      return `${p}/enforce-mountable-secrets`;
  }
}

/** The environment variables that tell a pod where the API server is: `SVC_SERVICE_HOST`/`_PORT` (`KUBERNETES_...`). */
export function apiServiceEnv(): { host: string; port: string } {
  const prefix = current.scheme === 'svc' ? 'SVC' : 'KUBERNETES';
  return { host: `${prefix}_SERVICE_HOST`, port: `${prefix}_SERVICE_PORT` };
}

/**
 * Annotations the node agent puts on static pods and their mirror pods (Kubernetes'
 * `kubernetes.io/config.*`): `config.source` (file, http, api), `config.hash` (the static
 * pod's uid), `config.mirror` (on the mirror pod: the static pod's hash), `config.seen`.
 */
export function podConfigAnnotation(name: 'source' | 'hash' | 'mirror' | 'seen'): string {
  return `${current.labelPrefix}/config.${name}`;
}

/**
 * Labels and annotations the node agent puts on the CRI sandboxes and containers it creates
 * (Kubernetes' `io.kubernetes.pod.uid`, `io.kubernetes.container.restartCount`...):
 * `io.svc.pod.uid` under the default naming. It touches only what carries `pod.uid`.
 */
export function criLabel(
  name:
    | 'pod.name'
    | 'pod.namespace'
    | 'pod.uid'
    | 'container.name'
    | 'container.hash'
    | 'container.restartCount'
    | 'container.terminationMessagePath'
    | 'pod.terminationGracePeriod',
): string {
  return `${current.labelPrefix.split('.').reverse().join('.')}.${name}`;
}

/** Labels the node agent puts on its Node (Kubernetes' `kubernetes.io/hostname`, `/os`, `/arch`): `svc.io/hostname`. */
export function nodeLabelKey(name: 'hostname' | 'os' | 'arch'): string {
  return `${current.labelPrefix}/${name}`;
}

/**
 * `apiVersion` and `kind` of the node agent's configuration file (Kubernetes'
 * `kubelet.config.k8s.io/v1beta1` `KubeletConfiguration`): `svclet.config.svc.io/v1beta1`, `SvcletConfiguration`.
 */
export function nodeAgentConfigType(): { apiVersion: string; kind: string } {
  const agent = current.nodeAgentName;
  return {
    apiVersion: `${agent}.config.${current.groupSuffix}/v1beta1`,
    kind: `${agent.charAt(0).toUpperCase()}${agent.slice(1)}Configuration`,
  };
}

/**
 * The cluster bootstrap tool, `svcadm` under both namings (as `svclet` and `svcctl`): it names
 * the default node-token group `system:bootstrappers:svcadm:default-node-token` and the RBAC
 * objects it creates (`svcadm:...`), where Kubernetes says `kubeadm`.
 */
export function bootstrapToolName(): string {
  return 'svcadm';
}

/**
 * Start of every value the storage encrypted at rest: `svc:enc:` (Kubernetes' `k8s:enc:`),
 * followed by `<provider>:v1:<key name>:` (`kms:v2:<plugin name>:` for KMS v2).
 */
export function encryptedValuePrefix(): string {
  return `${current.scheme === 'svc' ? 'svc' : 'k8s'}:enc:`;
}

/**
 * Annotations of the storage and networking classes and claims (Kubernetes'
 * `storageclass.kubernetes.io/is-default-class`, its `storageclass.beta.` form, the old
 * `volume.beta.kubernetes.io/storage-class` of claims and volumes, `ingressclass.kubernetes.io/is-default-class`
 * and the old `kubernetes.io/ingress.class` of Ingresses): `storageclass.svc.io/is-default-class`...
 */
export function classAnnotationKey(
  name:
    | 'storage-class-is-default'
    | 'beta-storage-class-is-default'
    | 'beta-storage-class'
    | 'ingress-class-is-default'
    | 'ingress-class',
): string {
  const p = current.labelPrefix;
  switch (name) {
    case 'storage-class-is-default':
      return `storageclass.${p}/is-default-class`;
    case 'beta-storage-class-is-default':
      return `storageclass.beta.${p}/is-default-class`;
    case 'beta-storage-class':
      return `volume.beta.${p}/storage-class`;
    case 'ingress-class-is-default':
      return `ingressclass.${p}/is-default-class`;
    case 'ingress-class':
      return `${p}/ingress.class`;
  }
}

/** The finalizers StorageObjectInUseProtection adds: `svc.io/pvc-protection`, `svc.io/pv-protection`. */
export function storageProtectionFinalizer(kind: 'pvc' | 'pv'): string {
  return `${current.labelPrefix}/${kind}-protection`;
}

/**
 * The API server's own Service in `default` (Kubernetes' `kubernetes` Service): `svc`, or
 * `kubernetes` under `--naming=kubernetes`; its Endpoints and EndpointSlice carry the same name.
 */
export function apiServiceName(n: Naming = current): string {
  return n.clusterName;
}

/**
 * The label of the API servers' identity Leases in the system namespace (Kubernetes'
 * `apiserver.kubernetes.io/identity=kube-apiserver`): `apiserver.svc.io/identity=svc-apiserver`.
 * The value also goes into the hash that names each lease.
 */
export function apiServerIdentityLabel(): { key: string; value: string } {
  return {
    key: `apiserver.${current.labelPrefix}/identity`,
    value: current.scheme === 'svc' ? current.apiserverName : 'kube-apiserver',
  };
}

/**
 * The identity Lease's annotation with the address peers proxy to (Kubernetes'
 * `kubernetes.io/peer-advertise-address`): `svc.io/peer-advertise-address`.
 */
export function peerAdvertiseAddressAnnotation(): string {
  return `${current.labelPrefix}/peer-advertise-address`;
}

/**
 * Labels of EndpointSlices (Kubernetes' `kubernetes.io/service-name`,
 * `endpointslice.kubernetes.io/managed-by`, `endpointslice.kubernetes.io/skip-mirror`):
 * `svc.io/service-name`, `endpointslice.svc.io/managed-by`, `endpointslice.svc.io/skip-mirror`.
 */
export function endpointSliceLabel(name: 'service-name' | 'managed-by' | 'skip-mirror'): string {
  return name === 'service-name'
    ? `${current.labelPrefix}/service-name`
    : `endpointslice.${current.labelPrefix}/${name}`;
}

/**
 * Keys the endpoints controllers write (Kubernetes' `endpoints.kubernetes.io/last-change-trigger-time`,
 * `service.kubernetes.io/headless`, and the managed-by values of the EndpointSlice controller
 * `endpointslice-controller.k8s.io` and of the mirroring controller
 * `endpointslicemirroring-controller.k8s.io`): `endpoints.svc.io/...`, `service.svc.io/headless`,
 * `endpointslice-controller.svc.io`, `endpointslicemirroring-controller.svc.io`.
 */
export function endpointsControllerKey(
  name: 'trigger-time' | 'headless' | 'slice-manager' | 'mirroring-manager',
): string {
  if (name === 'trigger-time') return `endpoints.${current.labelPrefix}/last-change-trigger-time`;
  if (name === 'headless') return `service.${current.labelPrefix}/headless`;
  if (name === 'mirroring-manager') return `endpointslicemirroring-controller.${current.groupSuffix}`;
  return `endpointslice-controller.${current.groupSuffix}`;
}

/**
 * Priority and fairness's annotation on its configuration objects (Kubernetes'
 * `apf.kubernetes.io/autoupdate-spec`): `apf.svc.io/autoupdate-spec`. `true` lets the server
 * keep a suggested object's spec up to date; `false` leaves it as the admin wrote it.
 */
export function apfAutoUpdateAnnotation(): string {
  return `apf.${current.labelPrefix}/autoupdate-spec`;
}

/**
 * The response headers naming the UIDs a request was classified by (Kubernetes'
 * `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`): `X-Svc-PF-...`.
 */
export function apfResponseHeaders(): { flowSchemaUid: string; priorityLevelUid: string } {
  const product = current.scheme === 'svc' ? 'Svc' : 'Kubernetes';
  return {
    flowSchemaUid: `X-${product}-PF-FlowSchema-UID`,
    priorityLevelUid: `X-${product}-PF-PriorityLevel-UID`,
  };
}

/**
 * Kubernetes' streaming subprotocols (exec and attach: remotecommand over WebSocket or SPDY;
 * port-forward). Wire names that stock clients send whatever the server's naming, so they do
 * not switch with it.
 */
export const STREAMING_PROTOCOLS = {
  remoteCommandV5: 'v5.channel.k8s.io',
  remoteCommandV4: 'v4.channel.k8s.io',
  remoteCommandV3: 'v3.channel.k8s.io',
  remoteCommandV2: 'v2.channel.k8s.io',
  portForward: 'portforward.k8s.io',
  /** The channel protocol in base64 text messages (port-forward over plain WebSocket). */
  channelBase64V4: 'v4.base64.channel.k8s.io',
} as const;

/**
 * Keys of the batch controllers (Kubernetes' `batch.kubernetes.io/...`): the Job's generated selector
 * and pod labels `batch.svc.io/controller-uid` and `batch.svc.io/job-name` (pods also carry the
 * unprefixed `controller-uid` and `job-name`, as Kubernetes), the Indexed completion annotation and
 * label `batch.svc.io/job-completion-index`, the pod finalizer `batch.svc.io/job-tracking`, and the
 * CronJob's `batch.svc.io/cronjob-scheduled-timestamp` annotation on the Jobs it creates.
 */
export function batchKey(
  name:
    | 'controller-uid'
    | 'job-name'
    | 'job-completion-index'
    | 'job-tracking'
    | 'job-index-failure-count'
    | 'job-index-ignored-failure-count'
    | 'cronjob-scheduled-timestamp',
): string {
  return `batch.${current.labelPrefix}/${name}`;
}

/**
 * Labels the statefulset controller puts on its pods (Kubernetes' `statefulset.kubernetes.io/pod-name`
 * and `apps.kubernetes.io/pod-index`): `statefulset.svc.io/pod-name` and `apps.svc.io/pod-index`.
 */
export function statefulSetPodLabel(name: 'pod-name' | 'pod-index'): string {
  return name === 'pod-name' ? `statefulset.${current.labelPrefix}/pod-name` : `apps.${current.labelPrefix}/pod-index`;
}
