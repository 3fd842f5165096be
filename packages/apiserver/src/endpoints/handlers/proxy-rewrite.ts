import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { createDeflate, createDeflateRaw, createGunzip, createGzip, createInflate, createInflateRaw } from 'node:zlib';
import { internalError, StatusError } from '@svc/api';
import { htmlUrlRewriting } from './proxy-rewrite-html.js';
import { rewriteProxiedUrl, UrlParseError, type RewriteTarget } from './proxy-rewrite-url.js';

/** What Kubernetes' corsRemovingTransport takes off every proxied answer. */
const CORS_HEADERS = [
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-allow-origin',
];

/** A proxied answer as it goes to the client. */
export interface RewrittenAnswer {
  headers: IncomingHttpHeaders;
  /** The stages the body goes through; none when it passes byte for byte. */
  body: Transform[];
}

/**
 * Kubernetes' proxy Transport (which pods/proxy, services/proxy and nodes/proxy use, with
 * WrapTransport on) applied to a backend's answer: the CORS headers are dropped; a `Location`
 * header is rewritten to go through the proxy (and then the body passes as it is; a
 * `Location` Go cannot parse is a 500); a `text/html` body that is plain, gzip or deflate is
 * decoded, its links rewritten, encoded again and sent without `Content-Length`. Anything
 * else passes unchanged.
 */
export function rewriteAnswer(o: {
  headers: IncomingHttpHeaders;
  target: RewriteTarget;
  /** No body comes (HEAD, 204, 304): there is nothing to decode. */
  bodiless: boolean;
}): RewrittenAnswer {
  const headers: IncomingHttpHeaders = { ...o.headers };
  for (const h of CORS_HEADERS) delete headers[h];
  const location = headers.location;
  if (location) {
    try {
      headers.location = rewriteProxiedUrl(location, o.target);
    } catch (e) {
      if (e instanceof UrlParseError) throw internalError(`error trying to parse Location header: ${e.message}`);
      throw e;
    }
    return { headers, body: [] };
  }
  const type = (headers['content-type'] ?? '').split(';')[0]?.trim();
  const encoding = headers['content-encoding'] ?? '';
  if (type !== 'text/html' || !['', 'gzip', 'deflate'].includes(encoding)) return { headers, body: [] };
  delete headers['content-length'];
  if (o.bodiless) return { headers, body: [] };
  const links = htmlUrlRewriting((value) => {
    try {
      return rewriteProxiedUrl(value, o.target);
    } catch (e) {
      if (e instanceof UrlParseError) return undefined;
      throw e;
    }
  });
  if (encoding === 'gzip') return { headers, body: [createGunzip(), ...links, createGzip()] };
  if (encoding === 'deflate') {
    const format: DeflateFormat = {};
    return { headers, body: [inflating(format), ...links, deflating(format)] };
  }
  return { headers, body: links };
}

/**
 * A failure while rewriting a body before anything was sent: a 500 Status without a reason,
 * as Kubernetes answers an error of its proxy transport that is not a Status.
 */
export function rewriteFailure(e: unknown): StatusError {
  const message = `error rewriting the proxied page: ${e instanceof Error ? e.message : String(e)}`;
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

/**
 * HTTP's `deflate` is zlib-wrapped (RFC 1950) but Go's proxy reads and writes raw DEFLATE
 * (RFC 1951) and fails on the former; here the first two bytes tell which one the backend
 * sent, and the page is encoded again the same way.
 */
interface DeflateFormat {
  zlib?: boolean;
}

function isZlibHeader(b: Buffer): boolean {
  const [cmf = 0, flg = 0] = b;
  return b.length >= 2 && (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

function inflating(format: DeflateFormat): Transform {
  return new Deferred({
    need: 2,
    make: (head) => {
      format.zlib = isZlibHeader(head);
      return format.zlib ? createInflate() : createInflateRaw();
    },
  });
}

function deflating(format: DeflateFormat): Transform {
  return new Deferred({ need: 1, make: () => (format.zlib ? createDeflate() : createDeflateRaw()) });
}

/** A Transform whose inner transform is chosen from the first `need` bytes (or at the end, from fewer). */
class Deferred extends Transform {
  private inner?: Transform;
  private head = Buffer.alloc(0);

  constructor(private readonly o: { need: number; make: (head: Buffer) => Transform }) {
    super();
  }

  private start(): Transform {
    const inner = this.o.make(this.head);
    inner.on('data', (d: Buffer) => this.push(d));
    inner.on('error', (e) => this.destroy(e));
    this.inner = inner;
    return inner;
  }

  private send(chunk: Buffer, done: TransformCallback): void {
    const inner = this.inner ?? this.start();
    if (inner.write(chunk)) done();
    else inner.once('drain', () => done());
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.inner) return this.send(chunk, done);
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length < this.o.need) return done();
    this.send(this.head, done);
  }

  override _flush(done: TransformCallback): void {
    const started = this.inner !== undefined;
    const inner = this.inner ?? this.start();
    inner.once('end', () => done());
    if (!started && this.head.length > 0) inner.end(this.head);
    else inner.end();
  }
}
