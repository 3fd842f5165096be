import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import {
  ClientClosedError,
  Etcd3,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCUnavailableError,
  Range,
  type IEvent,
  type IKeyValue,
  type IOptions,
  type IRangeResponse,
  type IWatchResponse,
  type Watcher,
} from 'etcd3';
import type { ApiObject } from '@svc/api';
import {
  type ChangeProbe,
  StorageError,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageEvent,
  type UpdateFunc,
  type UpdateOptions,
  type WatchOptions,
  type WriteOptions,
} from '../interface.js';
import {
  atRevision,
  casDelete,
  casUpdate,
  decodeStored,
  encodeStored,
  messageOf,
  type StoredValue,
} from '../stored-object.js';
import { LeaseManager } from './lease-manager.js';
import type { KeyTransformers } from '../value/resource-transformers.js';
import type { Plaintext } from '../value/transformer.js';

/**
 * The HTTP/2 flow-control window of the etcd connection (each stream's and the connection's).
 * HTTP/2 starts both at 64 KiB, and a client on a busy event loop gives window back slowly; every
 * watch, list and get shares the one connection. Under a pod-creation burst with 1,000 simulated
 * nodes, etcd held back thousands of watch events for the server (its slow-watcher state) and
 * they reached the watch cache over a minute late; with this window, none were held back and
 * they arrived in 1-2 s. Go's gRPC (Kubernetes' etcd client) grows its window up to 16 MiB as it
 * measures the connection; grpc-js does not, so it starts there.
 */
const FLOW_CONTROL_WINDOW = 16 * 1024 * 1024;

export interface Etcd3StorageOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379` or `https://etcd-0:2379`. */
  endpoints: string[];
  /**
   * PEM files for TLS to etcd: the CA that signed etcd's certificate (default: Node's
   * bundled public CAs) and a client certificate and key for mTLS. TLS is used when this is
   * given or any endpoint is `https://`.
   */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /**
   * Upper bound on the back-off between reconnection attempts to an endpoint, so a
   * restarted etcd is used again within about this long. Default 2000.
   */
  dialTimeoutMs?: number;
  /** Deadline of every unary request (reads, transactions, lease grants). Default 30000. */
  requestTimeoutMs?: number;
  /** How long one etcd lease serves keys written with a TTL (`--lease-reuse-duration-seconds`). Default 60. */
  leaseReuseDurationSeconds?: number;
  /**
   * Encryption at rest (`--encryption-provider-config`): each value is transformed on its way
   * to and from etcd by its resource's transformer, with the key as authenticated data.
   */
  transformers?: KeyTransformers;
}

/** Key read for health checks and the current revision; never written. */
const PROBE_KEY = '/health';
/** Upper bound on a list batch when a predicate makes us read more than `limit` keys. */
const MAX_LIST_BATCH = 10_000;
/** How long `close()` and an ended watch wait for etcd to confirm a watcher's cancellation. */
const WATCH_CANCEL_TIMEOUT_MS = 2000;

/** The stored value (decrypted) and the key's modification revision. */
interface Current extends StoredValue {
  /** Not written with the current encryption provider and key: an unchanged write still goes to etcd. */
  stale?: boolean;
}

interface ActiveWatch {
  watcher: Watcher;
  /** Ends the iteration quietly (used by `close()`). */
  end(): void;
}

/**
 * `Storage` on etcd v3. Values are JSON of the object without `metadata.resourceVersion`;
 * `resourceVersion` is the key's mod_revision, and a list's is the revision it was read at.
 * Every write is one optimistic transaction: create = "mod_revision is 0", update/delete =
 * "mod_revision unchanged since read"; a failed compare is retried from the value etcd
 * returns in the transaction's else branch (no extra read).
 *
 * Errors: compacted revisions → `ResourceVersionCompacted`, revisions ahead of etcd →
 * `FutureRevision`, connection and timeout failures → `Unreachable`, stored values that
 * are not API objects in JSON → `InvalidObject`, values that cannot be decrypted (or
 * encrypted) → `InternalError` with the transformer's reason (a list names the key, as
 * Kubernetes does).
 */
export class Etcd3Storage implements Storage {
  private readonly client: Etcd3;
  private readonly watches = new Set<ActiveWatch>();
  private readonly cancellations = new Map<Watcher, Promise<void>>();
  private closed = false;
  private readonly leases: LeaseManager;
  private readonly transformers?: KeyTransformers;

