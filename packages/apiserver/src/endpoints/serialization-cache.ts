import { encodeWatchEventFrame } from '@svc/machinery';

/**
 * JSON text of objects sent to watchers, computed once per object: one event reaches many
 * watchers, and the watch cache's objects are shared and never mutated. Lists and single
 * objects are serialized afresh (as Kubernetes does), so a cache of many objects does not
 * also hold a serialized copy of each.
 */
const cache = new WeakMap<object, string>();
const frames = new WeakMap<object, { type: string; frame: Buffer }>();

/** `data` as one HTTP/1.1 chunk: hex length, CRLF, data, CRLF. */
export function chunkFrame(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
}

/**
 * The watch event line `{"type":…,"object":…}\n` for an object, framed as one HTTP chunk,
 * built once and shared by every watcher the event reaches (one Buffer, many sockets).
 */
export function watchFrame(type: string, obj: object): Buffer {
  const hit = frames.get(obj);
  if (hit && hit.type === type) return hit.frame;
  const frame = chunkFrame(Buffer.from(`{"type":${JSON.stringify(type)},"object":${jsonOf(obj)}}\n`));
  frames.set(obj, { type, frame });
  return frame;
}

const protobufFrames = new WeakMap<object, { type: string; frame: Buffer }>();

/**
 * The Protobuf watch event of an object (length-prefixed `WatchEvent`, see
 * `encodeWatchEventFrame`) as one HTTP chunk, built once and shared like `watchFrame`.
 * Undefined when `envelope` finds no Protobuf form for the object.
 */
export function protobufWatchFrame(
  type: string,
  obj: object,
  envelope: (o: object) => Buffer | undefined,
): Buffer | undefined {
  const hit = protobufFrames.get(obj);
  if (hit && hit.type === type) return hit.frame;
  const bytes = envelope(obj);
  if (!bytes) return undefined;
  const frame = chunkFrame(encodeWatchEventFrame(type, bytes));
  protobufFrames.set(obj, { type, frame });
  return frame;
}

export function jsonOf(obj: object): string {
  let s = cache.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    cache.set(obj, s);
  }
  return s;
}

/**
 * The JSON of a list in pieces of at most `itemsPerChunk` items: the head, the items, the
 * tail. Writing pieces keeps a large list from becoming one giant transient string.
 */
export function* listJsonChunks(
  list: { items: object[] } & Record<string, unknown>,
  itemsPerChunk = 256,
): Generator<string> {
  const { items, ...rest } = list;
  const head = JSON.stringify(rest);
  let piece = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"items":[`;
  for (let i = 0; i < items.length; i += itemsPerChunk) {
    // One stringify per chunk is about a third faster than one per item.
    piece += (i > 0 ? ',' : '') + JSON.stringify(items.slice(i, i + itemsPerChunk)).slice(1, -1);
    yield piece;
    piece = '';
  }
  yield `${piece}]}`;
}
