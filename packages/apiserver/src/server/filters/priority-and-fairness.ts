import { apfResponseHeaders, tooManyRequests } from '@svc/api';
import { DroppedRequests } from '../../flowcontrol/dropped-requests.js';
import type { FlowControl } from '../../flowcontrol/flow-control.js';
import { requestUser } from './authentication.js';
import type { Filter } from './chain.js';
import { requestKind, type InFlightWatermark } from './max-in-flight.js';

/** Kubernetes' default and hard limit on a request's wait in a queue. */
const DEFAULT_WAIT_LIMIT_MS = 15_000;
const MAX_WAIT_LIMIT_MS = 60_000;

/**
 * Kubernetes' WithPriorityAndFairness (`--enable-priority-and-fairness`, the default): every
 * request but the long-running ones that are not watches is classified by the FlowSchemas
 * (matching precedence; its flow by user or namespace) into a priority level, waits for a seat
 * in the flow's shuffle-sharded queue (at most a quarter of `--request-timeout`, 1m at most),
 * and holds it while it runs — a watch only until its answer starts. The answer carries the
 * schema's and level's UIDs; a request the level cannot take is a 429 whose `Retry-After` grows while its level keeps
 * dropping requests (1 s to 32 s, as Kubernetes 1.32).
 * `system:masters` and the health probes fall in the exempt level and never wait.
 */
export function withPriorityAndFairness(
  fc: FlowControl,
  o: { requestTimeoutMs: number; watermark?: InFlightWatermark },
): Filter {
  const quarter = o.requestTimeoutMs > 0 ? o.requestTimeoutMs / 4 : DEFAULT_WAIT_LIMIT_MS;
  const waitLimitMs = Math.min(quarter, MAX_WAIT_LIMIT_MS);
  const drops = new DroppedRequests();
  return (next) => async (r) => {
    const isWatch = r.info.verb === 'watch';
    if (r.info.longRunning && !isWatch) return next(r);
    const c = fc.classify(requestUser(r), r.info);
    const headers = apfResponseHeaders();
    r.res.setHeader(headers.priorityLevelUid, c.levelUid);
    r.res.setHeader(headers.flowSchemaUid, c.flowSchemaUid);
    const labels = { flow_schema: c.flowSchema, priority_level: c.level.name };
    const outcome = await fc.dispatcher.admit({
      level: c.level,
      flowSchema: c.flowSchema,
      flow: c.flow,
      estimate: fc.estimate(r.info, c),
      waitLimitMs,
      signal: r.signal,
    });
    if ('rejected' in outcome) {
      fc.metrics.rejected.inc({ ...labels, reason: outcome.rejected });
      drops.record(c.level.name);
      throw tooManyRequests('Too many requests, please try again later.', drops.retryAfter(c.level.name));
    }
    fc.metrics.dispatched.inc(labels);
    const kind = requestKind(r);
    o.watermark?.add(kind, 1);
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      outcome.release();
      o.watermark?.add(kind, -1);
    };
    r.res.once('close', release);
    if (isWatch) {
      // Counted for the writes it will hear until it ends (the work estimator's watch count).
      r.res.once('close', fc.watches.register(r.info));
      // A watch holds its seat only while it starts: until its answer's headers go out.
      const res = r.res;
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
      res.writeHead = ((...args: unknown[]) => {
        release();
        return writeHead(...args);
      }) as typeof res.writeHead;
    }
    try {
      await next(r);
    } finally {
      release();
    }
  };
}