  constructor(opts: Etcd3StorageOptions) {
    if (opts.endpoints.length === 0) throw new Error('Etcd3Storage: no endpoints');
    const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    const backoffMs = opts.dialTimeoutMs ?? 2000;
    const options: IOptions = {
      hosts: opts.endpoints,
      grpcOptions: {
        // grpc-js refuses messages over 4 MiB by default; big lists and watch catch-ups exceed that.
        'grpc.max_receive_message_length': -1,
        'grpc.initial_reconnect_backoff_ms': Math.min(100, backoffMs),
        'grpc.max_reconnect_backoff_ms': backoffMs,
        // Notice a silently dead connection (e.g. a hung etcd) under a long-lived watch, as
        // Kubernetes does (30 s / 10 s).
        'grpc.keepalive_time_ms': 30_000,
        'grpc.keepalive_timeout_ms': 10_000,
        'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
      },
      // Streams (watches, lease keep-alives) have no deadline; unary calls do.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
    };
    const tlsOpts = opts.tls;
    if (tlsOpts || opts.endpoints.some((e) => e.startsWith('https://'))) {
      options.credentials = {
        rootCertificate: tlsOpts?.caFile ? readFileSync(tlsOpts.caFile) : Buffer.from(rootCertificates.join('\n')),
        ...(tlsOpts?.keyFile ? { privateKey: readFileSync(tlsOpts.keyFile) } : {}),
        ...(tlsOpts?.certFile ? { certChain: readFileSync(tlsOpts.certFile) } : {}),
      };
    }
    this.client = new Etcd3(options);
    this.transformers = opts.transformers;
    this.leases = new LeaseManager(async (ttl) => (await this.client.leaseClient.leaseGrant({ TTL: ttl })).ID, {
      reuseDurationSeconds: opts.leaseReuseDurationSeconds ?? 60,
    });
  }

  async get(key: string, opts: GetOptions = {}): Promise<ApiObject> {
    const res = await this.call(key, () => {
      const b = this.client.get(key);
      if (opts.revision) b.revision(opts.revision);
      return b.exec();
    });
    checkMinRevision(key, Number(res.header.revision), opts.minRevision);
    const kv = res.kvs[0];
    if (!kv) throw new StorageError('KeyNotFound', key);
    return this.decodeKv(kv);
  }

  /**
   * Reads in key order from `startKey` (or `prefix`) at one revision: the given one, else
   * the header revision of the first range, which later batches reuse so a paged list is a
   * consistent snapshot. `remainingItemCount` comes from the range's own count (the number
   * of keys from the range start at that revision), so it costs no extra request.
   */
  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const end = Range.prefix(prefix).end;
    let start = Buffer.from(prefix);
    if (opts.startKey !== undefined) {
      const s = Buffer.from(opts.startKey);
      if (Buffer.compare(s, start) > 0) start = s;
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const predicate = opts.predicate;
    let revision = opts.revision && opts.revision > 0 ? opts.revision : 0;
    let batch = limit;
    const items: ApiObject[] = [];
    const keys: string[] = [];
    for (;;) {
      const res: IRangeResponse = await this.call(prefix, () => {
        const b = this.client.getAll().inRange({ start, end }).sort('Key', 'Ascend');
        if (batch > 0) b.limit(batch);
        if (revision > 0) b.revision(revision);
        return b.exec();
      });
      if (revision === 0) {
        revision = Number(res.header.revision);
        checkMinRevision(prefix, revision, opts.minRevision);
      }
      for (const [i, kv] of res.kvs.entries()) {
        let obj: ApiObject;
        try {
          const decoded = this.decodeKv(kv);
          obj = decoded instanceof Promise ? await decoded : decoded;
        } catch (err) {
          const itemKey = kv.key.toString('utf8');
          if (!(err instanceof StorageError) || !opts.onCorruptObject) throw listItemError(itemKey, err);
          opts.onCorruptObject(itemKey, err);
          continue;
        }
        if (predicate && !predicate(obj)) continue;
        items.push(obj);
        keys.push(kv.key.toString('utf8'));
        if (limit > 0 && items.length === limit) {
          const more = i < res.kvs.length - 1 || res.more;
          if (!more) return { items, keys, revision };
          const result: ListResult = { items, keys, revision, nextKey: `${kv.key.toString('utf8')}\0` };
          if (!predicate) result.remainingItemCount = Number(res.count) - (i + 1);
          return result;
        }
      }
      const last = res.kvs[res.kvs.length - 1];
      if (!res.more || !last) return { items, keys, revision };
      start = Buffer.concat([last.key, Buffer.from([0])]);
      batch = Math.min(batch * 2, MAX_LIST_BATCH);
    }
  }

