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

/** Short periods for tests that start one component and do not exercise handovers. */
export const QUICK_LEADER_ELECTION: LeaderElectionPeriods = {
  leaseDuration: '4s',
  renewDeadline: '3s',
  retryPeriod: '500ms',
};
