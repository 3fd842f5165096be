import type { Http2ServerRequest } from 'node:http2';
import type { Filter } from './chain.js';

/**
 * `--goaway-chance` (Kubernetes' WithProbabilisticGoaway): that fraction of HTTP/2 requests
 * makes the server send its connection a GOAWAY. The request itself and the connection's other
 * open streams finish; the client opens a new connection for what it sends next, which a load
 * balancer may send to another server. HTTP/1.1 requests are never picked.
 */
export function withProbabilisticGoaway(chance: number, random: () => number = Math.random): Filter {
  // --goaway-chance 0 (the default): not a stage at all.
  if (chance <= 0) return (next) => next;
  return (next) => (r) => {
    if (r.req.httpVersionMajor === 2 && random() < chance) {
      const session = (r.req as unknown as Http2ServerRequest).stream.session;
      // close(): GOAWAY (NO_ERROR, the last stream taken) now; the session ends once its streams have.
      if (session && !session.closed) session.close();
    }
    return next(r);
  };
}
