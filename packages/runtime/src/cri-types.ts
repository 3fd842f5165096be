/**
 * The CRI messages of proto/api.proto as @grpc/proto-loader decodes them with
 * `CRI_LOADER_OPTIONS`: lowerCamelCase fields, int64 as number (nanosecond timestamps lose
 * sub-microsecond precision), enums as their names, every scalar, list and map present
 * (defaults), absent sub-messages as null, bytes as Buffer. Requests are passed as
 * `CriInput<...>`: any field may be left out.
 */

/** A request as a caller writes it: every field optional, recursively. */
export type CriInput<T> = T extends string | number | boolean | Buffer
  ? T
  : T extends (infer U)[]
    ? CriInput<U>[]
    : T extends object
      ? { [K in keyof T]?: CriInput<NonNullable<T[K]>> | null }
      : T;

export type Labels = Record<string, string>;

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

export interface VersionRequest {
  version: string;
}
export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}
export interface PortMapping {
  protocol: Protocol;
  containerPort: number;
  hostPort: number;
  hostIp: string;
}
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  selinuxRelabel: boolean;
  propagation: MountPropagation;
}
export interface Int64Value {
  value: number;
}
export interface UInt64Value {
  value: number;
}
export interface KeyValue {
  key: string;
  value: string;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}
export interface PodSandboxConfig {
  metadata: PodSandboxMetadata | null;
  hostname: string;
  logDirectory: string;
  dnsConfig: DNSConfig | null;
  portMappings: PortMapping[];
  labels: Labels;
  annotations: Labels;
}
export interface RunPodSandboxRequest {
  config: PodSandboxConfig | null;
  runtimeHandler: string;
}
export interface RunPodSandboxResponse {
  podSandboxId: string;
}
export interface StopPodSandboxRequest {
  podSandboxId: string;
}
export interface RemovePodSandboxRequest {
  podSandboxId: string;
}
export type Empty = Record<string, never>;

export interface PodIP {
  ip: string;
}
export interface PodSandboxNetworkStatus {
  ip: string;
  additionalIps: PodIP[];
}
export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: number;
  network: PodSandboxNetworkStatus | null;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}
export interface PodSandboxStatusRequest {
  podSandboxId: string;
  verbose: boolean;
}
export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: Labels;
  containersStatuses: ContainerStatus[];
  timestamp: number;
}

export interface PodSandboxFilter {
  id: string;
  state: { state: PodSandboxState } | null;
  labelSelector: Labels;
}
export interface ListPodSandboxRequest {
  filter: PodSandboxFilter | null;
}
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}
export interface ListPodSandboxResponse {
  items: PodSandbox[];
}

export interface ImageSpec {
  image: string;
  annotations: Labels;
  userSpecifiedImage: string;
  runtimeHandler: string;
  imageRef: string;
}
export interface ContainerMetadata {
  name: string;
  attempt: number;
}
export interface ContainerConfig {
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValue[];
  mounts: Mount[];
  labels: Labels;
  annotations: Labels;
  logPath: string;
  stdin: boolean;
  stdinOnce: boolean;
  tty: boolean;
  linux: LinuxContainerConfig | null;
}
export interface LinuxContainerConfig {
  securityContext: LinuxContainerSecurityContext | null;
}
export interface LinuxContainerSecurityContext {
  runAsUser: Int64Value | null;
  runAsUsername: string;
  supplementalGroups: number[];
  runAsGroup: Int64Value | null;
}
export interface CreateContainerRequest {
  podSandboxId: string;
  config: ContainerConfig | null;
  sandboxConfig: PodSandboxConfig | null;
}
export interface CreateContainerResponse {
  containerId: string;
}
export interface StartContainerRequest {
  containerId: string;
}
/** `timeout` in seconds; 0 kills at once. */
export interface StopContainerRequest {
  containerId: string;
  timeout: number;
}
export interface RemoveContainerRequest {
  containerId: string;
}
export interface ReopenContainerLogRequest {
  containerId: string;
}

export interface ContainerFilter {
  id: string;
  state: { state: ContainerState } | null;
  podSandboxId: string;
  labelSelector: Labels;
}
export interface ListContainersRequest {
  filter: ContainerFilter | null;
}
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  imageId: string;
}
export interface ListContainersResponse {
  containers: Container[];
}

export interface ContainerStatusRequest {
  containerId: string;
  verbose: boolean;
}
/** Timestamps in nanoseconds since the epoch, 0 when not reached. */
export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata | null;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: ImageSpec | null;
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  logPath: string;
  imageId: string;
}
/** With `verbose`, `info.info` is JSON with at least `pid` (the container's main process). */
export interface ContainerStatusResponse {
  status: ContainerStatus | null;
  info: Labels;
}