  async create(key: string, obj: ApiObject, opts: WriteOptions = {}): Promise<ApiObject> {
    const json = encodeStored(obj);
    const value = await this.toStored(key, json);
    const lease = await this.grantLease(key, opts.ttlSeconds);
    const res = await this.call(key, () => {
      const put = this.client.put(key).value(value);
      if (lease) put.lease(lease);
      return this.client.if(key, 'Mod', '==', 0).then(put).commit();
    });
    if (!res.succeeded) throw new StorageError('KeyExists', key);
    return decodeStored(key, json, Number(res.header.revision));
  }

  /**
   * Tries `opts.cached` first; a no-op result computed from the cached copy is confirmed
   * against a fresh read before it is returned (as Kubernetes does), so a no-op always
   * reflects the current stored state. A stale stored value (not encrypted with the current
   * provider and key) is rewritten even when the object is unchanged, as in Kubernetes.
   */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<ApiObject> {
    return casUpdate({
      key,
      cached: opts.cached,
      tryUpdate,
      read: () => this.readCurrent(key),
      mustWrite: (read) => read.stale === true,
      cas: async (json, expected) => {
        const value = await this.toStored(key, json);
        const lease = await this.grantLease(key, opts.ttlSeconds);
        const res = await this.call(key, () => {
          const put = this.client.put(key).value(value);
          if (lease) put.lease(lease);
          return this.client.if(key, 'Mod', '==', expected).then(put).else(this.client.get(key)).commit();
        });
        if (res.succeeded) return { rev: Number(res.header.revision) };
        return { current: await this.currentFromElse(key, res.responses[0]?.response_range) };
      },
    });
  }

