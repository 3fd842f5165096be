import { isStatusError, statusError } from '@svc/api';
import { nowMicros } from '../../audit/event.js';
import type { Auditor } from '../../audit/request-audit.js';
import type { Filter } from './chain.js';

/**
 * Audit (Kubernetes' WithAudit) sits here, after authentication so that events name the user
 * and before impersonation so that they name both. The policy gives the request its level; a
 * request it selects gets RequestReceived (when blocking-strict mode cannot record it, the
 * request fails with 500), ResponseStarted for long-running requests, and ResponseComplete —
 * or Panic when something other than a Status error escapes. Errors thrown below are answered
 * by panic recovery; their Status is recorded here first.
 */
export function withAudit(auditor: Auditor | undefined): Filter {
  if (!auditor) return (next) => next;
  return (next) => async (r) => {
    const ra = auditor.begin({
      req: r.req,
      res: r.res,
      uri: r.req.originalUrl,
      info: r.info,
      requester: r.requester,
      ctx: r.ctx,
      auditID: r.audit?.id ?? '',
      receivedAt: r.audit?.receivedAt ?? nowMicros(),
    });
    if (!ra) return next(r);
    if (!(await ra.received())) {
      auditor.rejected();
      throw statusError(
        'InternalError',
        `Internal Server Error: ${JSON.stringify(r.req.originalUrl)}: failed to store audit event`,
      );
    }
    ra.watch();
    try {
      await next(r);
    } catch (e) {
      if (!isStatusError(e)) {
        await ra.panic(e);
        throw e;
      }
      if (!r.res.headersSent) {
        ra.recordResponseObject(e.status);
        await ra.complete({ code: e.status.code });
      } else await ra.complete();
      throw e;
    }
    await ra.complete();
  };
}
