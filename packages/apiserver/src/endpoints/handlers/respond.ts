import type { Response } from 'express';
import type { Writable } from 'node:stream';
import { createGzip, gzipSync, type Gzip } from 'node:zlib';
import { internalError, isStatusError, notAcceptable, type ObjectSchema, type Status } from '@svc/api';
import { encodeProtobufList, encodeProtobufObject, encodeProtobufStatus, NotEncodable } from '@svc/machinery';
import {
  advertisedMediaTypes,
  contentTypeOf,
  negotiate,
  type ResponseCodec,
  type ResponseFormat,
} from '../media-types.js';
import { auditResponseObject } from '../../audit/request-audit.js';
import { encode } from '../codec.js';
import type { HandlerScope } from './scope.js';
import { warningHeaderValues } from './warnings.js';
import { onDrainOrClose } from '@svc/component-base';
import { listJsonChunks } from '../serialization-cache.js';

/** A codec name, or the negotiated format (Protobuf with its spelling and JSON/YAML fallback). */
type Target = ResponseCodec | ResponseFormat;

/**
 * `value` in Protobuf: a Status through meta/v1 Status, a `<Kind>List` (items array) through
 * the list message of `schema`, any other object through `schema`. Undefined when it has no
 * Protobuf form (no schema, or loosely typed values present).
 */
export function protobufOf(value: unknown, schema: ObjectSchema | undefined): Buffer | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  try {
    if (kind === 'Status' && apiVersion === 'v1') return encodeProtobufStatus(obj);
    if (!schema) return undefined;
    if (Array.isArray(obj.items) && kind.endsWith('List')) return encodeProtobufList(obj, schema, { apiVersion, kind });
    return encodeProtobufObject(obj, schema, { apiVersion, kind });
  } catch (e) {
    if (e instanceof NotEncodable) return undefined;
    throw e;
  }
}

/**
 * The body and format of an answer: Protobuf when negotiated and the value has a Protobuf
 * form, else the format's JSON/YAML fallback; Protobuf as the only acceptable type for a
 * value without a Protobuf form is a 406. A bare `'protobuf'` (no negotiated format, e.g. a
 * caller without the type's schema) falls back to JSON.
 */
function encodeFor(
  value: unknown,
  target: Target,
  schema?: ObjectSchema,
): { body: string | Buffer; format: ResponseFormat } {
  const format: ResponseFormat = typeof target === 'string' ? { codec: target } : target;
  if (format.codec === 'protobuf') {
    const bytes = protobufOf(value, schema);
    if (bytes) return { body: bytes, format };
    const next = format.fallback ?? (typeof target === 'string' ? { codec: 'json' as const } : undefined);
    if (!next) throw notAcceptable(advertisedMediaTypes().filter((t) => t !== format.mediaType));
    return { body: encode(value, next.codec), format: next };
  }
  return { body: encode(value, format.codec), format };
}

/** Answers at least this large are gzipped for clients that accept it (Kubernetes' threshold). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** One answer: status code, value, and how to write it. */
export interface Answer {
  code: number;
  value: unknown;
  /** The negotiated format or a codec name; JSON when unset. */
  format?: Target;
  /** Sent as `Warning: 299 - "..."` headers. */
  warnings?: readonly string[];
  /** Gzip when the body is large enough (the client accepts it and the verb allows it). */
  gzip?: boolean;
  /** The value's object schema, for a Protobuf answer. */
  schema?: ObjectSchema;
}

/** Writes a value with the negotiated codec (one write of headers and body; no ETag or freshness work). */
export function sendObject(res: Response, a: Answer): void {
  const { body: text, format } = encodeFor(a.value, a.format ?? 'json', a.schema);
  auditResponseObject(res, a.value, typeof text === 'string' && format.codec === 'json' ? text : undefined);
  setWarnings(res, a.warnings ?? []);
  const compress = !!a.gzip && Buffer.byteLength(text) >= GZIP_THRESHOLD_BYTES;
  const body = compress ? gzipSync(text) : text;
  const headers: Record<string, string | number> = {
    'Content-Type': contentTypeOf(format.codec, format.mediaType),
    'Content-Length': Buffer.byteLength(body),
  };
  if (compress) headers['Content-Encoding'] = 'gzip';
  if (a.gzip) headers.Vary = 'Accept-Encoding';
  res.writeHead(a.code, headers);
  res.end(body);
}