/** `timeout` in seconds; 0 runs until the command ends. */
export interface ExecSyncRequest {
  containerId: string;
  cmd: string[];
  timeout: number;
}
export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}
export interface AttachRequest {
  containerId: string;
  stdin: boolean;
  tty: boolean;
  stdout: boolean;
  stderr: boolean;
}
export interface PortForwardRequest {
  podSandboxId: string;
  port: number[];
}
/** Exec, Attach and PortForward answer where to stream: a one-time URL of the runtime's streaming server. */
export interface StreamingResponse {
  url: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}
export interface StatusRequest {
  verbose: boolean;
}
export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: Labels;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  uid: Int64Value | null;
  username: string;
  spec: ImageSpec | null;
  pinned: boolean;
}
export interface ListImagesRequest {
  filter: { image: ImageSpec | null } | null;
}
export interface ListImagesResponse {
  images: Image[];
}
export interface ImageStatusRequest {
  image: ImageSpec | null;
  verbose: boolean;
}
/** `image` is null when the image is not present (not an error, as in the CRI). */
export interface ImageStatusResponse {
  image: Image | null;
  info: Labels;
}
export interface AuthConfig {
  username: string;
  password: string;
  auth: string;
  serverAddress: string;
  identityToken: string;
  registryToken: string;
}
export interface PullImageRequest {
  image: ImageSpec | null;
  auth: AuthConfig | null;
  sandboxConfig: PodSandboxConfig | null;
}
export interface PullImageResponse {
  imageRef: string;
}
export interface RemoveImageRequest {
  image: ImageSpec | null;
}
export interface FilesystemUsage {
  timestamp: number;
  fsId: { mountpoint: string } | null;
  usedBytes: UInt64Value | null;
  inodesUsed: UInt64Value | null;
}
export interface ImageFsInfoResponse {
  imageFilesystems: FilesystemUsage[];
  containerFilesystems: FilesystemUsage[];
}

/** CRI RuntimeService, one promise-returning method per RPC. */
export interface RuntimeServiceApi {
  version(req: CriInput<VersionRequest>): Promise<VersionResponse>;
  runPodSandbox(req: CriInput<RunPodSandboxRequest>): Promise<RunPodSandboxResponse>;
  stopPodSandbox(req: CriInput<StopPodSandboxRequest>): Promise<Empty>;
  removePodSandbox(req: CriInput<RemovePodSandboxRequest>): Promise<Empty>;
  podSandboxStatus(req: CriInput<PodSandboxStatusRequest>): Promise<PodSandboxStatusResponse>;
  listPodSandbox(req: CriInput<ListPodSandboxRequest>): Promise<ListPodSandboxResponse>;
  createContainer(req: CriInput<CreateContainerRequest>): Promise<CreateContainerResponse>;
  startContainer(req: CriInput<StartContainerRequest>): Promise<Empty>;
  stopContainer(req: CriInput<StopContainerRequest>): Promise<Empty>;
  removeContainer(req: CriInput<RemoveContainerRequest>): Promise<Empty>;
  listContainers(req: CriInput<ListContainersRequest>): Promise<ListContainersResponse>;
  containerStatus(req: CriInput<ContainerStatusRequest>): Promise<ContainerStatusResponse>;
  reopenContainerLog(req: CriInput<ReopenContainerLogRequest>): Promise<Empty>;
  execSync(req: CriInput<ExecSyncRequest>): Promise<ExecSyncResponse>;
  exec(req: CriInput<ExecRequest>): Promise<StreamingResponse>;
  attach(req: CriInput<AttachRequest>): Promise<StreamingResponse>;
  portForward(req: CriInput<PortForwardRequest>): Promise<StreamingResponse>;
  status(req: CriInput<StatusRequest>): Promise<StatusResponse>;
}

/** CRI ImageService, one promise-returning method per RPC. */
export interface ImageServiceApi {
  listImages(req: CriInput<ListImagesRequest>): Promise<ListImagesResponse>;
  imageStatus(req: CriInput<ImageStatusRequest>): Promise<ImageStatusResponse>;
  pullImage(req: CriInput<PullImageRequest>): Promise<PullImageResponse>;
  removeImage(req: CriInput<RemoveImageRequest>): Promise<Empty>;
  imageFsInfo(req: CriInput<Empty>): Promise<ImageFsInfoResponse>;
}