  /**
   * `check` runs against the state about to be deleted; when it throws on a cached copy,
   * the check is retried once against a fresh read before the error is passed on.
   */
  delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    return casDelete({
      key,
      cached: opts.cached,
      check: opts.check,
      read: () => this.readCurrent(key),
      cas: async (expected) => {
        const res = await this.call(key, () =>
          this.client
            .if(key, 'Mod', '==', expected)
            .then(this.client.delete().key(key))
            .else(this.client.get(key))
            .commit(),
        );
        if (res.succeeded) return { rev: Number(res.header.revision) };
        return { current: await this.currentFromElse(key, res.responses[0]?.response_range) };
      },
    });
  }

  async count(prefix: string): Promise<number> {
    return this.call(prefix, () => this.client.getAll().prefix(prefix).count());
  }

  /**
   * One etcd watch (with previous values) from `fromRevision + 1`, or from the revision
   * current when iteration starts if `fromRevision` is 0. Events arrive in revision order,
   * each exactly once, also across reconnections: the client library resumes a broken
   * stream after the last revision it saw in any response header, which can skip events
   * during a catch-up replay, so this resumes after the last delivered event instead.
   * A put whose create_revision equals its mod_revision is ADDED, other puts MODIFIED; a
   * DELETED event carries the object as it was, with the delete's revision as its
   * resourceVersion (as Kubernetes does) and the last stored version as `prevObject`.
   * Iteration ends when `signal` aborts or `close()` is called; it throws
   * `ResourceVersionCompacted` when `fromRevision` has been compacted (etcd cancels such a
   * watch without saying why; that is the only cancellation without a reason in etcd 3.4),
   * after delivering every event received before. The etcd watcher is cancelled when the
   * iteration ends for any reason.
   */
  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    return { [Symbol.asyncIterator]: () => this.runWatch(prefix, opts) };
  }

  async probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe> {
    const range = Range.prefix(prefix);
    const res = await this.call(prefix, () =>
      this.client.kv.range({
        key: range.start,
        range_end: range.end,
        keys_only: true,
        serializable: false,
        min_mod_revision: String(sinceRevision + 1),
      }),
    );
    const latest = res.kvs.reduce((m, kv) => Math.max(m, Number(kv.mod_revision)), 0);
    return {
      revision: Number(res.header.revision),
      changed: res.kvs.length > 0,
      count: Number(res.count),
      ...(latest > 0 ? { latest } : {}),
    };
  }

  /**
   * One round of coordinated compaction (Kubernetes' compactor): whoever moves the
   * version of `key` from `knownVersion` records `revision` there and compacts at
   * `previousRevision` (the revision recorded one round earlier, so history of at least one
   * interval is kept); the others learn the current version. Several API servers thus
   * compact once per interval between them.
   */
  async compactRound(
    key: string,
    knownVersion: number,
    previousRevision: number,
  ): Promise<{ version: number; revision: number; compacted: boolean }> {
    const res = await this.call(key, () =>
      this.client
        .if(key, 'Version', '==', knownVersion)
        .then(this.client.put(key).value(String(previousRevision)))
        .else(this.client.get(key))
        .commit(),
    );
    const revision = Number(res.header.revision);
    if (!res.succeeded) {
      const kv = res.responses[0]?.response_range?.kvs[0];
      return { version: kv ? Number(kv.version) : 0, revision, compacted: false };
    }
    if (previousRevision > 0) await this.compact(previousRevision);
    return { version: knownVersion + 1, revision, compacted: previousRevision > 0 };
  }

  async compact(revision: number): Promise<void> {
    await this.call(PROBE_KEY, () => this.client.kv.compact({ revision: String(revision), physical: false }));
  }

  async currentRevision(): Promise<number> {
    const res = await this.call(PROBE_KEY, () => this.client.get(PROBE_KEY).serializable(false).exec());
    return Number(res.header.revision);
  }

  async healthCheck(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new StorageError('Unreachable', PROBE_KEY, {
              message: `etcd did not answer a quorum read within ${timeoutMs} ms`,
            }),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        this.client
          .get(PROBE_KEY)
          .serializable(false)
          .options({ deadline: Date.now() + timeoutMs })
          .exec(),
        timeout,
      ]);
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw new StorageError('Unreachable', PROBE_KEY, { message: `etcd health check failed: ${messageOf(err)}` });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends every watch, waits (bounded) for etcd to cancel its watchers, then closes the client. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const watchers = [...this.watches].map((w) => w.watcher);
    for (const w of this.watches) w.end();
    await Promise.all(watchers.map((w) => this.cancelWatcher(w)));
    this.client.close();
  }

  private async *runWatch(key: string, opts: WatchOptions): AsyncGenerator<StorageEvent, void, undefined> {
    const { signal } = opts;
    if (signal.aborted || this.closed) return;
    // Raw events: values are decrypted and decoded as the consumer takes them (decryption may wait on a KMS plugin).
    const queue: (IEvent | undefined)[] = [];
    let head = 0;
    let failure: unknown;
    let ended = false;
    let cancelledByServer = false;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    // The first revision not yet delivered (unknown until connected when watching from now).
    let next = opts.fromRevision > 0 ? opts.fromRevision + 1 : 0;

    const builder = this.client.watch().withPreviousKV();
    if (opts.recursive) builder.prefix(key);
    else builder.key(key);
    if (next > 0) builder.startRevision(String(next));
    const watcher = builder.watcher();

    const onConnected = (res: IWatchResponse): void => {
      if (next === 0) next = Number(res.header.revision) + 1;
    };
    const onData = (res: IWatchResponse): void => {
      if (failure !== undefined || ended) return;
      let last = 0;
      try {
        for (const ev of res.events) {
          const rev = Number(ev.kv.mod_revision);
          if (rev < next) continue; // replayed after a reconnection
          queue.push(ev);
          last = rev;
        }
      } catch (err) {
        failure = err;
      }
      if (last > 0) next = last + 1;
      notify();
    };
    const onDisconnected = (): void => {
      // Resume after the last delivered event, not after the library's header revision.
      if (next > 0) watcher.request.start_revision = String(next);
    };
    const onError = (err: Error): void => {
      cancelledByServer = true;
      const message = messageOf(err);
      failure =
        /^Watcher canceled: ?$/.test(message.trim()) || /compact/i.test(message)
          ? new StorageError('ResourceVersionCompacted', key, {
              message: `watch from revision ${opts.fromRevision}: the revision has been compacted`,
            })
          : toStorageError(err, key);
      notify();
    };
    const active: ActiveWatch = {
      watcher,
      end: () => {
        ended = true;
        notify();
      },
    };
    const onAbort = (): void => notify();
    watcher.on('connected', onConnected);
    watcher.on('data', onData);
    watcher.on('disconnected', onDisconnected);
    watcher.on('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    this.watches.add(active);
    try {
      for (;;) {
        if (signal.aborted || ended) return;
        const raw = queue[head];
        if (raw) {
          queue[head++] = undefined;
          if (head > 1024 && head * 2 > queue.length) {
            queue.splice(0, head);
            head = 0;
          }
          const ev = this.toEvent(raw, opts.previous !== false);
          yield ev instanceof Promise ? await ev : ev;
          continue;
        }
        if (failure !== undefined) throw failure;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.watches.delete(active);
      // A watcher etcd cancelled is already detached; cancelling it again would wait forever.
      if (!cancelledByServer) await this.cancelWatcher(watcher);
      watcher.off('connected', onConnected);
      watcher.off('data', onData);
      watcher.off('disconnected', onDisconnected);
      watcher.off('error', onError);
      watcher.on('error', () => {
        /* late errors of a finished watch are irrelevant */
      });
    }
  }

  /** Cancels `w` once; waits at most WATCH_CANCEL_TIMEOUT_MS for etcd to confirm. */
  private cancelWatcher(w: Watcher): Promise<void> {
    let p = this.cancellations.get(w);
    if (!p) {
      let timer: NodeJS.Timeout | undefined;
      p = Promise.race([
        w.cancel().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, WATCH_CANCEL_TIMEOUT_MS);
        }),
      ]).finally(() => {
        clearTimeout(timer);
        this.cancellations.delete(w);
      });
      this.cancellations.set(w, p);
    }
    return p;
  }

  private async readCurrent(key: string): Promise<Current> {
    const res = await this.call(key, () => this.client.get(key).exec());
    const kv = res.kvs[0];
    if (!kv) throw new StorageError('KeyNotFound', key);
    return this.current(key, kv);
  }

  /** The key's state as returned by a failed transaction's `else(get(key))`. */
  private async currentFromElse(key: string, range: IRangeResponse | undefined): Promise<Current> {
    const kv = range?.kvs[0];
    if (!kv) throw new StorageError('KeyNotFound', key);
    return this.current(key, kv);
  }

  private async current(key: string, kv: IKeyValue): Promise<Current> {
    const p = this.plain(key, kv.value);
    const { json, stale } = p instanceof Promise ? await p : p;
    return { json, rev: Number(kv.mod_revision), stale };
  }

  /** The value to put for `json`: as it is, or encrypted by the key's transformer. */
  private async toStored(key: string, json: string): Promise<string | Buffer> {
    const t = this.transformers?.forKey(key);
    if (!t) return json;
    try {
      return await t.toStorage(Buffer.from(json), Buffer.from(key));
    } catch (err) {
      throw new StorageError('InternalError', key, { message: messageOf(err) });
    }
  }

  /** A stored value as JSON text (decrypted when a transformer applies); throws `InternalError` when it cannot be. */
  private plain(
    key: string,
    value: Buffer,
  ): { json: string; stale: boolean } | Promise<{ json: string; stale: boolean }> {
    const t = this.transformers?.forKey(key);
    if (!t) return { json: value.toString('utf8'), stale: false };
    const failed = (err: unknown): never => {
      throw new StorageError('InternalError', key, { message: messageOf(err) });
    };
    let out: Plaintext | Promise<Plaintext>;
    try {
      out = t.fromStorage(value, Buffer.from(key));
    } catch (err) {
      return failed(err);
    }
    if (out instanceof Promise) return out.then((p) => ({ json: p.data.toString('utf8'), stale: p.stale }), failed);
    return { json: out.data.toString('utf8'), stale: out.stale };
  }

  private decodeKv(kv: IKeyValue, rev = Number(kv.mod_revision)): ApiObject | Promise<ApiObject> {
    const key = kv.key.toString('utf8');
    const p = this.plain(key, kv.value);
    if (p instanceof Promise) return p.then((x) => decodeStored(key, x.json, rev));
    return decodeStored(key, p.json, rev);
  }

  /**
   * A watch event with its objects decoded. A DELETED event carries, as `prevObject`, the last
   * stored version and, as `object`, the same version at the delete's revision (decoded once).
   * A MODIFIED event carries the previous version when `previous`; one that cannot be
   * decrypted leaves it without `prevObject`.
   */
  private toEvent(ev: IEvent, previous: boolean): StorageEvent | Promise<StorageEvent> {
    const kv = ev.kv;
    const key = kv.key.toString('utf8');
    const rev = Number(kv.mod_revision);
    if (ev.type === 'Delete') {
      const prevKv = ev.prev_kv;
      if (!prevKv)
        throw new StorageError('InvalidObject', key, { message: 'etcd delete event without the previous value' });
      const deleted = (p: { json: string }): StorageEvent => {
        const prevObject = decodeStored(key, p.json, Number(prevKv.mod_revision));
        return { type: 'DELETED', key, object: atRevision(prevObject, rev), prevObject, revision: rev };
      };
      const p = this.plain(key, prevKv.value);
      return p instanceof Promise ? p.then(deleted) : deleted(p);
    }
    const type = kv.create_revision === kv.mod_revision ? 'ADDED' : 'MODIFIED';
    const prevKv = type === 'MODIFIED' && previous ? ev.prev_kv : undefined;
    const made = (c: { json: string }, p: { json: string } | undefined): StorageEvent => {
      const result: StorageEvent = { type, key, object: decodeStored(key, c.json, rev), revision: rev };
      if (p && prevKv) result.prevObject = decodeStored(key, p.json, Number(prevKv.mod_revision));
      return result;
    };
    const cur = this.plain(key, kv.value);
    let prev: ReturnType<Etcd3Storage['plain']> | undefined;
    try {
      prev = prevKv ? this.plain(key, prevKv.value) : undefined;
    } catch {
      prev = undefined;
    }
    if (prev instanceof Promise) prev = prev.catch(() => undefined) as Promise<{ json: string; stale: boolean }>;
    if (cur instanceof Promise || prev instanceof Promise) {
      return Promise.all([cur, prev]).then(([c, p]) => made(c, p));
    }
    return made(cur, prev);
  }

  /** A lease for `ttlSeconds` (none when absent); keys written with it vanish when it expires. */
  private async grantLease(key: string, ttlSeconds: number | undefined): Promise<string | undefined> {
    if (ttlSeconds === undefined || ttlSeconds <= 0) return undefined;
    return this.call(key, () => this.leases.lease(ttlSeconds));
  }

  private async call<T>(key: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toStorageError(err, key);
    }
  }
}

