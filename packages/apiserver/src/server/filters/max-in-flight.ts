import { tooManyRequests } from '@svc/api';
import { MASTERS_GROUP } from '@svc/component-base';
import type { Gauge } from 'prom-client';
import { requestUser } from './authentication.js';
import type { ApiRequest, Filter } from './chain.js';

export interface InFlightLimits {
  /** `--max-requests-inflight`: reads at once; 0 = no limit. */
  readonly: number;
  /** `--max-mutating-requests-inflight`: writes at once; 0 = no limit. */
  mutating: number;
}

/** Kubernetes' read-only verbs; every other verb (and every non-resource POST, PUT, ...) is mutating. */
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/** `request_kind` of `apiserver_current_inflight_requests`. */
export type RequestKind = 'readOnly' | 'mutating';

export function requestKind(r: ApiRequest): RequestKind {
  return READ_ONLY_VERBS.has(r.info.verb) ? 'readOnly' : 'mutating';
}

/**
 * The high-water mark of requests executing per kind, published every second as Kubernetes'
 * `apiserver_current_inflight_requests` ("maximal number of currently used inflight request
 * limit ... in last second"). Both filters (max in-flight and priority and fairness) feed it.
 */
export class InFlightWatermark {
  private readonly current: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private readonly high: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private timer?: NodeJS.Timeout;

  constructor(private readonly gauge: Gauge<'request_kind'>) {
    gauge.set({ request_kind: 'readOnly' }, 0);
    gauge.set({ request_kind: 'mutating' }, 0);
  }

  add(kind: RequestKind, delta: number): void {
    this.current[kind] += delta;
    if (this.current[kind] > this.high[kind]) this.high[kind] = this.current[kind];
    if (!this.timer) {
      this.timer = setInterval(() => this.publish(), 1000);
      this.timer.unref();
    }
  }

  /** Sets the gauge to the last second's high-water mark and starts the next second. */
  publish(): void {
    for (const kind of ['readOnly', 'mutating'] as const) {
      this.gauge.set({ request_kind: kind }, this.high[kind]);
      this.high[kind] = this.current[kind];
    }
  }
}

/**
 * Kubernetes' WithMaxInFlightLimit, the request path when `--enable-priority-and-fairness=false`:
 * at most `readonly` reads (get, list) and `mutating` writes (every other verb) are served at
 * once, each cap on its own (0 disables it). Long-running requests (watches, exec, logs,
 * proxies) take no seat. When the cap is reached a `system:masters` request is served without
 * a seat; anyone else gets 429 TooManyRequests with `Retry-After: 1`. A seat is held until the
 * answer is done.
 */
export function withMaxInFlight(limits: InFlightLimits, watermark?: InFlightWatermark): Filter {
  const inUse: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  const cap: Record<RequestKind, number> = { readOnly: limits.readonly, mutating: limits.mutating };
  return (next) => (r) => {
    if (r.info.longRunning) return next(r);
    const kind = requestKind(r);
    if (cap[kind] <= 0) return next(r);
    if (inUse[kind] >= cap[kind]) {
      if (requestUser(r).groups.includes(MASTERS_GROUP)) return next(r);
      throw tooManyRequests('Too many requests, please try again later.', 1);
    }
    inUse[kind]++;
    watermark?.add(kind, 1);
    r.res.once('close', () => {
      inUse[kind]--;
      watermark?.add(kind, -1);
    });
    return next(r);
  };
}
