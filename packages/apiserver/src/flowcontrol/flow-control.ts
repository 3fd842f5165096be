import {
  apfAutoUpdateAnnotation,
  group,
  isAlreadyExists,
  isNotFound,
  type ApiObject,
  type Catalog,
  type FlowSchema,
  type PriorityLevelConfiguration,
  type ResourceType,
} from '@svc/api';
import { PostStartHook, type Logger, type UserInfo } from '@svc/component-base';
import { parseGoBool } from '@svc/machinery';
import type { Registry } from 'prom-client';
import { StoreInformer } from '../authz/rbac/informer.js';
import type { RequestInfo } from '../endpoints/request-info.js';
import type { GenericStore } from '../registry/store.js';
import { retryUntil } from '../server/retry.js';
import { forEachInParallel } from '../server/in-parallel.js';
import {
  CATCH_ALL,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from './bootstrap.js';
import { byPrecedence, flowDistinguisher, schemaMatches } from './classify.js';
import { Dispatcher, levelLimits, type PriorityLevel } from './dispatcher.js';
import { FlowControlMetrics } from './metrics.js';
import { DanglingConditions } from './dangling.js';
import { ObjectCounts } from './object-counts.js';
import { WatchTracker } from './watch-tracker.js';
import { estimateWork, maxSeats, type WorkEstimate, type WorkEstimatorSources } from './work-estimator.js';

/** The configuration objects to ensure, each with whether it is mandatory. */
type EnsurePlan = Array<{ type: ResourceType; wanted: ApiObject; mandatory: boolean }>;

/** Writes in flight at once while ensuring the configuration objects. */
const ENSURE_WORKERS = 8;

export interface FlowControlConfig {
  catalog: Catalog;
  storeFor: (r: ResourceType) => GenericStore;
  log: Logger;
  registry: Registry;
  /** `--max-requests-inflight` + `--max-mutating-requests-inflight`. */
  serverSeats: number;
  /** The WatchList feature gate: a watch asking for its initial events costs what its list would. */
  watchList?: boolean;
  /** Consistent lists come from the watch cache (ConsistentListFromCache and the cache on); default true. */
  consistentListFromCache?: boolean;
}

/** What classification found: the schema, the level and the flow, with the UIDs the response headers carry. */
export interface Classification {
  flowSchema: string;
  flowSchemaUid: string;
  level: PriorityLevel;
  levelUid: string;
  flow: string;
}

/** Kubernetes' `strconv.ParseBool`; undefined when absent or unparsable. */
function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  try {
    return parseGoBool(v);
  } catch {
    return undefined;
  }
}

/** Deep equality of JSON values, key order ignored. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, sorted(x)]),
    );
  return v;
}

/**
 * API priority and fairness: the configuration objects (created and kept up to date by
 * `poststarthook/priority-and-fairness-config-producer`, read back through informers over the
 * server's own stores), the classification of requests, the dispatcher of seats, and each
 * FlowSchema's `Dangling` condition.
 */
export class FlowControl {
  readonly producerHook = new PostStartHook('priority-and-fairness-config-producer');
  readonly metrics: FlowControlMetrics;
  readonly dispatcher: Dispatcher;
  /** Stored objects per resource, fed by the `apiserver_storage_objects` poll: what lists cost. */
  readonly objectCounts = new ObjectCounts();
  /** Open watches: what a write's notifications cost. */
  readonly watches = new WatchTracker();
  private readonly estimatorSources: WorkEstimatorSources;
  private schemas: FlowSchema[] = [];
  private levels = new Map<string, PriorityLevelConfiguration>();
  private readonly types: { schemas?: ResourceType; levels?: ResourceType };
  private informers?: { schemas: StoreInformer; levels: StoreInformer };
  private dangling?: DanglingConditions;
  /** Both informers have listed once. */
  private bothListed = false;

