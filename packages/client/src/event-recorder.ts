import type { Event, ObjectMeta } from '@svc/api';
import type { RestClient } from './rest-client.js';
import { ResourceClient } from './resource-client.js';
import { silentClientLogger, type ClientLogger } from './logger.js';

export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent` (the scheduler: `default-scheduler`). */
  component: string;
  /**
   * `reportingInstance` (Kubernetes: `<component>-<hostname>`). With it, Events carry
   * `eventTime` and `action`, as the scheduler's do; without it they are the older core/v1
   * kind client-go's recorder writes for controllers (no `eventTime`, no `action`).
   */
  instance?: string;
  /** `source.host`, and `reportingInstance` of the older kind (the node agent: its node name). */
  host?: string;
  logger?: ClientLogger;
  /** How many distinct events are remembered for counting repeats (Kubernetes' LRU: 4096). */
  cacheSize?: number;
  /** The clock (ms) of the spam filter; tests move it. */
  now?: () => number;
}

/** One event to record about an object. */
export interface EventOptions {
  /** The object the event is about. */
  object: { metadata: ObjectMeta };
  /**
   * The object's type: objects from a list or an informer carry no `apiVersion`/`kind`, so
   * the caller names them (`apps/v1`, `ReplicaSet`).
   */
  apiVersion: string;
  kind: string;
  type: 'Normal' | 'Warning';
  reason: string;
  /** What was being done (`Scheduling`, `Binding`); written only by recorders with an `instance`. */
  action?: string;
  message: string;
  /** A part of the object (a pod's `spec.containers{web}`). */
  fieldPath?: string;
}

/**
 * client-go's spam filter: per source and object, a bucket of 25 events refilled with one
 * every 5 minutes; an event finding it empty is dropped. And at most 1000 events wait to be
 * written; more are dropped (client-go's full queue).
 */
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 300_000;
const MAX_PENDING = 1000;

interface Bucket {
  tokens: number;
  at: number;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

/** `metav1.Time`: RFC 3339 in whole seconds. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Records core/v1 Events about objects, as client-go's recorder does: one Event per distinct
 * (object, type, reason, message), named `<object>.<hex nanoseconds>` in the object's
 * namespace (`default` for cluster-scoped objects); a repeat raises its `count` and
 * `lastTimestamp` instead. Writes happen in the background, in order; failures are logged,
 * never thrown.
 */
export class EventRecorder {
  private readonly events: ResourceClient<Event>;
  private readonly seen = new Map<string, Seen>();
  private readonly logger: ClientLogger;
  private tail: Promise<void> = Promise.resolve();
  private readonly buckets = new Map<string, Bucket>();
  private pending = 0;

  constructor(
    client: RestClient,
    private readonly o: EventRecorderOptions,
  ) {
    this.events = new ResourceClient<Event>(client, { group: '', version: 'v1', resource: 'events' });
    this.logger = o.logger ?? silentClientLogger;
  }

  /** Records an event (in the background; see the class comment). */
  event(e: EventOptions): void {
    if (this.pending >= MAX_PENDING || !this.allow(e)) return;
    this.pending++;
    this.tail = this.tail
      .then(() => this.write(e))
      .catch((err: unknown) => {
        this.logger.warn('could not write event', {
          reason: e.reason,
          object: `${e.object.metadata.namespace ?? ''}/${e.object.metadata.name ?? ''}`,
          error: String(err),
        });
      })
      .finally(() => {
        this.pending--;
      });
  }

  /** Takes a token from the object's bucket (the spam filter); false when it is empty. */
  private allow(e: EventOptions): boolean {
    const m = e.object.metadata;
    const key = JSON.stringify([e.apiVersion, e.kind, m.namespace, m.name, m.uid]);
    const now = (this.o.now ?? Date.now)();
    const b = this.buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) / SPAM_REFILL_MS);
    b.at = now;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    while (this.buckets.size > (this.o.cacheSize ?? 4096))
      this.buckets.delete(this.buckets.keys().next().value as string);
    if (b.tokens < 1) return false;
    b.tokens--;
    return true;
  }

  /** Resolves when every event recorded so far was written (or failed). */
  flush(): Promise<void> {
    return this.tail;
  }

  private async write(e: EventOptions): Promise<void> {
    const { type, reason, message, fieldPath } = e;
    const m = e.object.metadata;
    const namespace = m.namespace || 'default';
    const involvedObject = {
      kind: e.kind,
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      apiVersion: e.apiVersion,
      resourceVersion: m.resourceVersion,
      fieldPath,
    };
    const key = JSON.stringify([
      involvedObject.kind,
      involvedObject.namespace,
      involvedObject.name,
      involvedObject.uid,
      fieldPath,
      type,
      reason,
      message,
    ]);
    const now = new Date();
    const seen = this.seen.get(key);
    if (seen) {
      this.seen.delete(key);
      seen.count++;
      try {
        await this.events
          .namespace(seen.namespace)
          .patch(seen.name, { count: seen.count, lastTimestamp: rfc3339(now) }, { type: 'merge' });
        this.seen.set(key, seen);
        return;
      } catch {
        // Gone (expired or deleted): record it afresh.
      }
    }
    const name = `${m.name ?? ''}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))).toString(16)}`;
    const instance = this.o.instance;
    const created = await this.events.namespace(namespace).create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject,
      reason,
      message,
      type,
      count: 1,
      source: { component: this.o.component, ...(this.o.host ? { host: this.o.host } : {}) },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      ...(instance ? { action: e.action ?? '', eventTime: now.toISOString().replace('Z', '000Z') } : {}),
      reportingComponent: this.o.component,
      reportingInstance: instance ?? this.o.host ?? '',
    });
    this.seen.set(key, { name: created.metadata.name ?? name, namespace, count: 1 });
    while (this.seen.size > (this.o.cacheSize ?? 4096)) this.seen.delete(this.seen.keys().next().value as string);
  }
}
