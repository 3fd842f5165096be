import type { TestApiServer } from './api-server.js';

/** Leader-election periods as the component flags spell them (`4s`, `500ms`). */
export interface LeaderElectionPeriods {
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
}

/**
 * The flags tests start a leader-elected component (controller manager, scheduler) with:
 * `server`'s admin svcconfig, 127.0.0.1:`port`, a certificate directory of its own, and the
 * given leader-election periods. Callers append their own flags after these (later ones win).
 */
export function componentTestArgs(o: {
  server: TestApiServer;
  port: number;
  certDir: string;
  leaderElection: LeaderElectionPeriods;
}): string[] {
  return [
    '--svcconfig',
    o.server.svcconfigPath,
    '--bind-address',
    '127.0.0.1',
    '--secure-port',
    String(o.port),
    '--cert-dir',
    o.certDir,
    '--leader-elect-lease-duration',
    o.leaderElection.leaseDuration,
    '--leader-elect-renew-deadline',
    o.leaderElection.renewDeadline,
    '--leader-elect-retry-period',
    o.leaderElection.retryPeriod,
  ];
}

/** Short periods for tests that hand the Lease from one component to another. */
export const QUICK_LEADER_ELECTION: LeaderElectionPeriods = {
  leaseDuration: '4s',
  renewDeadline: '3s',
  retryPeriod: '500ms',
};

/**
 * Kubernetes' default periods, for files that start one component for all their tests: the
 * first Lease is taken at once all the same, and a test worker's event loop held up for a few
 * seconds (a cold transform, a long GC) does not cost the component its Lease for the rest of
 * the file, as under QUICK_LEADER_ELECTION's 3 s renew deadline (the likely cause of a CI run
 * in which every case of one file waited in vain for its controllers).
 */
export const STEADY_LEADER_ELECTION: LeaderElectionPeriods = {
  leaseDuration: '15s',
  renewDeadline: '10s',
  retryPeriod: '2s',
};

/**
 * Says on stderr when a component started by a test loses its Lease (its loops stop then, and
 * the file's later waits time out with nothing else to say why), unless it was stopped.
 */
export function reportLostLease(name: string, c: { lostLease: Promise<void> }): void {
  const since = Date.now();
  void c.lostLease.then(() =>
    console.error(`${name} started by this test lost its Lease ${Date.now() - since} ms after it started`),
  );
}
