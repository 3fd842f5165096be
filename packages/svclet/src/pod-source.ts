import type { ApiObject } from '@svc/api';
import type { RestClient } from '@svc/client';
import type { Logger } from '@svc/component-base';
import type { Registry } from 'prom-client';
import type { SvcletConfiguration } from './configuration.js';
import type { ContainerUsage } from './resource-metrics.js';

// The seams between the node side (registration, heartbeat, server, certificates) and the pod
// side (pod workers over CRI, probes, pod status, static and mirror pods).

/**
 * The two CRI RuntimeService calls the node side makes (`Version` for nodeInfo, `Status` for
 * the Ready condition); the runtime client of `connectCri()` fits structurally.
 */
export interface RuntimeStatusService {
  version(req: { version?: string }): Promise<{ runtimeName?: string; runtimeVersion?: string }>;
  status(req: { verbose?: boolean }): Promise<{ status?: { conditions?: RuntimeCondition[] } | null }>;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason?: string;
  message?: string;
}

/** Where a container's CRI-format log files are (`<timestamp> <stream> <F|P> <text>` lines). */
export interface ContainerLogFiles {
  /** The current (or last) instance's log file; absent before the container first started. */
  current?: string;
  /** The instance before it (`previous=true`); absent when it never restarted. */
  previous?: string;
  /** Whether the current instance still runs: `follow` ends once this turns false. Absent = running. */
  running?: boolean;
}

/** What `/exec`, `/attach` and `/portForward` ask the runtime for (Kubernetes' query parameters). */
export type StreamRequest =
  | {
      kind: 'exec' | 'attach';
      namespace: string;
      pod: string;
      container: string;
      /** exec only. */
      command: string[];
      stdin: boolean;
      stdout: boolean;
      stderr: boolean;
      tty: boolean;
    }
  | { kind: 'portforward'; namespace: string; pod: string; ports: number[] };

/** A stream request refused, with the HTTP code the svclet answers. */
export class StreamRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** What the svclet's HTTPS API serves from the pod side. Calls are synchronous reads of its state. */
export interface PodSource {
  /** The pods this node runs now (API and static pods), as `/pods` lists them. */
  pods(): ApiObject[];
  /**
   * The log files of one container of a pod `pods()` returns; undefined when the pod has no
   * such container (→ 404). Called again while following, to see `running` and rotations.
   */
  containerLogFiles(namespace: string, pod: string, container: string): ContainerLogFiles | undefined;
  /**
   * The runtime's one-time URL for an exec, attach or port-forward (CRI Exec, Attach,
   * PortForward); rejects with a `StreamRequestError` for a missing pod or container.
   */
  streamUrl?(r: StreamRequest): Promise<string>;
  /**
   * When the pod workers' sync loop last started an iteration (ms since the epoch; 0 = not yet):
   * the `syncloop` health check fails once that is longer ago than max(2 × syncFrequency, 5m).
   */
  lastSyncLoop?(): number;
  /**
   * CPU and memory of the running containers (`/metrics/resource`); absent: the node reports
   * none of its own (simulated nodes run no processes).
   */
  containerUsage?(): Promise<{ containers: ContainerUsage[]; scrapeError: boolean }>;
}

/** What the node side hands the pod side when it starts it. */
export interface PodSideContext {
  nodeName: string;
  /** The node's IPs (`status.hostIP(s)` of pods). */
  hostIps: string[];
  config: SvcletConfiguration;
  /** `--root-dir`. */
  rootDir: string;
  /** API-server mode only (absent in standalone mode): rate limited, follows certificate rotation. */
  client?: RestClient;
  /**
   * Resolves with the Node once it is registered (API-server mode; mirror pods take its uid as
   * owner); never resolves in standalone mode or with `registerNode: false`.
   */
  registeredNode: Promise<ApiObject>;
  logger: Logger;
  /** The svclet's metrics registry (`/metrics`). */
  metrics: Registry;
  /** Fires at shutdown: the pod side stops its loops (containers keep running). */
  signal: AbortSignal;
}

/** A running pod side: its state for the server, and a promise that settles when it stopped. */
export interface PodSide extends PodSource {
  stopped: Promise<void>;
}

/** Starts the pod side; the svclet calls it once at start-up, after the node side is set up. */
export type StartPodSide = (ctx: PodSideContext) => Promise<PodSide>;

/** The pod side of a svclet that runs no pods (tests of the node side). */
export const NO_PODS: PodSide = {
  pods: () => [],
  containerLogFiles: () => undefined,
  stopped: Promise.resolve(),
};
