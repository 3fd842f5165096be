import { spawn } from 'node:child_process';
import { Server, type Socket } from 'node:net';

/**
 * libuv accepts one connection per listening handle per turn of the event loop (libuv#3696,
 * in Node 20). A server saturated with requests takes a second or more per turn, so new
 * connections (kubectl, a component re-dialling) wait in the kernel's accept queue for tens of
 * seconds while the connections already open are served: measured in a 30,000-pod scale run,
 * one accept per 1-2 s with 70-140 connections queued, and kubectl's TLS handshake timing out.
 * Go's server accepts on its own goroutine and has no such queue.
 *
 * More listening handles on the same socket accept more per turn. Node 20 has neither dup(2)
 * nor SO_REUSEPORT for TCP (v22.12), but a descriptor passed over an IPC channel arrives as a
 * duplicate (SCM_RIGHTS): a short-lived child gets the server's raw handle `count` times and
 * sends each straight back, without listening on it, so it accepts nothing itself. Each
 * duplicate becomes a listening handle whose connections are handed to `server` as its own
 * (`'connection'`, as TLS and HTTP servers take them).
 *
 * Resolves with the extra handles (close them with the server), or none when `server` has no
 * raw handle to send.
 */
export async function addAcceptHandles(server: Server, count: number, backlog: number): Promise<Server[]> {
  const handle = (server as unknown as { _handle?: object })._handle;
  if (!handle || count <= 0) return [];
  const child = spawn(process.execPath, ['-e', ECHO_HANDLES], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {},
  });
  // 'close': the child has exited and its channel is drained (the descriptors it held are shut).
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const extras: Server[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no duplicate handles within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      child.on('error', reject);
      child.once('exit', (code) => reject(new Error(`the handle-passing child exited (code ${code}) early`)));
      child.on('message', (_m, dup) => {
        const extra = new Server();
        extra.on('connection', (socket: Socket) => server.emit('connection', socket));
        extra.listen(dup, backlog);
        extras.push(extra);
        if (extras.length === count) resolve();
      });
      // With a callback a failed send (the server closed meanwhile: EINVAL or EBADF) is an error here,
      // not an 'error' event of the child for each of the sends.
      for (let i = 0; i < count; i++) child.send(i, handle as Server, undefined, (err) => err && reject(err));
    });
  } catch (err) {
    for (const extra of extras) extra.close();
    throw err;
  } finally {
    clearTimeout(timer);
    child.removeAllListeners('exit');
    child.removeAllListeners('error');
    child.on('error', () => undefined); // a kill of a child that already went
    // A duplicate still on its way after a failure is closed, or it would hold the port; the
    // call ends once the child is gone, so that a failure leaves the port to the server alone.
    child.removeAllListeners('message');
    child.on('message', (_m, late) => (late as { close?: () => void } | undefined)?.close?.());
    child.kill();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
  return extras;
}

/** How long the round trips may take (a listener's close waits for them). */
const TIMEOUT_MS = 10_000;

/** How long the call waits for the killed child to be gone. */
const CLOSE_WAIT_MS = 2000;

/** The child: every handle it is sent goes straight back (a duplicate descriptor each way). */
const ECHO_HANDLES = "process.on('message', (m, h) => process.send(m, h));";
