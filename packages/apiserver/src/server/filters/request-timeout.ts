import { timeout } from '@svc/api';
import { sendError } from '../../endpoints/handlers/respond.js';
import type { Filter } from './chain.js';

/**
 * A request that is not long-running and has not answered within `timeoutMs` (Kubernetes'
 * `--request-timeout`, 1m0s) gets 504 Timeout; what its handler writes later is dropped. An
 * answer already started when the time runs out is cut off. 0 disables the limit.
 */
export function withRequestTimeout(timeoutMs: number): Filter {
  return (next) => (r) => {
    if (r.info.longRunning || timeoutMs <= 0) return next(r);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (r.res.headersSent) r.res.destroy();
        else sendError(r.res, timeout('request did not complete within the allotted timeout'));
        resolve();
      }, timeoutMs);
      next(r)
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  };
}
