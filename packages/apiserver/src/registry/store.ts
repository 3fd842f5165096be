import { randomBytes, randomUUID } from 'node:crypto';
import {
  alreadyExists,
  badRequest,
  initialEventsEndAnnotation,
  isStatusError,
  conflict,
  expired,
  internalError,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  statusError,
  successStatus,
  timeout,
  fieldErrors,
  type ApiObject,
  type DeleteOptions,
  type FieldError,
  type ObjectList,
  type ResourceType,
  type Status,
} from '@svc/api';
import {
  isStorageError,
  type ReadConsistency,
  type Storage,
  type StorageError,
  type StorageEvent,
} from '../storage/interface.js';
import { watchBatchesOf } from '../storage/watch-batches.js';
import type { AdmissionAttributes } from '../admission/admission.js';

/** The admission chain a store runs: the mutating phase, then the validating one. */
export interface AdmissionChain {
  admit(attrs: AdmissionAttributes): Promise<void>;
  validate(attrs: AdmissionAttributes): Promise<void>;
}
import type { UserInfo } from '@svc/component-base';
import { collectionPrefix, objectKey, resourcePrefix } from './keys.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta.js';
import { DEFAULT_STRATEGY, type Strategy, type StrategyContext } from './strategy.js';
import { deepEqual, clone } from './object-utils.js';
import { updateManagedFields } from '@svc/machinery';

/** Who is asking and how: everything a store call needs besides its arguments. */
export interface RequestContext {
  user?: UserInfo;
  dryRun?: boolean;
  /** Who makes this write (`fieldManager`, or inferred from the User-Agent); recorded in managedFields. */
  fieldManager?: string;
  /** The request's warnings (admission may add some; they are sent as `Warning` headers). */
  warnings?: string[];
  /** The request's audit annotations (admission may add some). */
  annotations?: Record<string, string>;
}

/** How one write is made: who asks, and what the caller did already. */
export interface WriteParams {
  ctx: RequestContext;
  /** The caller already computed `metadata.managedFields` (server-side apply). */
  managedFieldsDone?: boolean;
}

