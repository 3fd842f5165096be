import type { Registry } from 'prom-client';
import type { SecureServer } from './secure-serving.js';

/** A started control-plane component (controller manager, scheduler), as its binary and tests hold it. */
export interface RunningComponent {
  /** The secure port's server (absent with `--secure-port 0`). */
  server?: SecureServer;
  identity: string;
  /** What `/metrics` serves. */
  metrics: Registry;
  isLeader(): boolean;
  /** Resolves when the lease was lost (the process should exit so a supervisor restarts it). */
  lostLease: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The handle of a component whose work runs under leader election (`@svc/client`'s
 * `runLeaderElected` result fits `run`): shutdown stops the work (releasing the lease), then
 * the secure port, then the API client.
 */
export function runningComponent(o: {
  server?: SecureServer;
  identity: string;
  metrics: Registry;
  close(): void;
  run: { isLeader(): boolean; lostLease: Promise<void>; stop(): Promise<void> };
}): RunningComponent {
  return {
    server: o.server,
    identity: o.identity,
    metrics: o.metrics,
    isLeader: () => o.run.isLeader(),
    lostLease: o.run.lostLease,
    shutdown: async () => {
      await o.run.stop();
      await o.server?.close();
      o.close();
    },
  };
}
