import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { onDrainOrClose } from '@svc/component-base';

/**
 * Where a SPDY connection's bytes go and come from: the upgraded socket itself (SPDY/3.1), or
 * a WebSocket whose binary messages carry the bytes (kubectl's port-forward tunnel, where a
 * message may hold any part of the byte stream).
 */
export interface FrameTransport {
  /** Hands `data` each chunk read and calls `end` once when the peer is gone; called once. */
  start(o: { data: (chunk: Buffer) => void; end: () => void }): void;
  /**
   * Writes the buffers in order, as one unit; false when the writer should wait for `onDrain`.
   * `written` is called once the buffers have been handed to the kernel (they may be reused then).
   */
  write(parts: readonly Buffer[], written?: () => void): boolean;
  /** Calls `fn` once the bytes written so far have left (at once when nothing waits, or once closed). */
  onDrain(fn: () => void): void;
  /** Stops and restarts reading; the peer's bytes then wait in the network. */
  pause(): void;
  resume(): void;
  end(): void;
  readonly destroyed: boolean;
}

/** The upgraded connection itself; several buffers go out in one `writev`. */
export function socketTransport(socket: Duplex): FrameTransport {
  return {
    start(o) {
      socket.on('data', o.data);
      socket.once('end', o.end);
      socket.once('close', o.end);
      socket.once('error', o.end);
    },
    write(parts, written) {
      const done = written && ((): void => written());
      if (parts.length === 1) return socket.write(parts[0]!, done);
      socket.cork();
      let ok = true;
      parts.forEach((p, i) => (ok = socket.write(p, i === parts.length - 1 ? done : undefined)));
      socket.uncork();
      return ok;
    },
    onDrain(fn) {
      if (!socket.writableNeedDrain || socket.destroyed) fn();
      else onDrainOrClose(socket, fn);
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    end: () => socket.end(),
    get destroyed() {
      return socket.destroyed;
    },
  };
}

/** Bytes a WebSocket tunnel may hold unsent before writers are asked to wait. */
const TUNNEL_HIGH_WATER = 256 * 1024;

function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * A WebSocket as a byte stream: each write is one binary message (sent without copying when
 * it is one buffer), every message read is passed on as bytes. Writers wait only once more
 * than `TUNNEL_HIGH_WATER` bytes are queued in the socket, so several frames can be on their
 * way at once. `end` closes the WebSocket.
 */
export function webSocketTransport(ws: WebSocket): FrameTransport {
  const waiting: Array<() => void> = [];
  const release = (): void => {
    for (const fn of waiting.splice(0)) fn();
  };
  const sent = (): void => {
    if (waiting.length && ws.bufferedAmount < TUNNEL_HIGH_WATER) release();
  };
  const open = (): boolean => ws.readyState === ws.OPEN;
  return {
    start(o) {
      ws.on('message', (data: RawData) => o.data(bytesOf(data)));
      ws.once('close', () => {
        release();
        o.end();
      });
    },
    write(parts, written) {
      if (!open()) return true;
      const done = written
        ? (): void => {
            written();
            sent();
          }
        : sent;
      ws.send(parts.length === 1 ? parts[0]! : Buffer.concat(parts), { binary: true }, done);
      return ws.bufferedAmount < TUNNEL_HIGH_WATER;
    },
    onDrain(fn) {
      if (!open() || ws.bufferedAmount < TUNNEL_HIGH_WATER) fn();
      else waiting.push(fn);
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    end: () => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
    },
    get destroyed() {
      return ws.readyState === ws.CLOSED;
    },
  };
}
