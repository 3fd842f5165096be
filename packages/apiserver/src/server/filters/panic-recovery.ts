import { isStatusError } from '@svc/api';
import type { Logger } from '@svc/component-base';
import { sendError } from '../../endpoints/handlers/respond.js';
import type { Filter } from './chain.js';

/**
 * Whatever a later stage throws becomes the answer (Kubernetes' WithPanicRecovery): a
 * `StatusError` as its Status, anything else a 500 InternalError, logged. An answer already
 * under way is ended instead, so the client never waits on a broken request.
 */
export function withPanicRecovery(log: Logger): Filter {
  return (next) => async (r) => {
    try {
      await next(r);
    } catch (e) {
      if (!isStatusError(e)) {
        log.error('request failed with an internal error', {
          verb: r.info.verb,
          path: r.info.path,
          error: e instanceof Error ? (e.stack ?? e.message) : String(e),
        });
      }
      sendError(r.res, e);
    }
  };
}