/** Adds `Warning: 299 - "<text>"` headers (to any already set). */
export function setWarnings(res: Response, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const before = res.getHeader('Warning');
  const existing = before === undefined ? [] : Array.isArray(before) ? before : [String(before)];
  res.setHeader('Warning', [...existing, ...warningHeaderValues(warnings)]);
}

/** A verb handler's answer, in the scope's format, with its warnings, compression and schema. */
export function answer(s: HandlerScope, code: number, value: unknown): void {
  sendObject(s.res, { code, value, format: s.format, warnings: s.warnings, gzip: s.gzip, schema: objectSchemaOf(s) });
}

/** Lists longer than this are written in pieces (chunked transfer) instead of one body. */
const STREAM_LIST_ITEMS = 500;

/** How much of a list (characters of JSON) may wait in the response's buffer before its writer waits for the socket. */
const LIST_WRITE_AHEAD = 1 << 20;

/**
 * Writes a list; large JSON lists go out in pieces with backpressure (gzipped when allowed).
 * Protobuf lists (`schema` = the item type's) and their fallbacks are one body.
 */
export async function sendList(s: HandlerScope, list: { items: object[] } & Record<string, unknown>): Promise<void> {
  const { res, gzip } = s;
  if (s.format.codec !== 'json' || list.items.length <= STREAM_LIST_ITEMS) {
    answer(s, 200, list);
    return;
  }
  auditResponseObject(res, list);
  setWarnings(res, s.warnings);
  const codec = s.format.codec;
  const headers: Record<string, string> = { 'Content-Type': contentTypeOf(codec) };
  if (gzip) Object.assign(headers, { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
  res.writeHead(200, headers);
  const out: Writable = gzip ? createGzip() : res;
  if (gzip) (out as Gzip).pipe(res);
  for (const piece of listJsonChunks(list)) {
    // Pieces are small (see listJsonChunks); waiting for the socket after each would cost a
    // turn of a busy event loop per ~70 KB, so up to LIST_WRITE_AHEAD is queued before a wait.
    out.write(piece);
    if (out.writableLength >= LIST_WRITE_AHEAD) await new Promise<void>((resolve) => onDrainOrClose(out, resolve, res));
    if (res.destroyed) return;
  }
  out.end();
}

/** The Status for any thrown value: Status errors as they are, anything else a 500. */
export function statusOf(err: unknown): Status {
  if (isStatusError(err)) return err.status;
  return internalError(err instanceof Error ? err.message : String(err)).status;
}

/**
 * Answers a thrown value as its Status, in `codec` or else in what the request's Accept
 * header negotiates (Protobuf, JSON or YAML, as Kubernetes; JSON when nothing acceptable is left).
 */
export function sendError(res: Response, err: unknown, codec?: Target): void {
  const status = statusOf(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  if (status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  const format = codec ?? errorCodecOf(res) ?? negotiate(res.req?.headers.accept) ?? 'json';
  sendObject(res, { code: status.code, value: status, format });
}

/**
 * Errors about a resource without a Protobuf form (custom resources) are written in JSON even
 * to a client that asked only for Protobuf, as Kubernetes' serializers for them cannot.
 */
export function answerErrorsInJson(res: Response): void {
  res.locals.errorCodec = 'json';
}

function errorCodecOf(res: Response): 'json' | undefined {
  return (res.locals as { errorCodec?: 'json' } | undefined)?.errorCodec;
}

/**
 * The schema Protobuf answers of a handler's type (or its view's) are written through (objects
 * and their lists); none for custom resources, which have no Protobuf form (spec: media types).
 */
export function objectSchemaOf(s: {
  resource: { schema: { type: string }; custom?: unknown };
  view?: { kind: { schema: ObjectSchema } };
}): ObjectSchema | undefined {
  if (s.resource.custom && !s.view) return undefined;
  const schema = s.view?.kind.schema ?? s.resource.schema;
  return schema.type === 'object' ? (schema as ObjectSchema) : undefined;
}