export interface ListParams {
  labelMatch?: (labels: Record<string, string>) => boolean;
  fieldMatch?: (obj: ApiObject) => boolean;
  /** Whether a selector was given (remainingItemCount is then omitted). */
  filtered?: boolean;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface WatchParams {
  /** Watch one object (URL name or `metadata.name=` field selector). */
  name?: string;
  resourceVersion?: string;
  labelMatch?: (labels: Record<string, string>) => boolean;
  fieldMatch?: (obj: ApiObject) => boolean;
  sendInitialEvents?: boolean;
  allowBookmarks?: boolean;
  bookmarkEveryMs?: number;
}

export interface WatchEventOut {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: ApiObject | Status;
}

/** Read semantics of a resourceVersion: unset = Most Recent, `0` = Any, n = Not Older Than n (Exact when `exact`). */
function readConsistency(rv: string | undefined, exact: boolean): ReadConsistency {
  if (rv === undefined || rv === '') return {};
  if (rv === '0') return { allowStale: true };
  return exact ? { revision: Number(rv) } : { minRevision: Number(rv) };
}

export type Updater = (current: ApiObject) => ApiObject | Promise<ApiObject>;

export interface UpdateParams extends WriteParams {
  /** Turns the current object into the desired one; run again on every retry. */
  updater: Updater;
  /** '' for the main resource, 'status' for the status subresource. */
  subresource?: string;
  /** PUT to a missing object may create it (when the strategy allows). */
  createIfMissing?: (ctx: RequestContext) => Promise<ApiObject> | undefined;
}

export interface DeleteParams {
  ctx: RequestContext;
  /** The request's DeleteOptions: preconditions, propagation policy, grace period. */
  options: DeleteOptions;
}

export interface DeleteCollectionParams extends DeleteParams {
  /** Which objects: the list's selectors (its limit and continue token are ignored). */
  list: ListParams;
}

/** One admission call's objects: `object` as written (absent on DELETE), `oldObject` as stored (absent on CREATE). */
interface AdmissionChange {
  object?: ApiObject;
  oldObject?: ApiObject;
  subresource?: string;
}

export interface StoreOptions {
  resource: ResourceType;
  storage: Storage;
  storePrefix: string;
  strategy?: Strategy;
  admission: AdmissionChain;
  /** How many names to try for `generateName` before giving up. */
  generateNameAttempts?: number;
  /** Every write attaches the object to a store lease expiring this long after it (Events). */
  ttlSeconds?: number;
  /** `--delete-collection-workers`: deletes a DeleteCollection runs at once (default 1). */
  deleteCollectionWorkers?: number;
  /** `--enable-garbage-collector` (default true): false ignores the propagation policy (no orphan/foreground finalizers). */
  enableGarbageCollector?: boolean;
}

export interface DeleteResult {
  /** The object as deleted, or as updated when deletion is pending (finalizers, grace). */
  object: ApiObject;
  deleted: boolean;
}

const GENERATE_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(n = 5): string {
  const bytes = randomBytes(n);
  let s = '';
  for (const b of bytes) s += GENERATE_SUFFIX_ALPHABET[b % GENERATE_SUFFIX_ALPHABET.length];
  return s;
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The current time as metadata timestamps carry it (RFC 3339, whole seconds, UTC). */
export function nowRfc3339(): string {
  return rfc3339(new Date());
}

/**
 * The generic store: one per resource type. Runs the strategy, admission and metadata rules
 * around the storage calls and turns storage errors into Status errors. It never sees HTTP.
 */
export class GenericStore {
  readonly resource: ResourceType;
  private readonly storage: Storage;
  private readonly storePrefix: string;
  private readonly strategy: Strategy;
  private readonly admission: AdmissionChain;
  private readonly generateNameAttempts: number;
  private readonly writeOptions: { ttlSeconds?: number };
  private readonly deleteCollectionWorkers: number;
  private readonly enableGarbageCollector: boolean;

  constructor(opts: StoreOptions) {
    this.resource = opts.resource;
    this.storage = opts.storage;
    this.storePrefix = opts.storePrefix;
    this.strategy = { ...DEFAULT_STRATEGY, ...opts.strategy };
    this.admission = opts.admission;
    this.generateNameAttempts = opts.generateNameAttempts ?? 8;
    this.writeOptions = opts.ttlSeconds ? { ttlSeconds: opts.ttlSeconds } : {};
    this.deleteCollectionWorkers = opts.deleteCollectionWorkers ?? 1;
    this.enableGarbageCollector = opts.enableGarbageCollector ?? true;
  }

  private get tokenResource(): string {
    return `${this.resource.group || 'core'}/${this.resource.plural}`;
  }

  private get qr(): { group: string; resource: string } {
    return { group: this.resource.group, resource: this.resource.plural };
  }

  private key(namespace: string, name: string): string {
    return objectKey(this.storePrefix, this.resource, { namespace, name });
  }

  /** Translates storage failures; everything else passes through. */
  private translate(e: unknown, name: string): never {
    if (!isStorageError(e)) throw e;
    const se: StorageError = e;
    switch (se.code) {
      case 'KeyNotFound':
        throw notFound(this.qr, name);
      case 'KeyExists':
        throw alreadyExists(this.qr, name);
      case 'Conflict':
        throw conflict(this.qr, name, MODIFIED_CONFLICT);
      case 'ResourceVersionCompacted':
        throw expired(`too old resource version: ${se.message}`);
      case 'FutureRevision':
        throw timeout(`Too large resource version: ${se.message}`, 1);
      case 'Unreachable':
        throw statusError('InternalError', `Internal error occurred: store unreachable: ${se.message}`);
      default:
        throw internalError(se.message);
    }
  }

  private async exists(namespace: string, name: string): Promise<boolean> {
    try {
      await this.storage.get(this.key(namespace, name));
      return true;
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) return false;
      return this.translate(e, name);
    }
  }

  /** Get with the spec's semantics: resourceVersion unset = Most Recent, `0` = Any, n = Not Older Than n. */
  async get(namespace: string, name: string, resourceVersion?: string): Promise<ApiObject> {
    try {
      return await this.storage.get(this.key(namespace, name), readConsistency(resourceVersion, false));
    } catch (e) {
      return this.translate(e, name);
    }
  }

  /** List with the spec's resourceVersion × resourceVersionMatch × limit/continue table. */
  async list(namespace: string, p: ListParams = {}): Promise<ObjectList> {
    const base = resourcePrefix(this.storePrefix, this.resource);
    const prefix = collectionPrefix(this.storePrefix, this.resource, namespace);
    let read: ReadConsistency;
    let startKey: string | undefined;
    if (p.continueToken) {
      const t = decodeContinue(p.continueToken, this.tokenResource);
      // rv -1: a recovery token after compaction continues at the latest revision.
      read = t.rv > 0 ? { revision: t.rv } : {};
      startKey = base + t.start;
      if (!startKey.startsWith(prefix))
        throw badRequest('invalid continue token: the token does not belong to this collection');
    } else if (p.resourceVersionMatch === 'Exact') {
      read = { revision: Number(p.resourceVersion) };
    } else if (p.resourceVersionMatch === 'NotOlderThan') {
      read = readConsistency(p.resourceVersion, false);
    } else {
      read = readConsistency(p.resourceVersion, !!p.limit);
    }
    const predicate =
      p.labelMatch || p.fieldMatch
        ? (o: ApiObject): boolean =>
            (!p.labelMatch || p.labelMatch(o.metadata.labels ?? {})) && (!p.fieldMatch || p.fieldMatch(o))
        : undefined;
    try {
      const res = await this.storage.list(prefix, { ...read, limit: p.limit, startKey, predicate });
      const metadata: ObjectList['metadata'] = { resourceVersion: String(res.revision) };
      if (res.nextKey) {
        metadata.continue = encodeContinue({
          rv: res.revision,
          start: res.nextKey.slice(base.length),
          resource: this.tokenResource,
        });
        if (!p.filtered && res.remainingItemCount !== undefined) metadata.remainingItemCount = res.remainingItemCount;
      }
      return { kind: this.resource.listKind, apiVersion: apiVersionOf(this.resource), metadata, items: res.items };
    } catch (e) {
      if (isStorageError(e, 'ResourceVersionCompacted')) {
        if (p.continueToken && startKey) {
          const err = expired(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          );
          err.status.metadata = {
            continue: encodeContinue({ rv: -1, start: startKey.slice(base.length), resource: this.tokenResource }),
          };
          throw err;
        }
        throw expired(`The resourceVersion for the provided list is too old.`);
      }
      return this.translate(e, '');
    }
  }

  /**
   * Watch with the spec's semantics: resourceVersion unset = state (consistent) then
   * changes, `0` = state (any) then changes, n = changes after n. Selectors filter with
   * transitions: an object that starts matching arrives ADDED, one that stops, DELETED.
   * Events come in batches (everything available at once, in order); a batch may be empty.
   */
  async *watch(namespace: string, p: WatchParams, signal: AbortSignal): AsyncGenerator<WatchEventOut[]> {
    const prefix = collectionPrefix(this.storePrefix, this.resource, namespace);
    const key = p.name ? this.key(namespace, p.name) : prefix;
    const matches = (o: ApiObject | undefined): boolean =>
      !!o &&
      (!p.name || o.metadata.name === p.name) &&
      (!p.labelMatch || p.labelMatch(o.metadata.labels ?? {})) &&
      (!p.fieldMatch || p.fieldMatch(o));
    let from: number;
    const initial = p.sendInitialEvents ?? (p.resourceVersion === undefined || p.resourceVersion === '0');
    try {
      if (initial) {
        const read = readConsistency(p.resourceVersion, false);
        const state = await this.storage.list(prefix, { ...read, predicate: matches });
        const first: WatchEventOut[] = state.items.map((o) => ({ type: 'ADDED', object: o }));
        from = state.revision;
        if (p.sendInitialEvents && p.allowBookmarks)
          first.push({ type: 'BOOKMARK', object: this.bookmark(from, true) });
        yield first;
      } else {
        from = Number(p.resourceVersion);
      }
      const opts = {
        fromRevision: from,
        recursive: !p.name,
        signal,
        bookmarkEveryMs: p.allowBookmarks ? p.bookmarkEveryMs : undefined,
      };
      const batches = watchBatchesOf(this.storage, key, opts);
      for await (const batch of batches) {
        const out: WatchEventOut[] = [];
        for (const e of batch) {
          const ev = this.filterEvent(e, matches);
          if (ev) out.push(ev);
        }
        if (out.length > 0) yield out;
      }
    } catch (e) {
      if (isStorageError(e, 'ResourceVersionCompacted')) {
        yield [
          {
            type: 'ERROR',
            object: expired(`too old resource version: ${p.resourceVersion ?? ''} (${e.revision ?? ''})`).status,
          },
        ];
        return;
      }
      if (signal.aborted) return;
      try {
        this.translate(e, p.name ?? '');
      } catch (se) {
        if (isStatusError(se)) {
          yield [{ type: 'ERROR', object: se.status }];
          return;
        }
        throw se;
      }
    }
  }

  /** One storage event as the watcher sees it through its selectors (undefined = not for it). */
  private filterEvent(e: StorageEvent, matches: (o: ApiObject | undefined) => boolean): WatchEventOut | undefined {
    if (e.type === 'BOOKMARK') return { type: 'BOOKMARK', object: this.bookmark(e.revision, false) };
    if (e.type === 'DELETED') return matches(e.object) ? { type: 'DELETED', object: e.object } : undefined;
    const now = matches(e.object);
    const before = e.type === 'MODIFIED' && matches(e.prevObject);
    if (now) return { type: now && before ? 'MODIFIED' : 'ADDED', object: e.object };
    if (before && e.prevObject) {
      const gone = clone(e.prevObject);
      gone.metadata.resourceVersion = String(e.revision);
      return { type: 'DELETED', object: gone };
    }
    return undefined;
  }

  private bookmark(rev: number, initialEventsEnd: boolean): ApiObject {
    const metadata: ApiObject['metadata'] = { resourceVersion: String(rev) };
    if (initialEventsEnd) metadata.annotations = { [initialEventsEndAnnotation()]: 'true' };
    return { kind: this.resource.kind, apiVersion: apiVersionOf(this.resource), metadata };
  }

  async create(namespace: string, input: ApiObject, w: WriteParams): Promise<ApiObject> {
    const { ctx } = w;
    const obj = clone(input);
    const m = obj.metadata;
    if (this.resource.namespaced) m.namespace = namespace;
    else delete m.namespace;
    m.uid = randomUUID();
    m.creationTimestamp = nowRfc3339();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.resourceVersion;
    if (this.resource.hasSpec) m.generation = 1;
    else delete m.generation;
    const sctx: StrategyContext = { user: ctx.user, subresource: '' };
    // Mutating admission runs before the strategy, as Kubernetes' handlers do.
    await this.admission.admit(this.attributes('CREATE', ctx, { object: obj }));
    this.strategy.prepareForCreate?.(obj, sctx);
    if (!w.managedFieldsDone) this.trackManagedFields(obj, undefined, { ctx });
    const generated = !m.name && !!m.generateName;
    for (let attempt = 0; ; attempt++) {
      if (generated) m.name = `${m.generateName ?? ''}${randomSuffix()}`;
      this.validateOrThrow(obj, [
        ...validateObjectMeta(this.resource, obj),
        ...((await this.strategy.validate?.(obj, sctx)) ?? []),
      ]);
      await this.admission.validate(this.attributes('CREATE', ctx, { object: obj }));
      // A dry run checks the name like the real create would (409 when taken).
      if (ctx.dryRun) {
        if (await this.exists(namespace, m.name ?? '')) {
          if (generated && attempt + 1 < this.generateNameAttempts) continue;
          throw alreadyExists(this.qr, m.name ?? '');
        }
        return obj;
      }
      try {
        return await this.storage.create(this.key(namespace, m.name ?? ''), obj, this.writeOptions);
      } catch (e) {
        if (generated && isStorageError(e, 'KeyExists') && attempt + 1 < this.generateNameAttempts) continue;
        return this.translate(e, m.name ?? '');
      }
    }
  }

  /**
   * Read-modify-write of one object: `p.updater` turns the current object into the desired
   * one; the store keeps server-owned fields, runs the strategy and admission, checks the
   * resourceVersion precondition and retries on concurrent modification.
   */
  async update(namespace: string, name: string, p: UpdateParams): Promise<{ object: ApiObject; created: boolean }> {
    const { ctx } = p;
    const key = this.key(namespace, name);
    const sub = p.subresource ?? '';
    const transform = async (current: ApiObject): Promise<ApiObject> => {
      const desired = await p.updater(clone(current));
      await this.admission.admit(
        this.attributes('UPDATE', ctx, { object: desired, oldObject: current, subresource: sub }),
      );
      return this.prepareUpdate(desired, current, p);
    };
    try {
      if (ctx.dryRun) {
        const current = await this.storage.get(key);
        const object = await transform(current);
        // Nothing is written: the answer keeps the version it was computed from, as Kubernetes' does.
        object.metadata.resourceVersion = current.metadata.resourceVersion;
        return { object, created: false };
      }
      const object = await this.storage.guaranteedUpdate(key, transform, this.writeOptions);
      if (this.shouldDeleteAfterUpdate(object)) {
        await this.storage.delete(key, { check: (cur) => this.checkUnchanged(cur, object) }).catch((e: unknown) => {
          if (!isStorageError(e, 'KeyNotFound') && !(e instanceof UnchangedCheckFailed)) throw e;
        });
      }
      return { object, created: false };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound') && p.createIfMissing && this.strategy.allowCreateOnUpdate) {
        const created = p.createIfMissing(ctx);
        if (created) return { object: await created, created: true };
      }
      return this.translate(e, name);
    }
  }

