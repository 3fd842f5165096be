export interface WaitOptions {
  /** How long to poll before giving up; default 10 s. */
  timeoutMs?: number;
  /** The pause between two polls; default 20 ms. */
  intervalMs?: number;
}

/** Polls `cond` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function waitFor<T>(
  what: string,
  cond: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 10_000, intervalMs = 20 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
