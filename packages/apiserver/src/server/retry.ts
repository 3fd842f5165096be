import { sleep } from '@svc/machinery';

/**
 * Runs `attempt` until it succeeds or `signal` aborts, waiting 100 ms, 200 ms, ... (at most
 * 2 s) between tries; `onRetry` hears each failure. Resolves either way.
 */
export async function retryUntil(
  signal: AbortSignal,
  attempt: () => Promise<void>,
  onRetry: (e: unknown, attempt: number) => void,
): Promise<void> {
  for (let n = 0; !signal.aborted; n++) {
    try {
      await attempt();
      return;
    } catch (e) {
      onRetry(e, n);
      await sleep(Math.min(100 * 2 ** n, 2000), signal);
    }
  }
}
