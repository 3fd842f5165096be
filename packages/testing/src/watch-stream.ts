import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface WatchEventJson {
  type: string;
  object: {
    kind?: string;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
    message?: string;
  } & Record<string, unknown>;
}

/** An open watch: its HTTP status and headers, and its events one by one. */
export class WatchStream {
  private buffer = '';
  private readonly queue: WatchEventJson[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private error: Error | undefined;

  constructor(
    readonly res: IncomingMessage,
    private readonly abort: () => void,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.buffer += chunk;
      let i: number;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        if (line.trim()) this.queue.push(JSON.parse(line) as WatchEventJson);
      }
      this.wake();
    });
    res.on('end', () => {
      this.ended = true;
      this.wake();
    });
    res.on('error', (e) => {
      this.error = e;
      this.ended = true;
      this.wake();
    });
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** The next event, or undefined when the stream ended; throws after `timeoutMs` without one. */
  async next(timeoutMs = 10_000): Promise<WatchEventJson | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      if (this.ended) {
        if (this.error) throw this.error;
        return undefined;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.queue.shift();
  }

  /** The next `n` events (skipping BOOKMARKs unless `withBookmarks`). */
  async take(n: number, opts: { timeoutMs?: number; withBookmarks?: boolean } = {}): Promise<WatchEventJson[]> {
    const out: WatchEventJson[] = [];
    while (out.length < n) {
      const e = await this.next(opts.timeoutMs);
      if (!e) throw new Error(`watch ended after ${out.length} of ${n} events`);
      if (e.type === 'BOOKMARK' && !opts.withBookmarks) continue;
      out.push(e);
    }
    return out;
  }

  /** Resolves when the server ends the stream (or throws after `timeoutMs`). */
  async waitEnd(timeoutMs = 10_000): Promise<WatchEventJson[]> {
    const rest: WatchEventJson[] = [];
    for (;;) {
      const e = await this.next(timeoutMs);
      if (!e) return rest;
      rest.push(e);
    }
  }

  close(): void {
    this.abort();
  }
}

/** An API server to watch: its URL, the CA its serving certificate chains to, a bearer token. */
export interface WatchServer {
  baseUrl: string;
  caPem: string;
  token?: string | undefined;
}

/** Opens a watch (GET with `watch=1` already in `path`) and resolves once the response headers arrived. */
export function openWatch(
  { baseUrl, caPem, token }: WatchServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (token) h.authorization = `Bearer ${token}`;
    const req = httpsRequest(new URL(path, baseUrl), { method: 'GET', headers: h, ca: caPem }, (res) => {
      resolve(new WatchStream(res, () => req.destroy()));
    });
    req.on('error', reject);
    req.end();
  });
}
