import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
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
  type CasResult,
  type StoredValue,
} from '../stored-object.js';
import * as scripts from './scripts.js';

export interface RedisStorageOptions {
  /** `redis://host:port` (optionally `/db`). */
  url: string;
  /** Prepended to every Redis key this store writes (several stores may share one Redis). Default `svc:`. */
  namespace?: string;
  /** How often keys past their TTL are deleted (etcd checks lease expiry every 500 ms). Default 500. */
  expiryIntervalMs?: number;
  /**
   * Compact the change log every this often at the revision seen one interval earlier, as the
   * API server's etcd compactor does (`--store-compaction-interval`); 0 never. Default 300000.
   */
  compactionIntervalMs?: number;
  /** Deadline of every command. Default 30000. */
  requestTimeoutMs?: number;
}

type Current = StoredValue;

/** Keys deleted per expiry run at most (more wait for the next run). */
const EXPIRE_BATCH = 1000;
/** Entries one XREAD takes at most. */
const READ_BATCH = 1000;
/** How long one XREAD blocks before the watch looks at its signal again. */
const BLOCK_MS = 5000;

/**
 * `Storage` on Redis (for resources `--store-servers-overrides` sends there, Events above
 * all). Revisions come from one counter per store, so resourceVersions are comparable within
 * this store (every resource it holds), not with etcd's. Every write is one Lua script that
 * compares the key's revision, writes it, takes the next revision and appends the change to
 * a log (a stream with one entry per revision) in one atomic step; watches read the log with
 * XREAD from their revision, and a gap in it (trimmed by compaction) is
 * `ResourceVersionCompacted`, as is any read at a revision older than the log. Reads at an
 * older revision take today's state and undo the logged changes after it. Keys written with
 * a TTL are deleted, with a DELETED entry in the log, by a periodic script (Redis' own key
 * expiry would delete them silently, with no revision and no watch event).
 */
export class RedisStorage implements Storage {
  private readonly client: Redis;
  private readonly ns: string;
  private readonly watchConns = new Set<Redis>();
  private readonly shas = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  private readonly url: string;

  constructor(opts: RedisStorageOptions) {
    this.url = opts.url;
    this.ns = opts.namespace ?? 'svc:';
    this.client = new Redis(opts.url, clientOptions(opts.requestTimeoutMs ?? 30_000));
    this.client.on('error', () => {
      /* reconnects on its own; commands fail with Unreachable meanwhile */
    });
    const expiry = setInterval(() => void this.expire().catch(() => undefined), opts.expiryIntervalMs ?? 500);
    expiry.unref();
    this.timers.push(expiry);
    const every = opts.compactionIntervalMs ?? 300_000;
    if (every > 0) {
      let previous = 0;
      const compactor = setInterval(() => {
        void (async () => {
          if (previous > 0) await this.compact(previous);
          previous = await this.currentRevision();
        })().catch(() => undefined);
      }, every);
      compactor.unref();
      this.timers.push(compactor);
    }
  }

  async get(key: string, opts: GetOptions = {}): Promise<ApiObject> {
    const at = opts.revision && opts.revision > 0 ? opts.revision : 0;
    const read = await this.read({ prefix: key, start: key, at, exact: true });
    checkMinRevision(key, read.revision, opts.minRevision);
    const entry = read.entries[0];
    if (!entry) throw new StorageError('KeyNotFound', key);
    return decodeStored(key, entry.json, entry.rev);
  }

