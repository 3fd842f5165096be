import { randomUUID } from 'node:crypto';
import { nowMicros } from '../../audit/event.js';
import type { Auditor } from '../../audit/request-audit.js';
import type { Filter } from './chain.js';

/** The header that carries a request's audit ID both ways. */
export const AUDIT_ID_HEADER = 'Audit-ID';

/**
 * Kubernetes' WithAuditInit: every request gets an audit ID — the client's `Audit-ID` header,
 * else a new UUID — echoed in the `Audit-ID` header of every answer, and its arrival time. A
 * request whose credentials were refused never reaches the audit stage; its event is made
 * here once the 401 is written (Kubernetes' failed-authentication audit).
 */
export function withAuditInit(auditor: Auditor | undefined): Filter {
  return (next) => async (r) => {
    const given = r.req.headers['audit-id'];
    const id = typeof given === 'string' && given !== '' ? given : randomUUID();
    r.audit = { id, receivedAt: nowMicros() };
    r.res.setHeader(AUDIT_ID_HEADER, id);
    await next(r);
    if (auditor && r.requester === undefined && r.res.statusCode === 401) {
      await auditor.failedAuthentication(
        {
          req: r.req,
          res: r.res,
          uri: r.req.originalUrl,
          info: r.info,
          ctx: r.ctx,
          auditID: id,
          receivedAt: r.audit.receivedAt,
        },
        401,
      );
    }
  };
}
