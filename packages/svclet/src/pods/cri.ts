/**
 * The CRI (runtime.v1) requests and answers the pod side uses, as plain objects with
 * lowerCamelCase field names, int64 as number (timestamps in nanoseconds) and enums as their
 * names: the shape `connectCri()` of `@svc/runtime` (proto-loader with keepCase false, longs
 * Number, enums String, defaults true) hands out. Declared structurally, as methods, so any
 * client with these RPCs fits.
 */

export interface KeyValue {
  key: string;
  value: string;
}

export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
  userSpecifiedImage?: string;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface PortMapping {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  containerPort?: number;
  hostPort?: number;
  hostIp?: string;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  portMappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerStateName = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface PodSandbox {
  id: string;
  metadata?: PodSandboxMetadata | null;
  state: SandboxState | string;
  createdAt?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface PodSandboxStatus extends PodSandbox {
  network?: { ip?: string; additionalIps?: Array<{ ip: string }> } | null;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Relative to the sandbox's `logDirectory`. */
  logPath?: string;
  /** Host paths (the pod's volumes) the runtime makes appear at `containerPath` in the container. */
  mounts?: Array<{ containerPath: string; hostPath: string; readonly: boolean }>;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  /** The user, group and supplementary groups the container runs as (`linux.securityContext`). */
  linux?: {
    securityContext: {
      runAsUser?: { value: number };
      runAsGroup?: { value: number };
      supplementalGroups: number[];
    };
  };
}

export interface CriContainer {
  id: string;
  podSandboxId: string;
  metadata?: { name: string; attempt: number } | null;
  image?: ImageSpec | null;
  imageRef?: string;
  state: ContainerStateName | string;
  createdAt?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface CriContainerStatus {
  id: string;
  metadata?: { name: string; attempt: number } | null;
  state: ContainerStateName | string;
  createdAt?: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  image?: ImageSpec | null;
  imageRef?: string;
  reason?: string;
  message?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  logPath?: string;
}

/** RuntimeService: the RPCs the pod side calls. */
export interface CriRuntimeService {
  version(req: { version?: string }): Promise<{ runtimeName?: string; runtimeVersion?: string }>;
  runPodSandbox(req: { config: PodSandboxConfig; runtimeHandler?: string }): Promise<{ podSandboxId: string }>;
  stopPodSandbox(req: { podSandboxId: string }): Promise<unknown>;
  removePodSandbox(req: { podSandboxId: string }): Promise<unknown>;
  podSandboxStatus(req: { podSandboxId: string; verbose?: boolean }): Promise<{ status?: PodSandboxStatus | null }>;
  listPodSandbox(req: {
    filter?: { id?: string; labelSelector?: Record<string, string> } | null;
  }): Promise<{ items?: PodSandbox[] }>;
  createContainer(req: {
    podSandboxId: string;
    config: ContainerConfig;
    sandboxConfig: PodSandboxConfig;
  }): Promise<{ containerId: string }>;
  startContainer(req: { containerId: string }): Promise<unknown>;
  /** Stops with `timeout` seconds of grace (TERM, then KILL at the deadline). */
  stopContainer(req: { containerId: string; timeout: number }): Promise<unknown>;
  removeContainer(req: { containerId: string }): Promise<unknown>;
  listContainers(req: {
    filter?: { id?: string; podSandboxId?: string; labelSelector?: Record<string, string> } | null;
  }): Promise<{ containers?: CriContainer[] }>;
  /** With `verbose`, `info.info` is the runtime's JSON (the svc-runtime's carries the container's `pid`). */
  containerStatus(req: {
    containerId: string;
    verbose?: boolean;
  }): Promise<{ status?: CriContainerStatus | null; info?: Record<string, string> }>;
  execSync(req: {
    containerId: string;
    cmd: string[];
    timeout: number;
  }): Promise<{ stdout?: Uint8Array | string; stderr?: Uint8Array | string; exitCode?: number }>;
  /** Exec, Attach and PortForward answer a URL of the runtime's streaming server. */
  exec(req: {
    containerId: string;
    cmd: string[];
    tty: boolean;
    stdin: boolean;
    stdout: boolean;
    stderr: boolean;
  }): Promise<{ url: string }>;
  attach(req: {
    containerId: string;
    tty: boolean;
    stdin: boolean;
    stdout: boolean;
    stderr: boolean;
  }): Promise<{ url: string }>;
  portForward(req: { podSandboxId: string; port: number[] }): Promise<{ url: string }>;
}

/** ImageService: the RPCs the pod side calls. */
export interface CriImageService {
  pullImage(req: { image: ImageSpec; sandboxConfig?: PodSandboxConfig }): Promise<{ imageRef: string }>;
  imageStatus(req: {
    image: ImageSpec;
    verbose?: boolean;
  }): Promise<{ image?: { id: string; uid?: { value: number } | null; username?: string } | null }>;
}

export interface CriClient {
  runtime: CriRuntimeService;
  image: CriImageService;
}

/** A CRI timestamp (ns since the epoch) in ms; 0 when unset. */
export function nsToMs(ns: number | undefined): number {
  return ns ? Math.floor(Number(ns) / 1e6) : 0;
}

/** The message of a gRPC error (`2 UNKNOWN: details` → `details`). */
export function criErrorMessage(e: unknown): string {
  const err = e as { details?: string; message?: string };
  return err.details || (err.message ?? String(e)).replace(/^\d+ [A-Z_]+: /, '');
}
