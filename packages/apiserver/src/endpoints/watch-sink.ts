import type { Http2ServerResponse } from 'node:http2';
import type { Writable } from 'node:stream';
import type { Response } from 'express';

/**
 * Where a watch's pre-framed events go. Over HTTP/1.1 the shared frames are whole HTTP chunks
 * and go straight to the TLS socket (the response's headers are sent and it is chunked). Over
 * HTTP/2 the socket belongs to the session: the same frames go to the request's stream
 * without their chunk framing (HTTP/2 frames the data itself).
 */
export interface WatchSink {
  target: Writable;
  /** A frame of `serialization-cache.ts` (one HTTP/1.1 chunk) as this sink writes it. */
  frame(chunk: Buffer): Buffer;
  /** Whether the answer is HTTP/2 (no Transfer-Encoding header, which HTTP/2 forbids). */
  http2: boolean;
}

export function watchSink(res: Response): WatchSink | undefined {
  if (res.req.httpVersionMajor === 2) {
    const stream = (res as unknown as Http2ServerResponse).stream;
    return stream ? { target: stream, frame: chunkData, http2: true } : undefined;
  }
  const socket = res.socket;
  return socket ? { target: socket, frame: (b) => b, http2: false } : undefined;
}

/** The data of one HTTP/1.1 chunk (`<hex length>\r\n<data>\r\n`), without copying. */
export function chunkData(chunk: Buffer): Buffer {
  const eol = chunk.indexOf('\r\n');
  return chunk.subarray(eol + 2, chunk.length - 2);
}
