import { tooManyRequests } from '@svc/api';
import { MASTERS_GROUP } from '@svc/component-base';
import { requestUser } from './authentication.js';
import type { Filter } from './chain.js';

export interface InFlightLimits {
  /** `--max-requests-inflight`: reads at once; 0 = no limit. */
  readonly: number;
  /** `--max-mutating-requests-inflight`: writes at once; 0 = no limit. */
  mutating: number;
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Kubernetes' WithMaxInFlightLimit: at most `readonly` reads and `mutating` writes are served
 * at once; one more is a 429 with `Retry-After: 1`. Long-running requests and
 * `system:masters` take no seat. A seat is held until the answer is done.
 */
export function withMaxInFlight(limits: InFlightLimits): Filter {
  const inUse = { readonly: 0, mutating: 0 };
  return (next) => (r) => {
    if (r.info.longRunning || requestUser(r).groups.includes(MASTERS_GROUP)) return next(r);
    const kind = MUTATING.has(r.info.verb) ? 'mutating' : 'readonly';
    if (limits[kind] > 0 && inUse[kind] >= limits[kind]) {
      throw tooManyRequests('Too many requests, please try again later.', 1);
    }
    inUse[kind]++;
    r.res.once('close', () => inUse[kind]--);
    return next(r);
  };
}
