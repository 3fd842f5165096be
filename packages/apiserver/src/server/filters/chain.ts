import type { Request, Response } from 'express';
import type { UserInfo } from '@svc/component-base';
import type { RequestInfo } from '../../endpoints/request-info.js';
import type { RequestContext } from '../../registry/store.js';

/**
 * One request on its way through the chain. Request info makes it; each stage may read it and
 * fill in what it learns (authentication the user, impersonation the user to act as, the
 * handler whether it was a dry run).
 */
export interface ApiRequest {
  readonly req: Request;
  readonly res: Response;
  readonly info: RequestInfo;
  /** The user, dry run and field manager the registry sees; `user` is set by authentication. */
  readonly ctx: RequestContext;
  /** Who authenticated, before impersonation (audit records both). */
  requester?: UserInfo;
  /** Set by audit init: the `Audit-ID` (the client's, else a new UUID) and the arrival time in µs since the epoch. */
  audit?: { id: string; receivedAt: number };
  /** Aborted when the client goes away or the request times out; stages and handlers stop then. */
  readonly signal: AbortSignal;
}

/** Serves a request; settles when the answer is written (a watch: when the stream ends). */
export type Handler = (r: ApiRequest) => Promise<void>;

/** One stage of the chain: wraps the rest of the chain. */
export type Filter = (next: Handler) => Handler;

/** Nests the stages so that the first one listed sees a request first. */
export function chain(handler: Handler, stages: readonly Filter[]): Handler {
  return stages.reduceRight((next, stage) => stage(next), handler);
}
