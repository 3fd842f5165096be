import type { RestClient } from './rest-client.js';
import { LeaderElector } from './leader-election.js';
import { SvcconfigError, loadSvcconfig, inClusterConfig, type ClientConfig } from './svcconfig.js';
import type { ClientLogger } from './logger.js';

/** A component's `--leader-elect*` settings (durations in ms). */
export interface LeaderElectionSettings {
  /** false: the work runs at once, without a Lease. */
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Only `leases` is implemented; anything else is logged and treated as `leases`. */
  resourceLock?: string;
}

export interface LeaderElectedOptions {
  client: RestClient;
  settings: LeaderElectionSettings;
  /** This candidate's identity (Kubernetes: `<hostname>_<uuid>`). */
  identity: string;
  logger: ClientLogger;
  /** Told when leading starts (true) and ends (false): the `leader_election_master_status` gauge. */
  onLeading?(leading: boolean): void;
  /** The component's work while leading; `signal` fires when leadership ends or on `stop`. */
  run(signal: AbortSignal): Promise<void>;
}

export interface LeaderElectedRun {
  isLeader(): boolean;
  /** Resolves when leadership was lost other than by `stop` (the process should exit 1 then). */
  lostLease: Promise<void>;
  /**
   * Kubernetes' `leaderElection` health check (present with leader election): fails when this
   * leader has not renewed its lease for the lease duration + 20 s.
   */
  healthCheck?: { name: string; check(): Promise<void> };
  /** Stops campaigning or leading (releasing the lease) and resolves when the work has ended. */
  stop(): Promise<void>;
}

/**
 * Runs a component's work under leader election the way every control-plane binary does:
 * the work runs only while this candidate holds the Lease; losing it aborts the work and
 * resolves `lostLease`. Without leader election the work starts at once.
 */
export function runLeaderElected(o: LeaderElectedOptions): LeaderElectedRun {
  const s = o.settings;
  const stopping = new AbortController();
  let resolveLost: () => void = () => undefined;
  const lostLease = new Promise<void>((resolve) => {
    resolveLost = resolve;
  });
  if (!s.leaderElect) {
    const running = o.run(stopping.signal);
    return {
      isLeader: () => true,
      lostLease,
      stop: async () => {
        stopping.abort();
        await running;
      },
    };
  }
  if (s.resourceLock && s.resourceLock !== 'leases')
    o.logger.warn('only the leases resource lock is implemented; using leases', { resourceLock: s.resourceLock });
  o.onLeading?.(false);
  const elector = new LeaderElector({
    client: o.client,
    namespace: s.leaseNamespace,
    name: s.leaseName,
    identity: o.identity,
    leaseDurationMs: s.leaseDurationMs,
    renewDeadlineMs: s.renewDeadlineMs,
    retryPeriodMs: s.retryPeriodMs,
    logger: o.logger,
    onStartedLeading: async (signal) => {
      o.onLeading?.(true);
      await o.run(signal);
    },
    onStoppedLeading: () => {
      o.onLeading?.(false);
      if (!stopping.signal.aborted) {
        o.logger.error('leaderelection lost', { identity: o.identity });
        resolveLost();
      }
    },
    onNewLeader: (holder) => o.logger.info('new leader elected', { identity: holder }),
  });
  const running = elector.run(stopping.signal);
  return {
    isLeader: () => elector.isLeader(),
    lostLease,
    healthCheck: {
      name: 'leaderElection',
      check: async () => {
        if (elector.isLeader() && Date.now() - elector.lastRenewed > s.leaseDurationMs + 20_000)
          throw new Error('the lease has not been renewed in time');
      },
    },
    stop: async () => {
      stopping.abort();
      await running;
    },
  };
}

/**
 * The API client configuration of a control-plane component: the svcconfig `file` or, with
 * none, the in-cluster configuration; `master` overrides the server. Throws `SvcconfigError`
 * naming `flag`.
 */
export function componentClientConfig(file: string | undefined, o: { master?: string; flag: string }): ClientConfig {
  try {
    const c = file ? loadSvcconfig(file) : inClusterConfig();
    return o.master ? { ...c, server: o.master } : c;
  } catch (e) {
    throw new SvcconfigError(`${o.flag}: ${(e as Error).message}`);
  }
}