  constructor(private readonly c: FlowControlConfig) {
    this.metrics = new FlowControlMetrics(c.registry);
    this.dispatcher = new Dispatcher(this.metrics);
    this.estimatorSources = {
      objectCount: (gr) => this.objectCounts.get(gr),
      watchCount: (info) => this.watches.interested(info),
      levelMaxSeats: (level) => this.dispatcher.level(level)?.limits.maxSeats ?? 0,
      watchList: c.watchList ?? false,
      consistentListFromCache: c.consistentListFromCache ?? true,
    };
    const g = group('flowcontrol.apiserver');
    this.types = {
      schemas: c.catalog.lookup(g, 'v1', 'flowschemas'),
      levels: c.catalog.lookup(g, 'v1', 'prioritylevelconfigurations'),
    };
    // Until the informers have listed, the built-in configuration classifies.
    this.apply(
      [...mandatoryFlowSchemas(), ...suggestedFlowSchemas()],
      [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()],
    );
  }

  get hooks(): PostStartHook[] {
    return [this.producerHook];
  }

  /**
   * Creates or updates the configuration objects (retried until the store answers; the
   * producer hook is done then) and again every minute; watches the objects until `signal`.
   */
  async start(signal: AbortSignal): Promise<void> {
    const { schemas, levels } = this.types;
    if (!schemas || !levels) {
      this.producerHook.done(); // the group is switched off: the built-in configuration stays
      return;
    }
    const warn = (what: string) => (e: unknown) =>
      this.c.log.warn(`${what} informer failed; relisting`, { error: (e as Error).message });
    this.informers = {
      schemas: new StoreInformer(() => this.c.storeFor(schemas), warn('flowschemas')),
      levels: new StoreInformer(() => this.c.storeFor(levels), warn('prioritylevelconfigurations')),
    };
    this.dangling = new DanglingConditions({
      store: () => this.c.storeFor(schemas),
      log: this.c.log,
      snapshot: () => ({
        schemas: [...(this.informers?.schemas.list() ?? [])] as FlowSchema[],
        levelExists: (name) => this.levels.has(name),
      }),
    });
    const onChange = (): void => this.reload();
    this.informers.schemas.onChange(onChange);
    this.informers.levels.onChange(onChange);
    void this.informers.schemas.run(signal);
    void this.informers.levels.run(signal);
    void Promise.all([this.informers.schemas.synced, this.informers.levels.synced]).then(() => {
      this.bothListed = true;
      this.reload();
    });
    await retryUntil(
      signal,
      () => this.ensure(),
      (e, n) =>
        this.c.log.warn('priority-and-fairness-config-producer failed; retrying', {
          error: (e as Error).message,
          attempt: n,
        }),
    );
    this.producerHook.done();
    const timer = setInterval(() => {
      this.ensure().catch((e: unknown) =>
        this.c.log.warn('APF configuration not ensured', { error: (e as Error).message }),
      );
    }, 60_000);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /** Kubernetes' ensurer: mandatory objects always as defined, suggested ones while auto-update allows. */
  private async ensure(): Promise<void> {
    const { schemas, levels } = this.types;
    if (!schemas || !levels) return;
    const levelPlan: EnsurePlan = [
      ...mandatoryPriorityLevels().map((wanted) => ({ type: levels, wanted, mandatory: true })),
      ...suggestedPriorityLevels().map((wanted) => ({ type: levels, wanted, mandatory: false })),
    ];
    const schemaPlan: EnsurePlan = [
      ...mandatoryFlowSchemas().map((wanted) => ({ type: schemas, wanted, mandatory: true })),
      ...suggestedFlowSchemas().map((wanted) => ({ type: schemas, wanted, mandatory: false })),
    ];
    // The levels before the schemas that name them; within each kind the objects are independent.
    const each = (p: EnsurePlan[number]): Promise<void> => this.ensureOne(p);
    await forEachInParallel(levelPlan, { workers: ENSURE_WORKERS, each });
    await forEachInParallel(schemaPlan, { workers: ENSURE_WORKERS, each });
  }

  private async ensureOne(p: { type: ResourceType; wanted: ApiObject; mandatory: boolean }): Promise<void> {
    const store = this.c.storeFor(p.type);
    const name = p.wanted.metadata.name ?? '';
    const key = apfAutoUpdateAnnotation();
    // Read from the informers once they have listed, as Kubernetes' ensurer reads its listers
    // (no etcd read per object on every start and every minute). A copy behind the store is
    // corrected by the next pass: a create then finds the object there, an update rewrites
    // the stored one.
    const informer = this.informers?.[p.type === this.types.schemas ? 'schemas' : 'levels'];
    let current: ApiObject | undefined;
    if (informer) {
      await informer.synced;
      current = informer.get('', name);
    } else {
      current = await store.get('', name).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
    }
    if (current === undefined) {
      try {
        await store.create('', structuredClone(p.wanted), { ctx: {} });
        this.c.log.info('created APF configuration object', { kind: p.wanted.kind, name });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    const annotation = current.metadata.annotations?.[key];
    const autoUpdate = p.mandatory || (parseBool(annotation) ?? current.metadata.generation === 1);
    if (!autoUpdate) return;
    if (same(current.spec, p.wanted.spec) && annotation === 'true') return;
    await store.update('', name, {
      ctx: {},
      updater: (obj) => ({
        ...obj,
        metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [key]: 'true' } },
        spec: structuredClone(p.wanted.spec),
      }),
    });
    this.c.log.info('updated APF configuration object', { kind: p.wanted.kind, name });
  }

  /** The informers changed: the new configuration, and each schema's Dangling condition. */
  private reload(): void {
    if (!this.informers) return;
    const schemas = [...this.informers.schemas.list()] as FlowSchema[];
    const levels = [...this.informers.levels.list()] as PriorityLevelConfiguration[];
    // The mandatory levels serve even while their objects are missing (Kubernetes imagines them).
    for (const m of mandatoryPriorityLevels())
      if (!levels.some((l) => l.metadata.name === m.metadata.name)) levels.push(m);
    this.apply(schemas, levels);
    // Only once both kinds have listed (Kubernetes' controller waits for its caches): with one
    // of them listed alone, every schema would look dangling, or its condition unknown.
    if (this.bothListed) this.dangling?.request();
  }

  private apply(schemas: FlowSchema[], levels: PriorityLevelConfiguration[]): void {
    this.levels = new Map(levels.map((l) => [l.metadata.name ?? '', l]));
    this.dispatcher.configure(levelLimits(levels, this.c.serverSeats));
    const fallback = mandatoryFlowSchemas().filter((m) => !schemas.some((s) => s.metadata.name === m.metadata.name));
    this.schemas = [...schemas, ...fallback]
      .filter((s) => this.levels.has(s.spec.priorityLevelConfiguration?.name ?? ''))
      .sort(byPrecedence);
  }

  /** The first schema by matching precedence that takes the request; catch-all when none does. */
  classify(user: UserInfo, info: RequestInfo): Classification {
    const fs =
      this.schemas.find((s) => schemaMatches(s, user, info)) ??
      this.schemas.find((s) => s.metadata.name === CATCH_ALL) ??
      (mandatoryFlowSchemas()[1] as FlowSchema);
    const levelName = fs.spec.priorityLevelConfiguration.name;
    const level = this.dispatcher.level(levelName) ?? (this.dispatcher.level(CATCH_ALL) as PriorityLevel);
    const name = fs.metadata.name ?? '';
    return {
      flowSchema: name,
      flowSchemaUid: fs.metadata.uid ?? '',
      level,
      levelUid: this.levels.get(levelName)?.metadata.uid ?? '',
      flow: `${name}\u0000${flowDistinguisher(fs, user, info)}`,
    };
  }

  /** The seats the request takes and for how long (Kubernetes' work estimator), observed in the metrics. */
  estimate(info: RequestInfo, c: Classification): WorkEstimate {
    const labels = { flow_schema: c.flowSchema, priority_level: c.level.name };
    const sources: WorkEstimatorSources = {
      ...this.estimatorSources,
      watchCount: (i) => {
        const n = this.watches.interested(i);
        this.metrics.watchCountSamples.observe(labels, n);
        return n;
      },
    };
    const we = estimateWork(info, c.level.name, sources);
    this.metrics.workEstimatedSeats.observe(labels, maxSeats(we));
    return we;
  }
}
