/**
 * Resolves after `ms`, at once when `signal` fires, or when the `wake` function handed to
 * `onWake` is called (it is handed `undefined` again once the sleep is over). Never rejects.
 */
export function sleep(ms: number, signal: AbortSignal, onWake?: (wake: (() => void) | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      onWake?.(undefined);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
    onWake?.(done);
  });
}
