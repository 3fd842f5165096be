import type { Response } from 'express';
import type { Writable } from 'node:stream';
import { createGzip, gzipSync, type Gzip } from 'node:zlib';
import { internalError, isStatusError, type Status } from '@svc/api';
import { contentTypeOf } from '../media-types.js';
import { encode } from '../codec.js';
import { listJsonChunks } from '../serialization-cache.js';

/** Codecs responses are written in (Protobuf answers are not produced yet). */
type BodyCodec = 'json' | 'yaml';

/** Answers at least this large are gzipped for clients that accept it (Kubernetes' threshold). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** Writes a value with the negotiated codec (one write of headers and body; no ETag or freshness work). */
export function sendObject(res: Response, code: number, value: unknown, codec: BodyCodec = 'json', warnings: string[] = [], gzip = false): void {
  const text = encode(value, codec);
  if (warnings.length > 0) res.setHeader('Warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
  const compress = gzip && Buffer.byteLength(text) >= GZIP_THRESHOLD_BYTES;
  const body = compress ? gzipSync(text) : text;
  const headers: Record<string, string | number> = { 'Content-Type': contentTypeOf(codec), 'Content-Length': Buffer.byteLength(body) };
  if (compress) headers['Content-Encoding'] = 'gzip';
  if (gzip) headers.Vary = 'Accept-Encoding';
  res.writeHead(code, headers);
  res.end(body);
}

/** Lists longer than this are written in pieces (chunked transfer) instead of one body. */
const STREAM_LIST_ITEMS = 500;

/** Writes a list as JSON; large lists go out in pieces with backpressure (gzipped when allowed). */
export async function sendList(res: Response, list: { items: object[] } & Record<string, unknown>, codec: BodyCodec, gzip = false): Promise<void> {
  if (codec !== 'json' || list.items.length <= STREAM_LIST_ITEMS) {
    sendObject(res, 200, list, codec, [], gzip);
    return;
  }
  const headers: Record<string, string> = { 'Content-Type': contentTypeOf(codec) };
  if (gzip) Object.assign(headers, { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
  res.writeHead(200, headers);
  const out: Writable = gzip ? createGzip() : res;
  if (gzip) (out as Gzip).pipe(res);
  for (const piece of listJsonChunks(list)) {
    if (!out.write(piece)) await new Promise<void>((resolve) => { out.once('drain', resolve); res.once('close', resolve); });
    if (res.destroyed) return;
  }
  out.end();
}

/** The Status for any thrown value: Status errors as they are, anything else a 500. */
export function statusOf(err: unknown): Status {
  if (isStatusError(err)) return err.status;
  return internalError(err instanceof Error ? err.message : String(err)).status;
}

export function sendError(res: Response, err: unknown, codec: BodyCodec = 'json'): void {
  const status = statusOf(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  if (status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  sendObject(res, status.code, status, codec);
}
