import type { Filter } from './chain.js';

/** Kubernetes' defaults for the preflight answer (`WithCORS` with nil lists). */
const ALLOW_METHODS = 'POST, GET, OPTIONS, PUT, DELETE, PATCH';
const ALLOW_HEADERS =
  'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since';
const EXPOSE_HEADERS = 'Date';

/**
 * CORS (`--cors-allowed-origins`), before authentication as in Kubernetes' chain: a request
 * whose `Origin` matches one of the expressions gets the `Access-Control-*` headers, and a
 * preflight (OPTIONS) from it is answered 204 here, without credentials. Other requests pass
 * untouched; no expressions: the stage is left out.
 */
export function withCors(origins: readonly RegExp[]): Filter {
  // No origins allowed (the default): not a stage at all, so requests pay no extra promise for it.
  if (origins.length === 0) return (next) => next;
  return (next) => async (r) => {
    const origin = r.req.headers.origin;
    if (!origin || !origins.some((re) => re.test(origin))) return next(r);
    r.res.setHeader('Access-Control-Allow-Origin', origin);
    r.res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
    r.res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
    r.res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    r.res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (r.req.method === 'OPTIONS') {
      r.res.status(204).end();
      return;
    }
    return next(r);
  };
}
