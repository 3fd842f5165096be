import type { ApiObject, Status } from '@svc/api';
import type { GenericStore } from '../../registry/store.js';

/** One object's change as the informer saw it, or `reset` after a (re)list replaced everything. */
export type ObjectChange = { reset: true } | { reset?: false; old?: ApiObject; next?: ApiObject };

/**
 * An informer over one of the server's own stores: list from the watch cache
 * (resourceVersion 0), then watch from the list's revision; relists when the watch ends
 * (410 or storage error). Objects are the cache's: never mutate them. `onChange` runs after
 * every batch of changes; `onObject` for each object changed (for indexes kept up to date
 * one object at a time instead of rebuilt from the whole store).
 */
export class StoreInformer {
  private readonly objects = new Map<string, ApiObject>();
  private revision = 0;
  private syncedResolve!: () => void;
  readonly synced: Promise<void> = new Promise((r) => {
    this.syncedResolve = r;
  });
  private readonly listeners: Array<() => void> = [];
  private readonly objectListeners: Array<(c: ObjectChange) => void> = [];

  constructor(
    private readonly storeOf: () => GenericStore,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  static key(namespace: string | undefined, name: string): string {
    return namespace ? `${namespace}/${name}` : name;
  }

  onChange(f: () => void): void {
    this.listeners.push(f);
  }

  onObject(f: (c: ObjectChange) => void): void {
    this.objectListeners.push(f);
  }

  get(namespace: string, name: string): ApiObject | undefined {
    return this.objects.get(StoreInformer.key(namespace, name));
  }

  list(): IterableIterator<ApiObject> {
    return this.objects.values();
  }

  /** The newest revision the informer has seen (list revision or last event). */
  get resourceVersion(): number {
    return this.revision;
  }

  /** Runs until `signal` fires. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const l = await this.storeOf().list('', { resourceVersion: '0' });
        this.objects.clear();
        for (const o of l.items) this.objects.set(StoreInformer.key(o.metadata.namespace, o.metadata.name ?? ''), o);
        this.revision = Number(l.metadata.resourceVersion ?? 0);
        for (const f of this.objectListeners) f({ reset: true });
        this.notify();
        this.syncedResolve();
        for await (const batch of this.storeOf().watch('', { resourceVersion: String(this.revision) }, signal)) {
          for (const e of batch) {
            if (e.type === 'ERROR') throw new Error((e.object as Status).message ?? 'watch error');
            const o = e.object as ApiObject;
            if (e.type !== 'BOOKMARK') {
              const k = StoreInformer.key(o.metadata.namespace, o.metadata.name ?? '');
              const old = this.objects.get(k);
              if (e.type === 'DELETED') this.objects.delete(k);
              else this.objects.set(k, o);
              const next = e.type === 'DELETED' ? undefined : o;
              for (const f of this.objectListeners) f({ old, next });
            }
            const rv = Number(o.metadata.resourceVersion ?? 0);
            if (rv > this.revision) this.revision = rv;
          }
          this.notify();
        }
      } catch (e) {
        if (signal.aborted) return;
        this.onError(e);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private notify(): void {
    for (const f of this.listeners) f();
  }
}
