import {
  fieldErrorMessage,
  fieldErrors,
  group,
  groupSpellings,
  statusError,
  type Event,
  type FieldError,
} from '@svc/api';
import { ConfigurationError } from '../options.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { aggregateMessage } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

export type EventLimitType = 'Server' | 'Namespace' | 'User' | 'SourceAndObject';

const LIMIT_TYPES: readonly EventLimitType[] = ['Server', 'Namespace', 'User', 'SourceAndObject'];

/** One limit of the configuration: a token bucket per key of its type. */
export interface EventLimit {
  type: EventLimitType;
  /** Tokens added per second. */
  qps: number;
  /** Bucket size, and what a new bucket starts with. */
  burst: number;
  /** Buckets kept (least recently used dropped first); 4096 when 0. Not for `Server`. */
  cacheSize: number;
}

/** Kubernetes' cache size when the configuration does not give one. */
export const DEFAULT_CACHE_SIZE = 4096;

/** The API versions the configuration may be written in: `eventratelimit.admission.<suffix>/v1alpha1`. */
export function eventRateLimitConfigVersions(): string[] {
  return groupSpellings(group('eventratelimit.admission')).map((g) => `${g}/v1alpha1`);
}

/**
 * Reads EventRateLimit's entry of `--admission-control-config-file` (Kubernetes' Configuration,
 * `eventratelimit.admission.<suffix>/v1alpha1`) and validates it as Kubernetes does: at least one
 * limit, a known type, qps and burst positive, cacheSize not negative. Without a configuration,
 * or with a bad one, the plugin cannot be built: a `ConfigurationError` (exit 2).
 */
export function parseEventRateLimitConfig(raw: unknown): EventLimit[] {
  const fail = (why: string): never => {
    throw new ConfigurationError(`--admission-control-config-file: EventRateLimit: ${why}`);
  };
  if (raw === undefined || raw === null) {
    return fail(fieldErrorMessage(fieldErrors.invalid('limits', null, 'must not be empty')));
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) return fail('configuration must be an object');
  const doc = raw as Record<string, unknown>;
  const versions = eventRateLimitConfigVersions();
  if (doc.kind !== 'Configuration' || typeof doc.apiVersion !== 'string' || !versions.includes(doc.apiVersion)) {
    return fail(
      `expected kind Configuration in ${versions.join(' or ')}, got ${String(doc.kind)} in ${String(doc.apiVersion)}`,
    );
  }
  const errs: FieldError[] = [];
  const limits: EventLimit[] = [];
  const list = doc.limits ?? null;
  if (list !== null && !Array.isArray(list)) return fail('limits must be a list');
  if (list === null || list.length === 0) errs.push(fieldErrors.invalid('limits', list, 'must not be empty'));
  (list ?? []).forEach((item: unknown, i) => {
    const at = `limits[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      errs.push(fieldErrors.typeInvalid(at, item, 'must be an object'));
      return;
    }
    const l = item as Record<string, unknown>;
    // A value that is not an integer is reported once, not also as out of range.
    const int = (key: string): number | undefined => {
      const v = l[key] ?? 0;
      if (typeof v === 'number' && Number.isInteger(v)) return v;
      errs.push(fieldErrors.typeInvalid(`${at}.${key}`, v, 'must be an integer'));
      return undefined;
    };
    const type = l.type ?? '';
    if (typeof type !== 'string' || !(LIMIT_TYPES as readonly string[]).includes(type)) {
      errs.push(fieldErrors.notSupported(`${at}.type`, type, [...LIMIT_TYPES]));
    }
    const burst = int('burst');
    if (burst !== undefined && burst <= 0) errs.push(fieldErrors.invalid(`${at}.burst`, burst, 'must be positive'));
    const qps = int('qps');
    if (qps !== undefined && qps <= 0) errs.push(fieldErrors.invalid(`${at}.qps`, qps, 'must be positive'));
    const cacheSize = int('cacheSize');
    if (type !== 'Server' && cacheSize !== undefined && cacheSize < 0) {
      errs.push(fieldErrors.invalid(`${at}.cacheSize`, cacheSize, 'must not be negative'));
    }
    limits.push({ type: type as EventLimitType, qps: qps ?? 0, burst: burst ?? 0, cacheSize: cacheSize ?? 0 });
  });
  if (errs.length > 0) return fail(aggregateMessage(errs.map(fieldErrorMessage)));
  return limits;
}

/** golang.org/x/time/rate's limiter as client-go's token bucket uses it: starts full, refills continuously. */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(private readonly o: { qps: number; burst: number; now: () => number }) {
    this.tokens = o.burst;
    this.last = o.now();
  }

  tryAccept(): boolean {
    const now = this.o.now();
    this.tokens = Math.min(this.o.burst, this.tokens + (Math.max(0, now - this.last) * this.o.qps) / 1000);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The buckets of one limit: one for `Server`, else one per key, least recently used dropped first. */
class LimitEnforcer {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly limit: EventLimit,
    private readonly now: () => number,
  ) {}

  /** Undefined when the event may pass, else why not (Kubernetes' words). */
  accept(a: AdmissionAttributes): string | undefined {
    const key = keyOf(this.limit.type, a);
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
    } else {
      bucket = new TokenBucket({ qps: this.limit.qps, burst: this.limit.burst, now: this.now });
      const size = this.limit.type === 'Server' ? 1 : this.limit.cacheSize || DEFAULT_CACHE_SIZE;
      if (this.buckets.size >= size) this.buckets.delete(this.buckets.keys().next().value ?? '');
    }
    this.buckets.set(key, bucket);
    return bucket.tryAccept() ? undefined : `limit reached on type ${this.limit.type} for key ${key}`;
  }
}

function keyOf(type: EventLimitType, a: AdmissionAttributes): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return a.namespace;
    case 'User':
      return a.user?.name ?? '';
    case 'SourceAndObject': {
      const e = a.object as Partial<Event> | undefined;
      const o = e?.involvedObject;
      return [e?.source?.component, e?.source?.host, o?.kind, o?.namespace, o?.name, o?.uid, o?.apiVersion]
        .map((s) => s ?? '')
        .join('');
    }
  }
}

/**
 * Kubernetes' EventRateLimit: creates and updates of core Events (not dry runs) take a token from
 * every configured limit's bucket (the server's, the namespace's, the user's, or the event
 * source and involved object's); when any bucket is empty the request is a 429 `Too many
 * requests: limit reached on type <type> for key <key>` (several limits: Go's aggregate text).
 * Buckets live in this server's memory.
 */
export class EventRateLimit implements AdmissionPlugin {
  readonly name = 'EventRateLimit';
  private readonly enforcers: LimitEnforcer[];

  constructor(o: { limits: readonly EventLimit[]; now?: () => number }) {
    const now = o.now ?? ((): number => performance.now());
    this.enforcers = o.limits.map((l) => new LimitEnforcer(l, now));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    if (a.resource.group !== '' || a.resource.kind !== 'Event' || a.dryRun) return;
    // Every limit takes its token, even when another one refuses.
    const refusals = this.enforcers.map((e) => e.accept(a)).filter((r): r is string => r !== undefined);
    if (refusals.length > 0) throw statusError('TooManyRequests', `Too many requests: ${aggregateMessage(refusals)}`);
  }
}

export function newEventRateLimit(c: AdmissionContext): EventRateLimit {
  return new EventRateLimit({ limits: parseEventRateLimitConfig(c.config('EventRateLimit')) });
}
