import { StatusError } from '@svc/api/errors';
import type { ApiObject, Status, WatchEvent } from '@svc/api/types';
import type { RestClient } from './rest-client.js';

export interface WatchOptions {
  /** Start after this version; unset = from the current state (the server sends ADDED for everything). */
  resourceVersion?: string;
  /** Ask for BOOKMARK events (default true). */
  allowWatchBookmarks?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  timeoutSeconds?: number;
  /** Ends the watch: the iteration then finishes without an error. */
  signal?: AbortSignal;
}

/** The `Status` of a failed answer (the server's, or one built from the HTTP status). */
export function responseError(status: number, body: Buffer | string): StatusError {
  const text = body.toString();
  try {
    const s = JSON.parse(text) as Status;
    if (s && s.kind === 'Status') return new StatusError(s);
  } catch {
    /* not a Status */
  }
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    code: status,
    message: text.slice(0, 500) || `HTTP ${status}`,
  });
}

function watchQuery(path: string, o: WatchOptions): string {
  const q = new URLSearchParams({ watch: '1' });
  if (o.allowWatchBookmarks ?? true) q.set('allowWatchBookmarks', 'true');
  if (o.resourceVersion !== undefined) q.set('resourceVersion', o.resourceVersion);
  if (o.labelSelector) q.set('labelSelector', o.labelSelector);
  if (o.fieldSelector) q.set('fieldSelector', o.fieldSelector);
  if (o.timeoutSeconds !== undefined) q.set('timeoutSeconds', String(o.timeoutSeconds));
  return `${path}${path.includes('?') ? '&' : '?'}${q.toString()}`;
}

/**
 * Opens a watch on a collection path (`/api/v1/namespaces/x/configmaps`). Resolves once the
 * server accepted it (a refusal throws the server's `StatusError`); the events then come in
 * server order, one per JSON line, until the server closes the stream or `signal` fires.
 * ERROR events are handed over as events (their object is a `Status`): the caller decides.
 */
export async function watch<T extends ApiObject = ApiObject>(
  client: RestClient,
  path: string,
  opts: WatchOptions = {},
): Promise<AsyncIterable<WatchEvent<T>>> {
  const res = await client.stream('GET', watchQuery(path, opts), { signal: opts.signal });
  if (res.status !== 200) {
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    throw responseError(res.status, Buffer.concat(chunks));
  }
  const body = res.body;
  const signal = opts.signal;
  return {
    async *[Symbol.asyncIterator]() {
      let buffer = '';
      body.setEncoding('utf8');
      try {
        for await (const chunk of body) {
          buffer += chunk as string;
          let i: number;
          while ((i = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, i).trim();
            buffer = buffer.slice(i + 1);
            if (line) yield JSON.parse(line) as WatchEvent<T>;
          }
        }
        const rest = buffer.trim();
        if (rest) yield JSON.parse(rest) as WatchEvent<T>;
      } catch (e) {
        if (signal?.aborted) return;
        throw e;
      } finally {
        body.destroy();
      }
    },
  };
}