/** Not Older Than: a latest read older than the requested revision means the revision is ahead of the store. */
function checkMinRevision(key: string, readAt: number, minRevision: number | undefined): void {
  if (minRevision !== undefined && minRevision > readAt) {
    throw new StorageError('FutureRevision', key, { message: `${minRevision}, current: ${readAt}`, revision: readAt });
  }
}

/** A list item that cannot be decoded fails the whole list, naming its key (Kubernetes' message for a value it cannot decrypt). */
function listItemError(key: string, err: unknown): unknown {
  if (!(err instanceof StorageError) || err.code !== 'InternalError') return err;
  return new StorageError('InternalError', key, {
    message: `unable to transform key ${JSON.stringify(key)}: ${err.message}`,
  });
}

const UNREACHABLE_MESSAGES = [
  'no leader',
  'request timed out',
  'leader changed',
  'ECONNREFUSED',
  'No connection established',
  'Deadline exceeded',
  'too many requests',
];

/** Maps etcd client failures onto `StorageError` codes; other errors pass through unchanged. */
function toStorageError(err: unknown, key: string): unknown {
  if (err instanceof StorageError) return err;
  const message = messageOf(err);
  if (message.includes('required revision has been compacted')) {
    return new StorageError('ResourceVersionCompacted', key, { message });
  }
  if (message.includes('is a future revision')) return new StorageError('FutureRevision', key, { message });
  if (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    err instanceof ClientClosedError ||
    (typeof err === 'object' && err !== null && 'isBrokenCircuitError' in err) ||
    UNREACHABLE_MESSAGES.some((m) => message.includes(m))
  ) {
    return new StorageError('Unreachable', key, { message: `etcd unreachable: ${message}` });
  }
  return err;
}
