import { metricVerb, type ApiServerMetrics } from '../../metrics/metrics.js';
import type { Filter } from './chain.js';

/**
 * `apiserver_request_total` and `apiserver_request_duration_seconds` for every resource
 * request, whatever answers it (a 401, 403 or 429 from a later stage counts too), recorded
 * when the answer is done.
 */
export function withRequestMetrics(metrics: ApiServerMetrics): Filter {
  return (next) => (r) => {
    const { info } = r;
    if (!info.isResourceRequest) return next(r);
    const end = metrics.requestDuration.startTimer();
    r.res.once('close', () => {
      const labels = {
        verb: metricVerb(info.verb, r.req.method),
        dry_run: r.ctx.dryRun ? 'All' : '',
        group: info.apiGroup,
        version: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
        scope: info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
        component: 'apiserver',
      };
      metrics.requestTotal.inc({ ...labels, code: String(r.res.statusCode) });
      end(labels);
    });
    return next(r);
  };
}
