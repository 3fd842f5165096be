import { isNotFound, type Catalog, type ResourceType } from '@svc/api';
import type { Logger } from '@svc/component-base';
import { StoreInformer } from '../authz/rbac/informer.js';
import type { GenericStore } from '../registry/store.js';
import { nowRfc3339 } from '../registry/store.js';
import { cleanupFinalizer, isConditionTrue, setCondition, type Crd } from './crd.js';
import { customResourceTypes } from './custom-resource-type.js';
import { calculateNames } from './naming.js';

export interface CrdControllerDeps {
  catalog: Catalog;
  /** The CustomResourceDefinition store. */
  crds: () => GenericStore;
  storeFor: (r: ResourceType) => GenericStore;
  /** A type's catalog entry was replaced or removed: what was made for it (its store) may go. */
  onReplaced?: (r: ResourceType) => void;
  /** A CRD is no longer served at all: its watch cache may go. */
  onRemoved?: (r: ResourceType) => void;
  log: Logger;
}

/** What the controller serves for one CRD. */
interface Served {
  /** What the types were made from (uid, spec, accepted names): a status-only change keeps them. */
  source: string;
  types: ResourceType[];
  terminating: boolean;
}

/**
 * Kubernetes' apiextensions controllers, inside the API server over an informer on CRDs:
 * naming (NamesAccepted, acceptedNames), establishing (Established), serving (each
 * Established CRD's served versions become catalog entries, replaced when it changes, removed
 * when it goes), and the `customresourcecleanup` finalizer (Terminating: creates refused,
 * every custom resource deleted, then the finalizer removed). Level-based: every change
 * reconciles every CRD, one pass at a time.
 */
export class CrdController {
  private readonly informer: StoreInformer;
  private readonly served = new Map<string, Served>();
  private pass: Promise<void> = Promise.resolve();
  private again = false;
  private running = false;
  private firstPassDone!: () => void;
  private signal?: AbortSignal;
  private retryTimer?: NodeJS.Timeout;
  /** Settles once the informer listed the CRDs and every Established one is served (`crd-informer-synced`). */
  readonly synced: Promise<void> = new Promise((r) => {
    this.firstPassDone = r;
  });

  constructor(private readonly d: CrdControllerDeps) {
    this.informer = new StoreInformer(d.crds, (e) =>
      d.log.warn('CRD informer failed; relisting', { error: (e as Error).message }),
    );
    this.informer.onChange(() => this.schedule());
  }

  /** The informer's list has arrived (`start-apiextensions-informers`). */
  get informerSynced(): Promise<void> {
    return this.informer.synced;
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    await this.informer.run(signal);
  }

