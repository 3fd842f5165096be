import type { Storage, StorageEvent, WatchOptions } from './interface.js';

/** A store's watch in batches: its own `watchBatches` when it has one, else batches of one event. */
export function watchBatchesOf(storage: Storage, key: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
  return storage.watchBatches ? storage.watchBatches(key, opts) : singles(storage.watch(key, opts));
}

async function* singles(events: AsyncIterable<StorageEvent>): AsyncGenerator<StorageEvent[]> {
  for await (const e of events) yield [e];
}
