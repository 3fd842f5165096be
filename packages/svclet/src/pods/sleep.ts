import { sleep as machinerySleep } from '@svc/machinery';

/**
 * Resolves after `ms`, at once when `signal` fires, or when the `wake` function handed to
 * `onWake` is called (it is handed `undefined` again once the sleep is over). Never rejects.
 * The timing is machinery's `sleep` (long waits included).
 */
export async function sleep(
  ms: number,
  signal: AbortSignal,
  onWake?: (wake: (() => void) | undefined) => void,
): Promise<void> {
  if (signal.aborted) return;
  if (!onWake) return machinerySleep(ms, signal);
  const woken = new AbortController();
  onWake(() => woken.abort());
  try {
    await machinerySleep(ms, AbortSignal.any([signal, woken.signal]));
  } finally {
    onWake(undefined);
  }
}