  /**
   * One consistent read of every key under `prefix` from `startKey` at one revision (the given
   * one, else the current); predicate and limit are applied here, so a page costs a read of
   * the rest of the prefix (the watch cache serves the lists that are not pages).
   */
  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const start = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const at = opts.revision && opts.revision > 0 ? opts.revision : 0;
    const read = await this.read({ prefix, start, at, exact: false });
    checkMinRevision(prefix, read.revision, opts.minRevision);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const items: ApiObject[] = [];
    const keys: string[] = [];
    const all = read.entries;
    for (const [i, e] of all.entries()) {
      let obj: ApiObject;
      try {
        obj = decodeStored(e.key, e.json, e.rev);
      } catch (err) {
        if (!(err instanceof StorageError) || !opts.onCorruptObject) throw err;
        opts.onCorruptObject(e.key, err);
        continue;
      }
      if (opts.predicate && !opts.predicate(obj)) continue;
      items.push(obj);
      keys.push(e.key);
      if (limit > 0 && items.length === limit) {
        if (i === all.length - 1) break;
        const result: ListResult = { items, keys, revision: read.revision, nextKey: `${e.key}\0` };
        if (!opts.predicate) result.remainingItemCount = all.length - (i + 1);
        return result;
      }
    }
    return { items, keys, revision: read.revision };
  }

  async create(key: string, obj: ApiObject, opts: WriteOptions = {}): Promise<ApiObject> {
    const json = encodeStored(obj);
    const rev = Number(await this.script(key, scripts.CREATE, [key, json, ttlMs(opts.ttlSeconds)]));
    if (rev === 0) throw new StorageError('KeyExists', key);
    return decodeStored(key, json, rev);
  }

  /** As `Etcd3Storage.guaranteedUpdate`: a no-op computed from a cached copy is confirmed against a fresh read. */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<ApiObject> {
    return casUpdate({
      key,
      cached: opts.cached,
      tryUpdate,
      read: () => this.readCurrent(key),
      cas: async (json, rev) =>
        casResult(key, await this.script(key, scripts.UPDATE, [key, json, String(rev), ttlMs(opts.ttlSeconds)])),
    });
  }

  delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    return casDelete({
      key,
      cached: opts.cached,
      check: opts.check,
      read: () => this.readCurrent(key),
      cas: async (rev) => casResult(key, await this.script(key, scripts.DELETE, [key, String(rev)])),
    });
  }

  async count(prefix: string): Promise<number> {
    return this.call(prefix, () => this.client.zlexcount(`${this.ns}idx`, `[${prefix}`, `(${prefixEnd(prefix)}`));
  }

  /**
   * The log from `fromRevision + 1` (from the revision current when iteration starts when it
   * is 0), on a connection of its own, each event exactly once in revision order, across
   * reconnections to a restarted Redis. Throws `ResourceVersionCompacted` when the log no
   * longer holds the next revision.
   */
  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    return { [Symbol.asyncIterator]: () => this.runWatch(prefix, opts) };
  }

  async probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe> {
    const res = await this.script(prefix, scripts.PROBE, [prefix, prefixEnd(prefix), String(sinceRevision)]);
    const [revision, changed, count] = res as [number, number, number];
    return { revision: Number(revision), changed: Number(changed) === 1, count: Number(count) };
  }

  /** Drops the log before `revision`: reads and watches at older revisions fail with `ResourceVersionCompacted`. */
  async compact(revision: number): Promise<void> {
    await this.script('', scripts.COMPACT, [String(revision)]);
  }

  async currentRevision(): Promise<number> {
    return Number((await this.call('', () => this.client.get(`${this.ns}rev`))) ?? 0);
  }

  async healthCheck(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.client.ping(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      throw new StorageError('Unreachable', this.url, { message: `redis health check failed: ${messageOf(err)}` });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    for (const c of this.watchConns) c.disconnect();
    this.watchConns.clear();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  /** Deletes the keys whose TTL has passed; returns how many. */
  async expire(): Promise<number> {
    if (this.closed) return 0;
    return Number(await this.script('', scripts.EXPIRE, [String(EXPIRE_BATCH)]));
  }

  private async *runWatch(prefix: string, opts: WatchOptions): AsyncGenerator<StorageEvent, void, undefined> {
    const { signal } = opts;
    if (signal.aborted || this.closed) return;
    const conn = this.client.duplicate();
    conn.on('error', () => {
      /* reconnects; the pending XREAD is resent */
    });
    this.watchConns.add(conn);
    const onAbort = (): void => conn.disconnect();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let last = opts.fromRevision > 0 ? opts.fromRevision : await this.currentRevision();
      if (opts.fromRevision > 0) {
        // A revision the log no longer starts after is compacted (the log is dense).
        const floor = await this.floor(prefix);
        if (last < floor) throw compacted(prefix, opts.fromRevision);
      }
      for (;;) {
        if (signal.aborted || this.closed) return;
        let raw: unknown;
        try {
          raw = await conn.call(
            'XREAD',
            'COUNT',
            String(READ_BATCH),
            'BLOCK',
            String(BLOCK_MS),
            'STREAMS',
            `${this.ns}log`,
            `${last}-0`,
          );
        } catch (err) {
          if (signal.aborted || this.closed) return;
          throw toStorageError(err, prefix);
        }
        for (const entry of streamEntries(raw)) {
          if (entry.rev !== last + 1) throw compacted(prefix, last);
          last = entry.rev;
          // One log holds every key: decode only the entries under the watched prefix.
          const key = entry.fields.get('k') ?? '';
          if (opts.recursive ? !key.startsWith(prefix) : key !== prefix) continue;
          const ev = toEvent(entry, opts.previous !== false);
          if (ev) yield ev;
          if (signal.aborted || this.closed) return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.watchConns.delete(conn);
      conn.disconnect();
    }
  }

  /** The oldest revision still readable. */
  private async floor(key: string): Promise<number> {
    const first = await this.call(key, () => this.client.xrange(`${this.ns}log`, '-', '+', 'COUNT', 1));
    const id = first[0]?.[0];
    if (!id) return this.currentRevision();
    return Number(id.split('-')[0]) - 1;
  }

  private async readCurrent(key: string): Promise<Current> {
    const [json, rev] = await this.call(key, () => this.client.hmget(`${this.ns}o:${key}`, 'v', 'm'));
    if (json === null || json === undefined || !rev) throw new StorageError('KeyNotFound', key);
    return { json, rev: Number(rev) };
  }

  /** The live keys (in key order) under `prefix` from `start` at revision `at` (0 = now). */
  private async read(o: {
    prefix: string;
    start: string;
    at: number;
    exact: boolean;
  }): Promise<{ revision: number; entries: Array<{ key: string; json: string; rev: number }> }> {
    const res = (await this.script(o.prefix, scripts.READ, [
      o.prefix,
      o.start,
      prefixEnd(o.prefix),
      String(o.at),
      o.exact ? '1' : '0',
    ])) as unknown[];
    const status = String(res[0]);
    const current = Number(res[1]);
    if (status === 'future') {
      throw new StorageError('FutureRevision', o.prefix, {
        message: `${o.at}, current: ${current}`,
        revision: current,
      });
    }
    if (status === 'compacted') throw compacted(o.prefix, o.at);
    const live = res[3] as string[];
    const touched = res[4] as string[];
    const state = new Map<string, { json: string; rev: number }>();
    for (let i = 0; i + 2 < live.length; i += 3) {
      state.set(live[i] as string, { json: live[i + 1] as string, rev: Number(live[i + 2]) });
    }
    for (let i = 0; i + 3 < touched.length; i += 4) {
      const key = touched[i] as string;
      if (!o.exact && key < o.start) continue;
      if (touched[i + 1] === 'A') state.delete(key);
      else state.set(key, { json: touched[i + 2] as string, rev: Number(touched[i + 3]) });
    }
    const keys = [...state.keys()].sort(compareKeys);
    return {
      revision: o.at > 0 ? o.at : current,
      entries: keys.map((key) => ({ key, ...(state.get(key) as { json: string; rev: number }) })),
    };
  }

  /** Runs a script by its SHA, loading it when Redis does not know it (first use, after a restart). */
  private async script(key: string, source: string, args: string[]): Promise<unknown> {
    let sha = this.shas.get(source);
    if (!sha) {
      sha = createHash('sha1').update(source).digest('hex');
      this.shas.set(source, sha);
    }
    const digest = sha;
    return this.call(key, async () => {
      try {
        return await this.client.evalsha(digest, 0, this.ns, ...args);
      } catch (err) {
        if (!messageOf(err).startsWith('NOSCRIPT')) throw err;
        return this.client.eval(source, 0, this.ns, ...args);
      }
    });
  }

  private async call<T>(key: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StorageError('Unreachable', key, { message: 'redis storage is closed' });
    try {
      return await fn();
    } catch (err) {
      throw toStorageError(err, key);
    }
  }
}

function clientOptions(requestTimeoutMs: number): RedisOptions {
  return {
    lazyConnect: false,
    commandTimeout: requestTimeoutMs,
    // Keep retrying a restarted Redis; a command waits in the offline queue meanwhile.
    retryStrategy: (times) => Math.min(50 * times, 1000),
    maxRetriesPerRequest: 20,
    enableAutoPipelining: true,
  };
}

interface LogEntry {
  rev: number;
  fields: Map<string, string>;
}

/**
 * The entries of an XREAD reply on one stream: `[[name, entries]]` in RESP2, `[name, entries]`
 * when the client speaks RESP3 (a map).
 */
function streamEntries(raw: unknown): LogEntry[] {
  if (!Array.isArray(raw)) return [];
  const lists: unknown[] = typeof raw[0] === 'string' ? [raw[1]] : raw.map((s) => (s as unknown[])[1]);
  const out: LogEntry[] = [];
  for (const list of lists) {
    for (const [id, flat] of list as Array<[string, string[]]>) {
      const fields = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
      out.push({ rev: Number(id.split('-')[0]), fields });
    }
  }
  return out;
}

/** A watch event from a log entry (as `Etcd3Storage` makes them from etcd's). */
function toEvent(e: LogEntry, previous: boolean): StorageEvent | undefined {
  const key = e.fields.get('k');
  const type = e.fields.get('t');
  if (!key || !type) return undefined;
  const prev = e.fields.get('pv');
  const prevRev = Number(e.fields.get('pm') ?? 0);
  if (type === 'D') {
    if (prev === undefined)
      throw new StorageError('InvalidObject', key, { message: 'delete without a previous value' });
    const prevObject = decodeStored(key, prev, prevRev);
    return { type: 'DELETED', key, object: atRevision(prevObject, e.rev), prevObject, revision: e.rev };
  }
  const value = e.fields.get('v') ?? '';
  const ev: StorageEvent = {
    type: type === 'A' ? 'ADDED' : 'MODIFIED',
    key,
    object: decodeStored(key, value, e.rev),
    revision: e.rev,
  };
  if (type === 'M' && prev !== undefined && previous) ev.prevObject = decodeStored(key, prev, prevRev);
  return ev;
}

/** The answer of UPDATE/DELETE: written at `rev`, or the key's current state to retry from. */
function casResult(key: string, res: unknown): CasResult<Current> {
  const r = res as unknown[];
  if (r.length === 0) throw new StorageError('KeyNotFound', key);
  if (Number(r[0]) === 1) return { rev: Number(r[1]) };
  return { current: { json: String(r[1]), rev: Number(r[2]) } };
}

function ttlMs(ttlSeconds: number | undefined): string {
  return ttlSeconds && ttlSeconds > 0 ? String(Math.ceil(ttlSeconds * 1000)) : '0';
}

function compacted(key: string, rev: number): StorageError {
  return new StorageError('ResourceVersionCompacted', key, { message: `revision ${rev} has been compacted` });
}

function checkMinRevision(key: string, readAt: number, minRevision: number | undefined): void {
  if (minRevision !== undefined && minRevision > readAt) {
    throw new StorageError('FutureRevision', key, { message: `${minRevision}, current: ${readAt}`, revision: readAt });
  }
}

/** Byte order of UTF-8 keys (etcd's and ZRANGEBYLEX's). */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The first key after every key that starts with `prefix`. */
function prefixEnd(prefix: string): string {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if ((b[i] as number) < 0xff) {
      b[i] = (b[i] as number) + 1;
      return b.subarray(0, i + 1).toString('latin1');
    }
  }
  return '\xff';
}

/** Connection failures and timeouts are `Unreachable`; others pass through. */
function toStorageError(err: unknown, key: string): unknown {
  if (err instanceof StorageError) return err;
  const message = messageOf(err);
  if (/ECONNREFUSED|Connection is closed|Command timed out|MaxRetriesPerRequest|ECONNRESET|LOADING/.test(message)) {
    return new StorageError('Unreachable', key, { message: `redis unreachable: ${message}` });
  }
  return err;
}
