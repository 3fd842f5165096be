import { isNotFound, type ApiObject, type ResourceType } from '@svc/api';
import type { Admission } from '../admission/admission.js';
import { resourcePrefix } from '../registry/keys.js';
import { GenericStore, type AdmissionChain, type StoreOptions } from '../registry/store.js';
import type { Strategy } from '../registry/strategy.js';
import { ServiceStore, type ServiceAllocation } from '../registry/service-store.js';
import { customResourceStorage } from '../apiextensions/version-conversion.js';
import { ConvertingStorage } from '../storage/converting-storage.js';
import type { Storage } from '../storage/interface.js';

export interface StoresConfig {
  storage: Storage;
  storePrefix: string;
  /** `--event-ttl` in whole seconds; 0 keeps Events forever. */
  eventTtlSeconds: number;
  /** A type's strategy (built-in types: `strategyFor`; custom resources: theirs). */
  strategyFor: (r: ResourceType) => Strategy | undefined;
  /** Where Services take their ClusterIPs and node ports (core Services get a ServiceStore). */
  serviceAllocation?: ServiceAllocation;
  /** `--delete-collection-workers` and `--enable-garbage-collector`, for every store. */
  deleteCollectionWorkers?: number;
  enableGarbageCollector?: boolean;
}

/**
 * One generic store per served type, made on first use. Admission plugins read through these
 * stores, so the admission chain is handed over after they exist (`admitWith`), before any
 * store is used.
 */
export class Stores {
  private readonly byType = new Map<ResourceType, GenericStore>();
  private admission?: Admission;

  constructor(private readonly c: StoresConfig) {}

  /** The admission chain every write through these stores runs; set once. */
  admitWith(admission: Admission): void {
    if (this.admission) throw new Error('the stores already have an admission chain');
    this.admission = admission;
  }

  /**
   * What stores run: the chain handed over by `admitWith`, looked up at each write. Stores may
   * be made earlier (plugins start informers over them while the chain is being built); a
   * write before the chain exists is a server bug and fails.
   */
  private readonly chain: AdmissionChain = {
    admit: (a) => this.current().admit(a),
    validate: (a) => this.current().validate(a),
  };

  private current(): Admission {
    if (!this.admission) throw new Error('a write reached a store before admission was built');
    return this.admission;
  }

  storeFor(r: ResourceType): GenericStore {
    let s = this.byType.get(r);
    if (!s) {
      s = this.make(r);
      this.byType.set(r, s);
    }
    return s;
  }

  /** Drops the store of a type no longer served (a deleted CRD's versions). */
  forget(r: ResourceType): void {
    this.byType.delete(r);
  }

  /** The Service ranges (`--service-cluster-ip-range`, `--service-node-port-range`), when Services take addresses. */
  get serviceAllocation(): ServiceAllocation | undefined {
    return this.c.serviceAllocation;
  }

  /**
   * Like Kubernetes' listers: the cached object first (resourceVersion 0), a live read only
   * when the cache does not have it (it may have just been created) or `fresh` is asked.
   * Undefined when the type is not served or the object does not exist.
   */
  async readCachedFirst(
    r: ResourceType | undefined,
    ref: { namespace: string; name: string; fresh?: boolean },
  ): Promise<ApiObject | undefined> {
    if (!r) return undefined;
    for (const rv of ref.fresh ? [undefined] : ['0', undefined]) {
      try {
        return await this.storeFor(r).get(ref.namespace, ref.name, rv);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return undefined;
  }

  private make(r: ResourceType): GenericStore {
    const { storage, storePrefix } = this.c;
    const stored = r.storedAs ?? r;
    const isEvent = stored.group === '' && stored.plural === 'events';
    const options: StoreOptions = {
      resource: r,
      storePrefix,
      deleteCollectionWorkers: this.c.deleteCollectionWorkers,
      enableGarbageCollector: this.c.enableGarbageCollector,
      strategy: this.c.strategyFor(r),
      admission: this.chain,
      storage: r.custom
        ? customResourceStorage(storage, { storePrefix, resource: r })
        : r.storedAs
          ? new ConvertingStorage(storage, {
              servedPrefix: resourcePrefix(storePrefix, r),
              storedPrefix: resourcePrefix(storePrefix, r.storedAs),
              toStored: r.storedAs.toStored,
              fromStored: r.storedAs.fromStored,
            })
          : storage,
      // As Kubernetes: Events (of either API) expire `--event-ttl` after their last write.
      ttlSeconds: isEvent ? this.c.eventTtlSeconds || undefined : undefined,
    };
    const services = this.c.serviceAllocation;
    if (services && !r.custom && r.group === '' && r.kind === 'Service') return new ServiceStore(options, services);
    return new GenericStore(options);
  }
}
