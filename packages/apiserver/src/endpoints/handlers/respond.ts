import type { Response } from 'express';
import { internalError, isStatusError, type Status } from '@svc/api';
import { contentTypeOf } from '../media-types.js';
import { encode } from '../codec.js';
import { listJsonChunks } from '../serialization-cache.js';

/** Codecs responses are written in (Protobuf answers are not produced yet). */
type BodyCodec = 'json' | 'yaml';

/** Writes a value with the negotiated codec (one write of headers and body; no ETag or freshness work). */
export function sendObject(res: Response, code: number, value: unknown, codec: BodyCodec = 'json', warnings: string[] = []): void {
  const body = encode(value, codec);
  if (warnings.length > 0) res.setHeader('Warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
  res.writeHead(code, { 'Content-Type': contentTypeOf(codec), 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Lists longer than this are written in pieces (chunked transfer) instead of one body. */
const STREAM_LIST_ITEMS = 500;

/** Writes a list as JSON; large lists go out in pieces with backpressure. */
export async function sendList(res: Response, list: { items: object[] } & Record<string, unknown>, codec: BodyCodec): Promise<void> {
  if (codec !== 'json' || list.items.length <= STREAM_LIST_ITEMS) {
    sendObject(res, 200, list, codec);
    return;
  }
  res.writeHead(200, { 'Content-Type': contentTypeOf(codec) });
  for (const piece of listJsonChunks(list)) {
    if (!res.write(piece)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    if (res.destroyed) return;
  }
  res.end();
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
