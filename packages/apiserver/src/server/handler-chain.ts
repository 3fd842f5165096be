import type { Request, Response } from 'express';
import type { Logger } from '@svc/component-base';
import type { Auditor } from '../audit/request-audit.js';
import type { Authorizer } from '../authz/authorizer.js';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import { withAudit } from './filters/audit.js';
import { withAuditInit } from './filters/audit-init.js';
import { withAuthentication, type RequestAuthenticator } from './filters/authentication.js';
import { withAuthorization } from './filters/authorization.js';
import { withCors } from './filters/cors.js';
import { withProbabilisticGoaway } from './filters/goaway.js';
import { chain, type Handler } from './filters/chain.js';
import { withImpersonation } from './filters/impersonation.js';
import { InFlightWatermark, withMaxInFlight, type InFlightLimits } from './filters/max-in-flight.js';
import { withPriorityAndFairness } from './filters/priority-and-fairness.js';
import type { FlowControl } from '../flowcontrol/flow-control.js';
import { withPanicRecovery } from './filters/panic-recovery.js';
import { withRequestInfo } from './filters/request-info.js';
import { withRequestMetrics } from './filters/request-metrics.js';
import { withRequestTimeout } from './filters/request-timeout.js';

export interface HandlerChainConfig {
  log: Logger;
  metrics: ApiServerMetrics;
  /** `--request-timeout` for requests that are not long-running; 0 = none. */
  requestTimeoutMs: number;
  authenticator: RequestAuthenticator;
  authorizer: Authorizer;
  inFlight: InFlightLimits;
  /** `--enable-priority-and-fairness`: priority and fairness in max in-flight's place (absent: max in-flight). */
  flowControl?: FlowControl;
  /** Absent: no audit policy or backend (answers still carry an `Audit-ID`). */
  audit?: Auditor;
  /** `--cors-allowed-origins`, compiled; empty or absent: no CORS. */
  corsAllowedOrigins?: readonly RegExp[];
  /** `--goaway-chance`: the fraction of HTTP/2 requests whose connection gets a GOAWAY. */
  goawayChance?: number;
  /** What an authorized request reaches: the resource router, or the non-resource routes. */
  handler: Handler;
}

/**
 * The request path, top to bottom, as Kubernetes' DefaultBuildHandlerChain: every request
 * passes each stage in this order before its handler. A new cross-cutting concern is one
 * file under `filters/` and one line here.
 */
export function buildHandlerChain(c: HandlerChainConfig): (req: Request, res: Response) => void {
  const watermark = new InFlightWatermark(c.metrics.inflight);
  return withRequestInfo(
    chain(c.handler, [
      withAuditInit(c.audit),
      withPanicRecovery(c.log),
      withRequestMetrics(c.metrics),
      withProbabilisticGoaway(c.goawayChance ?? 0),
      withRequestTimeout(c.requestTimeoutMs),
      withCors(c.corsAllowedOrigins ?? []),
      withAuthentication(c.authenticator),
      withAudit(c.audit),
      withImpersonation(c.authorizer),
      c.flowControl
        ? withPriorityAndFairness(c.flowControl, { requestTimeoutMs: c.requestTimeoutMs, watermark })
        : withMaxInFlight(c.inFlight, watermark),
      withAuthorization(c.authorizer),
    ]),
  );
}
