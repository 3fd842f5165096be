import type { IncomingMessage, ServerResponse } from 'node:http';
import { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import express from 'express';

type Chain = (req: express.Request, res: express.Response) => void;

/** What the listener calls with each request, HTTP/1.1 or HTTP/2 (Node's compatibility API). */
export type EdgeListener = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

/**
 * express at the edge: its request and response helpers, no routing of its own (the chain
 * routes, so express's router is not entered at all). express 5 gives each request its helpers
 * by swapping the request's prototype for one built on `http.IncomingMessage` (and the
 * response's on `http.ServerResponse`), which breaks an HTTP/2 compatibility request (its url,
 * headers and body live in getters of `Http2ServerRequest`). So HTTP/2 requests go to a second app whose prototypes carry the same
 * helpers over `Http2ServerRequest` and `Http2ServerResponse`.
 */
export function expressEdge(chain: Chain): EdgeListener {
  const http1 = expressApp();
  const http2 = expressApp();
  http2.request = onBase(Http2ServerRequest.prototype, express.request, http2);
  http2.response = onBase(Http2ServerResponse.prototype, express.response, http2);
  return (req, res) => {
    const app = req.httpVersionMajor === 2 ? http2 : http1;
    enter(app, req as express.Request, res as express.Response);
    try {
      chain(req as express.Request, res as express.Response);
    } catch {
      // The chain answers its own errors; this only guards the guard, as express's final handler did.
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      } else res.destroy();
    }
  };
}

/**
 * What express's `app.handle` and its router do for a request before the first middleware,
 * without the router: the chain is the only middleware and routes by itself, and the router's
 * per-request work (a URL parse, a layer match, its `next` closure) was ~5 % of the server's
 * CPU on cached GETs (issue 21).
 */
function enter(app: express.Express, req: express.Request, res: express.Response): void {
  req.res = res;
  res.req = req;
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  res.locals = Object.create(null) as Record<string, unknown>;
  req.originalUrl = req.url;
  req.baseUrl = '';
}

function expressApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  return app;
}

/**
 * A prototype over `base` with express's helpers (`helpers`' own properties) and `app`, like
 * express's own `app.request`/`app.response` over Node's HTTP/1 classes.
 */
function onBase<T extends object>(base: object, helpers: object, app: express.Express): T {
  const proto: object = Object.create(base);
  for (const key of Reflect.ownKeys(helpers)) {
    const d = Object.getOwnPropertyDescriptor(helpers, key);
    if (d) Object.defineProperty(proto, key, d);
  }
  // express links the two (`req.res`, `res.req`); the HTTP/2 classes have no such fields.
  for (const key of ['req', 'res'])
    Object.defineProperty(proto, key, { value: undefined, writable: true, configurable: true });
  // What the chain asks of a request or response that HTTP/1's has and HTTP/2's lacks.
  if (!('headersDistinct' in base))
    Object.defineProperty(proto, 'headersDistinct', {
      configurable: true,
      get(this: Http2ServerRequest): Record<string, string[]> {
        return headersDistinct(this.rawHeaders);
      },
    });
  if (!('destroyed' in base))
    Object.defineProperty(proto, 'destroyed', {
      configurable: true,
      get(this: Http2ServerResponse): boolean {
        return this.stream.destroyed;
      },
    });
  return Object.create(proto, { app: { configurable: true, enumerable: true, writable: true, value: app } }) as T;
}

/** `IncomingMessage.headersDistinct` from raw name/value pairs: each header's values, in order (pseudo-headers left out). */
function headersDistinct(raw: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (name.startsWith(':')) continue;
    (out[name] ??= []).push(raw[i + 1] as string);
  }
  return out;
}
