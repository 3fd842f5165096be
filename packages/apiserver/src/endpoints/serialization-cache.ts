import { encodeWatchEventFrame } from '@svc/machinery';

/**
 * Watch event frames, built once per object and event type: one event reaches many watchers
 * (one Buffer, many sockets), and the watch cache's objects are shared and never mutated.
 * Lists and single objects are serialized afresh (as Kubernetes does).
 *
 * A frame is kept while its event is fresh: frames live in two generations that turn over
 * every `FRAME_GENERATION_MS`, so each is kept 5 to 10 s, long enough for every watcher the
 * event reaches at about the same time (as Kubernetes keeps an event's serializations only
 * while it is being dispatched); a watcher further behind, or one replaying the cache's window,
 * builds it again. Kept for the cache's whole 75 s window instead, the frames of a burst
 * were most of the server's external memory: at 5,000 pods, 236 MiB of Buffers against
 * 22 MiB with 5 s generations (RSS 873 -> 697 MiB). Kept for the object's life (before that),
 * they cost a copy of the JSON of every object the cache holds, never freed.
 */
export const FRAME_GENERATION_MS = 5_000;

class RecentFrames {
  private current = new Map<object, { type: string; frame: Buffer }>();
  private previous = new Map<object, { type: string; frame: Buffer }>();
  private timer: NodeJS.Timeout | undefined;

  get(obj: object, type: string): Buffer | undefined {
    const hit = this.current.get(obj) ?? this.previous.get(obj);
    return hit && hit.type === type ? hit.frame : undefined;
  }

  set(obj: object, type: string, frame: Buffer): void {
    this.current.set(obj, { type, frame });
    // The turnover runs while frames are kept; an idle server holds none and no timer.
    this.timer ??= setInterval(() => this.turnOver(), FRAME_GENERATION_MS).unref();
  }

  private turnOver(): void {
    this.previous = this.current;
    this.current = new Map();
    if (this.previous.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

const jsonFrames = new RecentFrames();
const protobufFrames = new RecentFrames();

/** `data` as one HTTP/1.1 chunk: hex length, CRLF, data, CRLF. */
export function chunkFrame(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
}

/**
 * The watch event line `{"type":…,"object":…}\n` for an object, framed as one HTTP chunk,
 * built once and shared by every watcher the event reaches.
 */
export function watchFrame(type: string, obj: object): Buffer {
  const hit = jsonFrames.get(obj, type);
  if (hit) return hit;
  const frame = chunkFrame(Buffer.from(`{"type":${JSON.stringify(type)},"object":${JSON.stringify(obj)}}\n`));
  jsonFrames.set(obj, type, frame);
  return frame;
}

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
  const hit = protobufFrames.get(obj, type);
  if (hit) return hit;
  const bytes = envelope(obj);
  if (!bytes) return undefined;
  const frame = chunkFrame(encodeWatchEventFrame(type, bytes));
  protobufFrames.set(obj, type, frame);
  return frame;
}

/**
 * The JSON of a list in pieces of at most `itemsPerChunk` items: the head, the items, the
 * tail. Writing pieces keeps a large list from becoming one giant transient string.
 *
 * Pieces stay small (16 pods are ~70 KB): V8 builds a long `JSON.stringify` result as a tree of
 * parts, and flattening one (which writing it does) costs far more once it is beyond the
 * regular heap's object size (128 KiB). 30,000 pods in pieces of 256 took 1.4-1.5 s to
 * stringify and encode, in pieces of 16 0.46-0.51 s (0.41 s of it the stringify itself).
 */
export function* listJsonChunks(
  list: { items: object[] } & Record<string, unknown>,
  itemsPerChunk = 16,
): Generator<string> {
  const { items, ...rest } = list;
  const head = JSON.stringify(rest);
  let piece = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"items":[`;
  for (let i = 0; i < items.length; i += itemsPerChunk) {
    // One stringify per piece is ~20 % faster than one per item (0.46 s against 0.57 s above).
    piece += (i > 0 ? ',' : '') + JSON.stringify(items.slice(i, i + itemsPerChunk)).slice(1, -1);
    yield piece;
    piece = '';
  }
  yield `${piece}]}`;
}
