import { connect, type Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { FRAME_HEADER_BYTES, type SpdyConnection, type SpdyStream } from './spdy-connection.js';

/** Bytes read from the pod's port at most at a time; each read becomes one DATA frame. */
const READ_BYTES = 256 * 1024;
/** Read buffers a connection keeps for reuse once their frame has left. */
const SPARE_BUFFERS = 4;

/**
 * Where a pod's ports are reached: its localhost, as containerd dials `localhost:<port>` inside
 * the pod's network namespace (a server bound to loopback only is reached). Containers share
 * the node's network here, so that is the node's 127.0.0.1 whatever the pod's IP.
 */
const POD_LOCALHOST = '127.0.0.1';

/** Kubernetes' message when the pod's port refuses the connection. */
function connectFailed(target: PortForwardTarget, port: number, e: Error): string {
  return `error forwarding port ${port} to pod ${target.sandboxId}, uid : failed to connect to ${POD_LOCALHOST}:${port}: ${e.message}`;
}

export interface PortForwardTarget {
  /** The sandbox's id, named in error messages as Kubernetes names the pod. */
  sandboxId: string;
  /** The ports of the CRI request (the client's `port` query): what a non-tunnelled WebSocket forwards. */
  ports?: number[];
}

/**
 * Kubernetes' port-forward protocol (`portforward.k8s.io`) over SPDY: the client opens a pair
 * of streams per connection, `streamType` error and data, with the same `requestID` and the
 * `port`. Once both are there the data stream is joined to a TCP connection to the pod's port;
 * a failure is written on the error stream. Either side ending ends the other; the error
 * stream is closed last, which tells the client the connection is done.
 */
export function portForwardOverSpdy(conn: SpdyConnection, target: PortForwardTarget): (s: SpdyStream) => void {
  const pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream }>();
  return (s) => {
    const type = s.headers.streamtype;
    const id = s.headers.requestid ?? '';
    if (type !== 'error' && type !== 'data') {
      conn.reset(s.id);
      return;
    }
    const pair = pairs.get(id) ?? {};
    if (pair[type]) {
      conn.reset(s.id);
      return;
    }
    pair[type] = s;
    pairs.set(id, pair);
    if (pair.error && pair.data) {
      pairs.delete(id);
      forward({ error: pair.error, data: pair.data, target, conn });
    }
  };
}

/** How far a pod connection's output may run ahead of the WebSocket before it is paused. */
const WS_HIGH_WATER = 1024 * 1024;

/**
 * Kubernetes' port-forward over plain WebSocket (`v4.channel.k8s.io`, its base64 variant, or no
 * subprotocol), as the official clients speak it: the ports come with the request, and port
 * `i` has data channel `2i` and error channel `2i+1`, each of which first carries the port
 * number (2 bytes, little-endian). A message is its channel byte and data (base64: the
 * channel as a digit, then base64 text). Each port is one connection to the pod's port; a
 * failure goes on its error channel, and the WebSocket closes once every connection is done.
 */
export function portForwardOverWebSocket(
  ws: WebSocket,
  o: { target: PortForwardTarget; ports: number[]; base64: boolean },
): void {
  const { target, ports, base64 } = o;
  const send = (channel: number, data: Buffer, done?: () => void): void => {
    if (ws.readyState !== ws.OPEN) return;
    if (base64) ws.send(`${channel}${data.toString('base64')}`, done);
    else ws.send(Buffer.concat([Buffer.of(channel), data]), { binary: true }, done);
  };
  const sockets: Socket[] = [];
  let open = ports.length;
  const finished = (): void => {
    if (--open === 0 && ws.readyState === ws.OPEN) ws.close(1000);
  };
  ports.forEach((port, i) => {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port);
    send(2 * i, portBytes);
    send(2 * i + 1, portBytes);
    const socket = connect({ host: POD_LOCALHOST, port });
    sockets.push(socket);
    let connected = false;
    let queued = 0;
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (b: Buffer) => {
      queued += b.length;
      send(2 * i, b, () => {
        queued -= b.length;
        if (queued < WS_HIGH_WATER && socket.isPaused()) socket.resume();
      });
      if (queued >= WS_HIGH_WATER) socket.pause();
    });
    socket.on('error', (e) => {
      if (!connected) {
        send(2 * i + 1, Buffer.from(connectFailed(target, port, e)));
      }
      socket.destroy();
    });
    socket.once('close', finished);
  });
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const raw = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (raw.length === 0) return;
    const channel = base64 && !isBinary ? raw[0]! - 0x30 : raw[0]!;
    const body = base64 && !isBinary ? Buffer.from(raw.subarray(1).toString(), 'base64') : raw.subarray(1);
    // Only data channels carry the client's bytes; what comes on an error channel is dropped.
    const socket = channel % 2 === 0 ? sockets[channel / 2] : undefined;
    if (!socket || body.length === 0 || socket.destroyed) return;
    if (!socket.write(body)) {
      ws.pause();
      socket.once('drain', () => ws.resume());
    }
  });
  ws.once('close', () => {
    for (const s of sockets) s.destroy();
  });
}

function forward(o: { error: SpdyStream; data: SpdyStream; target: PortForwardTarget; conn: SpdyConnection }): void {
  const { error, data, target, conn } = o;
  const portText = data.headers.port ?? '';
  const port = Number(portText);
  const fail = (message: string): void => {
    error.write(Buffer.from(message));
    error.end();
    data.end();
  };
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) {
    fail(`invalid port ${JSON.stringify(portText)}`);
    return;
  }
  // Each read lands after room for the DATA frame's header, so the frame goes out without a
  // copy; once it has left, its memory takes the next reads (forwarding then allocates nothing).
  const spare: ArrayBufferLike[] = [];
  const socket: Socket = connect({
    host: POD_LOCALHOST,
    port,
    onread: {
      buffer: () => {
        const reuse = spare.pop();
        if (reuse) return Buffer.from(reuse, FRAME_HEADER_BYTES, READ_BYTES);
        return Buffer.allocUnsafe(FRAME_HEADER_BYTES + READ_BYTES).subarray(FRAME_HEADER_BYTES);
      },
      callback: (n: number, buf: Uint8Array): boolean => {
        const memory = buf.buffer;
        const frame = Buffer.from(memory, buf.byteOffset - FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + n);
        const recycle = (): void => {
          if (spare.length < SPARE_BUFFERS && memory.byteLength === FRAME_HEADER_BYTES + READ_BYTES) spare.push(memory);
        };
        if (!data.writeFrame(frame, recycle)) {
          socket.pause();
          conn.transport.onDrain(() => socket.resume());
        }
        return true;
      },
    },
  });
  let connected = false;
  socket.on('connect', () => {
    connected = true;
  });
  data.onData((b) => {
    if (!socket.write(b)) {
      conn.transport.pause();
      socket.once('drain', () => conn.transport.resume());
    }
  });
  data.onEnd(() => socket.end());
  socket.on('error', (e: NodeJS.ErrnoException) => {
    if (!connected) {
      fail(connectFailed(target, port, e));
    }
    socket.destroy();
  });
  socket.on('close', () => {
    if (!connected) return;
    data.end();
    error.end();
  });
}
