import { internalError, notAcceptable, type ApiObject, type Schema } from '@svc/api';
import type { HandlerScope } from './scope.js';
import { readWatchParams } from './list-params.js';
import { objectSchemaOf, protobufOf } from './respond.js';
import { chunkFrame, protobufWatchFrame, watchFrame } from '../serialization-cache.js';
import { advertisedMediaTypes, contentTypeOf } from '../media-types.js';
import { includeObjectOf, toTable } from '../table.js';
import { WatchWriteScheduler } from '../watch-writes.js';
import { watchSink } from '../watch-sink.js';
import { throttle } from '../throttle.js';

/** Whether objects of `schema` may hold values without a Protobuf form (`s.any()` other than FieldsV1). */
export function hasLooseFields(schema: Schema, seen = new Set<Schema>()): boolean {
  if (seen.has(schema)) return false;
  seen.add(schema);
  switch (schema.type) {
    case 'any':
      return schema.format !== 'json-bytes';
    case 'object':
      return Object.values(schema.properties).some((p) => hasLooseFields(p, seen));
    case 'map':
      return hasLooseFields(schema.values, seen);
    case 'array':
      return schema.items.type === 'array' || schema.items.type === 'map' || hasLooseFields(schema.items, seen);
    default:
      return false;
  }
}

/** Server settings a watch needs. */
export interface WatchSettings {
  minRequestTimeoutSeconds: number;
  watchListEnabled: boolean;
  /** `--max-connection-bytes-per-sec`: the stream's events are paced to this rate; 0: not throttled. */
  maxBytesPerSec?: number;
  /** Fires when the server shuts down: open watches end. */
  stopping: AbortSignal;
}

/** Every watch's writes, in passes (see WatchWriteScheduler). */
const writes = new WatchWriteScheduler();

/** Bookmarks every minute, and one shortly before the server-side timeout. */
function bookmarkEvery(timeoutMs: number): number {
  return Math.max(250, Math.min(60_000, timeoutMs - 2000));
}

/**
 * A watch: a chunked stream of `{type, object}` JSON lines until `timeoutSeconds` (else a
 * random time between --min-request-timeout and twice that), the client leaving, or the
 * server stopping. Errors after the stream started arrive as one ERROR event.
 */
export async function handleWatch(s: HandlerScope, settings: WatchSettings): Promise<void> {
  const p = readWatchParams(s.query, s.resource, settings.watchListEnabled);
  // Protobuf streams (Kubernetes' length-prefixed framing) for types whose objects always
  // have a Protobuf form; other types use the client's JSON/YAML fallback when it gave one.
  const schema = objectSchemaOf(s);
  let protobuf = s.format.codec === 'protobuf';
  if (protobuf && (!schema || hasLooseFields(schema)) && s.format.fallback) protobuf = false;
  if (protobuf && !schema) throw notAcceptable(advertisedMediaTypes().filter((t) => t !== s.format.mediaType));
  const envelope = (o: object): Buffer | undefined => protobufOf(o, schema);
  const include = s.format.as === 'Table' ? includeObjectOf(s.query) : undefined;
  let headers = true;
  if (s.info.name) p.name = s.info.name;
  const min = settings.minRequestTimeoutSeconds;
  const timeoutMs = (p.timeoutSeconds ?? min * (1 + Math.random())) * 1000;
  p.bookmarkEveryMs = bookmarkEvery(timeoutMs);
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  const timer = setTimeout(stop, timeoutMs);
  s.res.on('close', stop);
  settings.stopping.addEventListener('abort', stop, { once: true });
  const events = s.store.watch(s.info.namespace, p, ac.signal);
  s.res
    .status(200)
    .setHeader(
      'Content-Type',
      protobuf ? `${contentTypeOf('protobuf', s.format.mediaType)};stream=watch` : 'application/json',
    );
  const sink = watchSink(s.res);
  if (!sink) {
    ac.abort();
    return;
  }
  if (!sink.http2) s.res.setHeader('Transfer-Encoding', 'chunked');
  s.res.setHeader('Cache-Control', 'no-cache, private');
  s.res.flushHeaders();
  const socket = sink.target;
  const pace = settings.maxBytesPerSec ? throttle(settings.maxBytesPerSec, ac.signal) : undefined;
  let failed = false;
  // A watch that ends (timeout, client gone, shutdown) is let go at once, even while its
  // socket is full: what is queued for it is written now.
  ac.signal.addEventListener('abort', () => writes.flush(socket), { once: true });
  try {
    // Aborting (timeout, client gone, shutdown) ends the storage iteration, so next() returns.
    for (let next = await events.next(); !next.done && !ac.signal.aborted; next = await events.next()) {
      if (next.value.length === 0) continue; // never write an empty chunk: it would end the stream
      const frames = next.value.map(({ type, object }) => {
        if (include && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')) {
          const table = toTable(s.resource, [object as ApiObject], { group: s.format.group ?? '', include, headers });
          headers = false;
          return chunkFrame(Buffer.from(`{"type":"${type}","object":${JSON.stringify(table)}}\n`));
        }
        if (protobuf) {
          // An object without a Protobuf form (loose fields set) ends the stream with an ERROR event.
          const frame = protobufWatchFrame(type, object, envelope);
          if (frame) return frame;
          failed = true;
          return protobufWatchFrame(
            'ERROR',
            internalError(`the ${s.resource.kind} object has no Protobuf form; watch in JSON`).status,
            envelope,
          ) as Buffer;
        }
        return watchFrame(type, object);
      });
      // Pre-framed chunks go straight to the socket (the response is chunked and its headers
      // are sent) in the next write pass: the same bytes shared by every watcher of an event.
      // The pass lets this watch add what arrived meanwhile before it writes.
      const out = sink.http2 ? frames.map(sink.frame) : frames;
      if (pace) {
        // Throttled: one event at a time, each after the bytes before it took their time.
        for (const frame of out) {
          await writes.write(socket, [frame]);
          await pace([frame]);
          if (ac.signal.aborted) break;
        }
      } else await writes.write(socket, out);
      if (failed) break;
    }
  } finally {
    clearTimeout(timer);
    settings.stopping.removeEventListener('abort', stop);
    ac.abort();
    await events.return(undefined);
    writes.flush(socket);
  }
  s.res.end();
}
