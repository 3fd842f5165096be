import type { ApiObject, Status } from '@svc/api';
import type { HandlerScope } from './scope.js';
import { readWatchParams } from './list-params.js';
import { jsonOf } from '../serialization-cache.js';
import { includeObjectOf, toTable } from '../table.js';

/** Server settings a watch needs. */
export interface WatchSettings {
  minRequestTimeoutSeconds: number;
  watchListEnabled: boolean;
  /** Fires when the server shuts down: open watches end. */
  stopping: AbortSignal;
}

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
  s.res.status(200).type('application/json');
  s.res.setHeader('Transfer-Encoding', 'chunked');
  s.res.setHeader('Cache-Control', 'no-cache, private');
  s.res.flushHeaders();
  try {
    let next = await nextOrAbort(events, ac.signal);
    while (next && !next.done) {
      const { type, object } = next.value;
      let line: string;
      if (include && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')) {
        line = `{"type":"${type}","object":${JSON.stringify(toTable(s.resource, [object as ApiObject], { group: s.format.group ?? '', include, headers }))}}\n`;
        headers = false;
      } else {
        line = eventLine(type, object);
      }
      if (!s.res.write(line)) await drained(s, ac.signal);
      if (ac.signal.aborted) break;
      next = await nextOrAbort(events, ac.signal);
    }
  } finally {
    clearTimeout(timer);
    settings.stopping.removeEventListener('abort', stop);
    ac.abort();
    await events.return(undefined);
  }
  s.res.end();
}

function eventLine(type: string, object: ApiObject | Status): string {
  return `{"type":${JSON.stringify(type)},"object":${jsonOf(object)}}\n`;
}

async function nextOrAbort<T>(it: AsyncGenerator<T>, signal: AbortSignal): Promise<IteratorResult<T> | undefined> {
  if (signal.aborted) return undefined;
  return Promise.race([
    it.next(),
    new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true })),
  ]);
}

function drained(s: HandlerScope, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => { s.res.off('drain', done); resolve(); };
    s.res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
