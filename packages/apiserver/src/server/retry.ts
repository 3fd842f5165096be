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
      await delay(Math.min(100 * 2 ** n, 2000), signal);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) {
      resolve();
      return;
    }
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
