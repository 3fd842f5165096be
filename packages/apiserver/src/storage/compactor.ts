import type { Etcd3Storage } from './etcd3/etcd3-storage.js';

export const COMPACT_REVISION_KEY = 'compact_rev_key';

/**
 * Compacts the store's history every `intervalMs` (`--store-compaction-interval`), in
 * rounds coordinated through one key so several API servers compact once per interval.
 * Each round compacts at the revision seen one round earlier. Stops when `signal` aborts.
 */
export function runCompactor(
  storage: Etcd3Storage,
  o: {
    intervalMs: number;
    signal: AbortSignal;
    onError: (e: unknown) => void;
    onCompact?: (rev: number, seconds: number) => void;
  },
): void {
  const { intervalMs, signal, onError, onCompact } = o;
  if (intervalMs <= 0) return;
  let version = 0;
  let revision = 0;
  const round = async (): Promise<void> => {
    try {
      const started = performance.now();
      const r = await storage.compactRound(COMPACT_REVISION_KEY, version, revision);
      if (r.compacted) onCompact?.(revision, (performance.now() - started) / 1000);
      version = r.version;
      revision = r.revision;
    } catch (e) {
      onError(e);
    }
  };
  const timer = setInterval(() => {
    void round();
  }, intervalMs);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
