/** Node's timers fire at once (with a TimeoutOverflowWarning) beyond this many ms (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves after `ms` (any length: longer waits run as a chain of timers), or at once when
 * `signal` fires (never rejects).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const until = Date.now() + Math.max(0, ms);
    let t: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const arm = (): void => {
      const left = until - Date.now();
      t = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(done, Math.max(0, left));
    };
    arm();
    signal?.addEventListener('abort', done, { once: true });
  });
}
