/**
 * Paces a long-running answer to `bytesPerSec` (`--max-connection-bytes-per-sec`): after each
 * write the returned function waits as long as the bytes written so far take at that rate.
 * The wait ends early when `signal` aborts.
 */
export function throttle(bytesPerSec: number, signal: AbortSignal): (written: Buffer[]) => Promise<void> {
  const start = performance.now();
  let total = 0;
  return (written) => {
    for (const b of written) total += b.length;
    const due = start + (total / bytesPerSec) * 1000 - performance.now();
    if (due <= 0 || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, due);
      signal.addEventListener('abort', done, { once: true });
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  };
}
