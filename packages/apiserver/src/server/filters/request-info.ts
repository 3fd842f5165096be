import type { Request, Response } from 'express';
import { parseRequestInfo } from '../../endpoints/request-info.js';
import { sendError } from '../../endpoints/handlers/respond.js';
import type { Handler } from './chain.js';

/**
 * The reason of every request's signal: one AbortError made once (an `abort()` without a
 * reason builds a DOMException with its stack for each request: ~1 % of the server's CPU
 * under a flood of creates).
 */
const ANSWERED = new DOMException('This operation was aborted', 'AbortError');

/**
 * The chain's entry (Kubernetes' WithRequestInfo): what the request is about — verb, group,
 * version, namespace, resource, name, subresource, and whether it is long-running — is parsed
 * once here; every later stage reads it. The request's signal aborts when the answer is done
 * or the client goes away.
 */
export function withRequestInfo(next: Handler): (req: Request, res: Response) => void {
  return (req, res) => {
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const info = parseRequestInfo(req.method, req.originalUrl, query);
    const done = new AbortController();
    res.once('close', () => done.abort(ANSWERED));
    // Panic recovery answers everything below; this catch only guards the guard.
    next({ req, res, info, ctx: {}, signal: done.signal }).catch((e: unknown) => sendError(res, e));
  };
}