  get allowsCreateOnUpdate(): boolean {
    return this.strategy.allowCreateOnUpdate === true;
  }

  private async prepareUpdate(desired: ApiObject, current: ApiObject, p: UpdateParams): Promise<ApiObject> {
    const { ctx } = p;
    const sub = p.subresource ?? '';
    const name = current.metadata.name ?? '';
    const rv = desired.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
      throw conflict(this.qr, name, MODIFIED_CONFLICT);
    }
    if ((rv === undefined || rv === '') && !this.strategy.allowUnconditionalUpdate) {
      throw invalid(this.gk, name, [
        fieldErrors.invalid('metadata.resourceVersion', '', 'must be specified for an update'),
      ]);
    }
    if (desired.metadata.uid && desired.metadata.uid !== current.metadata.uid) {
      throw conflict(
        this.qr,
        name,
        `Precondition failed: UID in precondition: ${desired.metadata.uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    const obj = desired;
    const m = obj.metadata;
    const cm = current.metadata;
    m.uid = cm.uid;
    m.creationTimestamp = cm.creationTimestamp;
    if (this.resource.namespaced) m.namespace = cm.namespace;
    if (!m.name) m.name = cm.name;
    if (cm.deletionTimestamp) m.deletionTimestamp = cm.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (cm.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = cm.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    const sctx: StrategyContext = { user: ctx.user, subresource: sub };
    if (sub === 'finalize') {
      if (!this.strategy.prepareForFinalize)
        throw statusError('NotFound', 'the server could not find the requested resource');
      replaceContents(obj, this.strategy.prepareForFinalize(obj, current));
    } else if (sub !== '' && sub !== 'status' && this.strategy.prepareForSubresourceUpdate) {
      replaceContents(obj, this.strategy.prepareForSubresourceUpdate(obj, current, sctx));
    } else if (sub === 'status') {
      resetForStatusUpdate(obj, current);
      this.strategy.prepareForStatusUpdate?.(obj, current, sctx);
    } else {
      if (this.resource.subresources.includes('status')) {
        if (current.status === undefined) delete obj.status;
        else obj.status = clone(current.status);
      }
      if (cm.generation !== undefined) m.generation = cm.generation;
      else delete m.generation;
      this.strategy.prepareForUpdate?.(obj, current, sctx);
      if (this.resource.hasSpec && !deepEqual(obj.spec, current.spec)) m.generation = (cm.generation ?? 0) + 1;
    }
    // The subresource branches may have replaced obj.metadata; use the object's own.
    delete obj.metadata.resourceVersion;
    if (!p.managedFieldsDone) this.trackManagedFields(obj, current, { ctx, subresource: sub });
    const errs = validateObjectMetaUpdate(this.resource, obj, current);
    errs.push(
      ...((await (this.strategy.validateUpdate?.(obj, current, sctx) ?? this.strategy.validate?.(obj, sctx))) ?? []),
    );
    this.validateOrThrow(obj, errs);
    await this.admission.validate(
      this.attributes('UPDATE', ctx, { object: obj, oldObject: current, subresource: sub }),
    );
    return obj;
  }

  /**
   * Records this non-apply write in `metadata.managedFields`: the fields it changed move to
   * the writer's Update entry (no conflicts for non-apply writes). Main-resource writes of a
   * type with a status subresource do not own status; status writes own only status.
   */
  private trackManagedFields(
    obj: ApiObject,
    live: ApiObject | undefined,
    w: { ctx: RequestContext; subresource?: string },
  ): void {
    const sub = w.subresource ?? '';
    const hasStatus = this.resource.subresources.includes('status');
    const entries = updateManagedFields({
      live,
      updated: obj,
      manager: w.ctx.fieldManager ?? 'unknown',
      schema: this.resource.schema,
      apiVersion: apiVersionOf(this.resource),
      now: nowRfc3339(),
      subresource: sub || undefined,
      ignoreStatus: hasStatus && sub === '',
      onlyStatus: sub === 'status',
    });
    if (entries.length > 0) obj.metadata.managedFields = entries;
    else delete obj.metadata.managedFields;
  }

  private shouldDeleteAfterUpdate(obj: ApiObject): boolean {
    const m = obj.metadata;
    return (
      !!m.deletionTimestamp &&
      (m.finalizers ?? []).length === 0 &&
      (m.deletionGracePeriodSeconds ?? 0) === 0 &&
      !this.strategy.pendingFinalization?.(obj)
    );
  }

  private checkUnchanged(current: ApiObject, expected: ApiObject): void {
    if (current.metadata.resourceVersion !== expected.metadata.resourceVersion) throw new UnchangedCheckFailed();
  }

  async delete(namespace: string, name: string, p: DeleteParams): Promise<DeleteResult> {
    const { ctx, options } = p;
    const key = this.key(namespace, name);
    try {
      const current = await this.storage.get(key);
      this.checkPreconditions(current, options);
      // Kubernetes runs both phases on DELETE (a mutating webhook sees it but may not patch).
      const attrs = this.attributes('DELETE', ctx, { oldObject: current });
      await this.admission.admit(attrs);
      await this.admission.validate(attrs);
      const pending = this.pendingDeletion(current, options);
      if (pending) {
        if (ctx.dryRun) return { object: pending, deleted: false };
        const object = await this.storage.guaranteedUpdate(
          key,
          (cur) => {
            this.checkPreconditions(cur, options);
            return this.pendingDeletion(cur, options) ?? cur;
          },
          { ...this.writeOptions, cached: current },
        );
        if (this.shouldDeleteAfterUpdate(object))
          return this.delete(namespace, name, { ctx, options: { ...options, preconditions: undefined } });
        return { object, deleted: false };
      }
      if (ctx.dryRun) return { object: current, deleted: true };
      const object = await this.storage.delete(key, {
        cached: current,
        check: (cur) => {
          this.checkPreconditions(cur, options);
          if (this.pendingDeletion(cur, options)) throw conflict(this.qr, name, MODIFIED_CONFLICT);
        },
      });
      return { object, deleted: true };
    } catch (e) {
      return this.translate(e, name);
    }
  }

  /** The Status answered for an immediate delete of a type that does not return the object. */
  deletedStatus(obj: ApiObject): Status {
    return successStatus({
      name: obj.metadata.name,
      group: this.resource.group || undefined,
      kind: this.resource.plural,
      uid: obj.metadata.uid,
    });
  }

  get returnsDeletedObject(): boolean {
    return this.strategy.returnDeletedObject === true;
  }

  async deleteCollection(namespace: string, p: DeleteCollectionParams): Promise<ObjectList> {
    const { ctx, options, list } = p;
    const items = (await this.list(namespace, { ...list, limit: undefined, continueToken: undefined })).items;
    const results: Array<ApiObject | undefined> = [];
    // As Kubernetes: `--delete-collection-workers` deletes run at once, each taking the next item.
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < items.length; i = next++) {
        const item = items[i] as ApiObject;
        try {
          const r = await this.delete(item.metadata.namespace ?? '', item.metadata.name ?? '', {
            ctx,
            options: { ...options, preconditions: undefined },
          });
          results[i] = r.object;
        } catch (e) {
          if ((e as { status?: Status }).status?.reason !== 'NotFound') throw e;
        }
      }
    };
    const workers = Math.max(1, Math.min(this.deleteCollectionWorkers, items.length));
    await Promise.all(Array.from({ length: workers }, worker));
    const deleted = results.filter((o): o is ApiObject => o !== undefined);
    const res = await this.list(namespace, { limit: 1 });
    return {
      kind: this.resource.listKind,
      apiVersion: apiVersionOf(this.resource),
      metadata: { resourceVersion: res.metadata.resourceVersion },
      items: deleted,
    };
  }

  private checkPreconditions(current: ApiObject, options: DeleteOptions): void {
    const pre = options.preconditions;
    const name = current.metadata.name ?? '';
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw conflict(
        this.qr,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        this.qr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
  }

  /**
   * The object to write instead of deleting (deletionTimestamp set, propagation
   * finalizers added, graceful period), or undefined when it can go now. Kubernetes'
   * BeforeDelete + updateForGracefulDeletionAndFinalizers.
   */
  private pendingDeletion(current: ApiObject, options: DeleteOptions): ApiObject | undefined {
    const now = nowRfc3339();
    const custom = this.strategy.beforeDelete?.(clone(current), options, now);
    if (custom) return custom;
    const obj = clone(current);
    const m = obj.metadata;
    let finalizers = [...(m.finalizers ?? [])];
    // As Kubernetes: without the garbage collector no propagation finalizer is added or removed.
    const policy = !this.enableGarbageCollector
      ? undefined
      : (options.propagationPolicy ??
        (options.orphanDependents === true ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined));
    if (policy === 'Orphan' && !finalizers.includes('orphan'))
      finalizers = finalizers.filter((f) => f !== 'foregroundDeletion').concat('orphan');
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion'))
      finalizers = finalizers.filter((f) => f !== 'orphan').concat('foregroundDeletion');
    if (policy === 'Background') finalizers = finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
    const grace = this.strategy.gracePeriodSeconds?.(current, options) ?? 0;
    if (finalizers.length === 0 && grace === 0) return undefined;
    // As Kubernetes (markAsDeleting, BeforeDelete): the generation moves when deletion starts.
    if (!m.deletionTimestamp && (m.generation ?? 0) > 0) m.generation = (m.generation ?? 0) + 1;
    if (!m.deletionTimestamp || grace < (m.deletionGracePeriodSeconds ?? 0)) {
      m.deletionTimestamp = grace > 0 ? rfc3339(new Date(Date.now() + grace * 1000)) : now;
      m.deletionGracePeriodSeconds = grace;
    }
    if (finalizers.length > 0) m.finalizers = finalizers;
    else delete m.finalizers;
    return obj;
  }

  private get gk(): { group: string; kind: string } {
    return { group: this.resource.group, kind: this.resource.kind };
  }

  private validateOrThrow(obj: ApiObject, errs: FieldError[]): void {
    if (errs.length > 0) throw invalid(this.gk, obj.metadata.name ?? obj.metadata.generateName ?? '', errs);
  }

  private attributes(
    operation: AdmissionAttributes['operation'],
    ctx: RequestContext,
    change: AdmissionChange,
  ): AdmissionAttributes {
    const { object, oldObject } = change;
    const ref = object ?? oldObject;
    return {
      operation,
      resource: this.resource,
      subresource: change.subresource ?? '',
      namespace: ref?.metadata.namespace ?? '',
      name: ref?.metadata.name ?? '',
      object,
      oldObject,
      dryRun: ctx.dryRun === true,
      user: ctx.user,
      warnings: (ctx.warnings ??= []),
      annotations: (ctx.annotations ??= {}),
    };
  }
}

class UnchangedCheckFailed extends Error {}

function replaceContents(obj: ApiObject, next: ApiObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}

/** Kubernetes' ResetObjectMetaForStatus: a status write changes only `status`. */
function resetForStatusUpdate(obj: ApiObject, current: ApiObject): void {
  const status = obj.status;
  const managedFields = obj.metadata.managedFields;
  for (const k of Object.keys(obj)) if (k !== 'status') delete obj[k];
  for (const [k, v] of Object.entries(current)) if (k !== 'status') obj[k] = clone(v);
  if (status === undefined) delete obj.status;
  else obj.status = status;
  if (managedFields) obj.metadata.managedFields = managedFields;
}

export function apiVersionOf(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}
