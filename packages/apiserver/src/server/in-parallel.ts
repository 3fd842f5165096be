/**
 * Runs `each` over `items` with at most `workers` calls in flight; rejects with the first
 * failure once the calls already started have settled (none is left running behind it).
 * Start-up writes (the default RBAC policy, the APF configuration) use it: each object is a
 * round trip to etcd, so one after another they keep readyz waiting on latency, not work.
 */
export async function forEachInParallel<T>(
  items: readonly T[],
  o: { workers: number; each: (item: T) => Promise<void> },
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      try {
        await o.each(item);
      } catch (e) {
        failure ??= { error: e };
      }
    }
  };
  const workers = Math.max(1, Math.min(o.workers, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure) throw failure.error;
}
