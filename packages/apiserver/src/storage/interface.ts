import type { ApiObject } from '@svc/api';

/** What `Storage.probeChanges` found under a prefix. */
export interface ChangeProbe {
  /** The store's revision the probe read at. */
  revision: number;
  /** Whether a key under the prefix was written after the probe's `sinceRevision`. */
  changed: boolean;
  /** How many keys are under the prefix. */
  count: number;
  /** The newest modification revision among those changed keys, when the store tells it. */
  latest?: number;
}

/**
 * The storage contract. Keys are full paths (`/registry/core/configmaps/ns/name`); values
 * are API objects. `metadata.resourceVersion` of every returned object is the store's
 * modification revision of its key (a decimal string); it is never persisted in the value.
 * Implementations only do optimistic writes: create = "key absent", update/delete =
 * "key's revision unchanged since read".
 */
export interface Storage {
  /** Throws `StorageError('KeyNotFound')` when absent. */
  get(key: string, opts?: GetOptions): Promise<ApiObject>;
  /** Objects under `prefix` (which ends with `/`), in key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Throws `StorageError('KeyExists')` when the key is taken. Returns the stored object. */
  create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject>;
  /**
   * Read-modify-write retried on concurrent modification. `tryUpdate` gets the current
   * object (with its resourceVersion) and returns the desired one, or throws to abort. An
   * unchanged result is not written. Throws `KeyNotFound` when absent.
   */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<ApiObject>;
  /**
   * Deletes the key if `check` (given the current object) does not throw, retrying on
   * concurrent modification. Returns the object as it was just before deletion.
   */
  delete(key: string, opts?: DeleteOptions): Promise<ApiObject>;
  /** Number of keys under `prefix`. */
  count(prefix: string): Promise<number>;
  /** Events under `prefix` (or for one key) after `fromRevision`, until `signal` aborts. */
  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent>;
  /**
   * The same events in batches: each batch is everything available at once, in order. A
   * store that fans out to many watchers offers this so a busy watcher pays per batch, not
   * per event; callers fall back to `watch` when it is absent.
   */
  watchBatches?(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]>;
  /** The store's current revision (a quorum read). */
  currentRevision(): Promise<number>;
  /**
   * A quorum read of what changed under `prefix` after `sinceRevision`: the revision read
   * at, whether any key there was written after `sinceRevision`, and the number of keys.
   * Unchanged and with the same count as at `sinceRevision` proves nothing was deleted
   * either, so a cache at `sinceRevision` equals the store at `revision`.
   */
  probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe>;
  /** Compacts history before `revision` (the API server's periodic compaction). */
  compact(revision: number): Promise<void>;
  /** Resolves when the store answers within `timeoutMs`; throws otherwise. */
  healthCheck(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export type UpdateFunc = (current: ApiObject) => ApiObject | Promise<ApiObject>;

/**
 * How fresh a read must be (the spec's resourceVersion semantics). Nothing set = Most
 * Recent (a quorum read); `revision` = Exact; `minRevision` = Not Older Than (a store
 * behind it waits briefly, then throws `FutureRevision`); `allowStale` = Any.
 */
export interface ReadConsistency {
  /** Read at exactly this revision (0 / absent = not exact). */
  revision?: number;
  minRevision?: number;
  allowStale?: boolean;
}

export type GetOptions = ReadConsistency;

export interface ListOptions extends ReadConsistency {
  /** Maximum number of matching items to return (0 / absent = all). */
  limit?: number;
  /** First key to read (inclusive); used to continue a paged list. */
  startKey?: string;
  /** Only items for which this returns true are returned and counted against `limit`. */
  predicate?: (obj: ApiObject) => boolean;
  /**
   * When given, an item whose stored value cannot be decoded (not decryptable, not an object)
   * is reported here and left out instead of failing the list (the watch cache keeps such
   * keys aside and fails only the reads that reach them).
   */
  onCorruptObject?: (key: string, error: StorageError) => void;
}

export interface ListResult {
  items: ApiObject[];
  /** The storage key of each item (same order), when the store knows them. */
  keys?: string[];
  /** Revision the list was read at. */
  revision: number;
  /** When more items may follow: the key to start the next page at. */
  nextKey?: string;
  /** Keys after this page (only when no predicate was given and more remain). */
  remainingItemCount?: number;
}

export interface WriteOptions {
  /** Attach the key to an etcd lease that expires after this many seconds (Event TTL). */
  ttlSeconds?: number;
}

export interface UpdateOptions extends WriteOptions {
  /** A recently read copy to try first, saving a read when it is still current. */
  cached?: ApiObject;
}

export interface DeleteOptions {
  /** Throws to refuse deletion of the current object (preconditions, finalizers). */
  check?: (current: ApiObject) => void;
  /** A recently read copy to try first. */
  cached?: ApiObject;
}

export interface WatchOptions {
  /** Deliver events with revision > fromRevision (0 = from now on). */
  fromRevision: number;
  /** Watch every key under the prefix (true) or the one key (false). */
  recursive: boolean;
  signal: AbortSignal;
  /** Ask for BOOKMARK events about this often (a store may send none). */
  bookmarkEveryMs?: number;
  /**
   * Whether MODIFIED events carry `prevObject` (default true). A consumer that holds every
   * current object itself (the watch cache) says false and fills it in from its own copy, so
   * the store decodes one version per event, not two. DELETED events always carry both.
   */
  previous?: boolean;
}

export interface StorageEvent {
  /** BOOKMARK: every event up to `revision` was delivered; `object` holds only that resourceVersion. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  /** The key the event is about (absent on bookmarks). */
  key?: string;
  /** The object after the change; for DELETED, as it was just before deletion. */
  object: ApiObject;
  /** The object before the change (MODIFIED, DELETED). */
  prevObject?: ApiObject;
  revision: number;
}

export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'Conflict'
  | 'InvalidObject'
  /** The value could not be decrypted or encrypted (encryption at rest); a 500 InternalError. */
  | 'InternalError'
  | 'Unreachable'
  | 'ResourceVersionCompacted'
  | 'FutureRevision';

/** What a StorageError says besides its code and key. */
export interface StorageErrorDetails {
  /** Defaults to `<code>: <key>`. */
  message?: string;
  /** The revision the failure is about (the oldest still available, the current one). */
  revision?: number;
}

/** Storage failures; only `registry/` turns them into API Status errors. */
export class StorageError extends Error {
  readonly revision?: number;

  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    details: StorageErrorDetails = {},
  ) {
    super(details.message ?? `${code}: ${key}`);
    this.name = 'StorageError';
    this.revision = details.revision;
  }
}

export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  return e instanceof StorageError && (code === undefined || e.code === code);
}