  private schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.pass = this.pass.then(async () => {
      do {
        this.again = false;
        await this.reconcileAll().catch((e: unknown) =>
          this.d.log.warn('CRD reconcile failed', { error: (e as Error).message }),
        );
      } while (this.again);
      this.running = false;
      this.firstPassDone();
    });
  }

  private async reconcileAll(): Promise<void> {
    const crds = [...this.informer.list()] as Crd[];
    const present = new Set<string>();
    for (const crd of crds) {
      const name = crd.metadata.name ?? '';
      present.add(name);
      try {
        await this.reconcile(crd, crds);
      } catch (e) {
        if (!isNotFound(e)) this.d.log.warn('CRD reconcile failed', { crd: name, error: (e as Error).message });
      }
    }
    for (const name of [...this.served.keys()]) if (!present.has(name)) this.unserve(name);
  }

  private async reconcile(crd: Crd, all: readonly Crd[]): Promise<void> {
    const name = crd.metadata.name ?? '';
    if (crd.metadata.deletionTimestamp) {
      await this.finalize(crd);
      return;
    }
    const status = await this.updateNames(crd, all);
    if (isConditionTrue(status, 'Established')) this.serve(status, false);
    else this.unserve(name);
  }

  /** Names and conditions: writes status when they change; returns the CRD as it now is. */
  private async updateNames(crd: Crd, all: readonly Crd[]): Promise<Crd> {
    const { acceptedNames, namesAccepted, established } = calculateNames(crd, all);
    const next = structuredClone(crd);
    const now = nowRfc3339();
    (next.status ??= {}).acceptedNames = acceptedNames;
    let changed = JSON.stringify(crd.status?.acceptedNames) !== JSON.stringify(acceptedNames);
    changed = setCondition(next, namesAccepted, now) || changed;
    const ready = namesAccepted.status === 'True';
    const establish = ready
      ? {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        }
      : established;
    // Kubernetes' establishing controller follows the naming controller; one server needs no wait.
    changed = setCondition(next, established.status === 'True' ? established : establish, now) || changed;
    if (!changed) return crd;
    // Serve before the status says Established: a client that sees it may create at once.
    if (isConditionTrue(next, 'Established')) this.serve(next, false);
    return (await this.writeStatus(next)) ?? next;
  }

  private async writeStatus(crd: Crd): Promise<Crd | undefined> {
    const { object } = await this.d.crds().update('', crd.metadata.name ?? '', {
      updater: (current) => ({ ...current, status: crd.status }),
      ctx: {},
      subresource: 'status',
    });
    return object as Crd;
  }

  /** Registers the CRD's served versions in the catalog (again when the CRD changed). */
  private serve(crd: Crd, terminating: boolean): void {
    const name = crd.metadata.name ?? '';
    const current = this.served.get(name);
    const source = JSON.stringify([crd.metadata.uid, crd.spec, crd.status?.acceptedNames]);
    if (current && current.source === source && current.terminating === terminating) return;
    this.unserve(name, false);
    const types = customResourceTypes(crd, { terminating });
    for (const r of types) {
      if (this.d.catalog.lookup(r.group, r.version, r.plural)) {
        this.d.log.warn('custom resource overlaps a served resource; not served', { crd: name, version: r.version });
        continue;
      }
      this.d.catalog.add(r);
    }
    this.served.set(name, { source, types, terminating });
  }

  private unserve(name: string, notify = true): void {
    const current = this.served.get(name);
    if (!current) return;
    for (const r of current.types) {
      if (this.d.catalog.lookup(r.group, r.version, r.plural) === r)
        this.d.catalog.remove(r.group, r.version, r.plural);
      if (notify) this.d.onRemoved?.(r);
    }
    this.served.delete(name);
  }

  /**
   * A CRD being deleted: Terminating (creates refused), every custom resource deleted in the
   * storage version, then the cleanup finalizer removed so the CRD goes.
   */
  private async finalize(crd: Crd): Promise<void> {
    const name = crd.metadata.name ?? '';
    if (!(crd.metadata.finalizers ?? []).includes(cleanupFinalizer())) return;
    const next = structuredClone(crd);
    const now = nowRfc3339();
    const wasEstablished = isConditionTrue(crd, 'Established');
    if (
      setCondition(
        next,
        terminatingCondition('InstanceDeletionInProgress', 'CustomResource deletion is in progress'),
        now,
      )
    ) {
      crd = (await this.writeStatus(next)) ?? next;
    }
    if (wasEstablished) this.serve(crd, true);
    const types = this.served.get(name)?.types ?? [];
    const storage = types.find((r) => r.version === r.custom?.storageVersion) ?? types[0];
    if (storage) {
      const deleted = await this.deleteInstances(this.d.storeFor(storage));
      if (!deleted) {
        this.retryLater(); // instances with finalizers of their own: look again
        return;
      }
    }
    const done = structuredClone(crd);
    setCondition(done, terminatingCondition('InstanceDeletionCompleted', 'removed all instances'), nowRfc3339());
    await this.writeStatus(done);
    await this.d.crds().update('', name, {
      updater: (current) => {
        current.metadata.finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== cleanupFinalizer());
        return current;
      },
      ctx: {},
    });
  }

  private retryLater(): void {
    if (this.retryTimer || this.signal?.aborted) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.signal?.aborted) this.schedule();
    }, 1000);
    this.retryTimer.unref();
  }

  /** Deletes every instance; true when none is left. */
  private async deleteInstances(store: GenericStore): Promise<boolean> {
    const items = (await store.list('')).items;
    for (const item of items) {
      try {
        await store.delete(item.metadata.namespace ?? '', item.metadata.name ?? '', { ctx: {}, options: {} });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const left = await store.list('', { limit: 1 });
    return left.items.length === 0;
  }
}

function terminatingCondition(
  reason: string,
  message: string,
): { type: string; status: string; reason: string; message: string } {
  return { type: 'Terminating', status: 'True', reason, message };
}
