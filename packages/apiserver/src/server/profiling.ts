import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapSnapshot } from 'node:v8';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/**
 * Serves one profiling path; false when `path` is none of them (the caller answers 404).
 * `path` is the request's path as sent (`/debug/pprof` and `/debug/pprof/` differ).
 */
export type ProfilingHandler = (req: Req, res: Res, path: string) => Promise<boolean>;

export interface ProfilingConfig {
  /** `--contention-profiling`: finer CPU sampling and `/debug/pprof/block` (event-loop delay). */
  contention: boolean;
  /** `/debug/pprof/cmdline` (the debug socket has it, as Kubernetes'; the secure port does not). */
  cmdline?: boolean;
}

/** Go's pprof default when `seconds` is absent or not a positive integer. */
const DEFAULT_PROFILE_SECONDS = 30;

/**
 * Kubernetes' `/debug/pprof/` endpoints with what Node's inspector gives instead of Go's pprof
 * formats: `profile?seconds=N` a V8 CPU profile (`.cpuprofile`, JSON; Chrome DevTools and
 * speedscope read it), `heap` a V8 heap snapshot (`.heapsnapshot`); with contention profiling
 * `block` the event loop's delay histogram (Node's nearest counterpart of Go's block profile).
 */
export function profilingEndpoints(c: ProfilingConfig): ProfilingHandler {
  let cpuBusy = false;
  let loopDelay: IntervalHistogram | undefined;
  if (c.contention) {
    loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
  }
  const names = ['profile', 'heap', ...(c.contention ? ['block'] : []), ...(c.cmdline ? ['cmdline'] : [])];
  return async (req, res, path) => {
    switch (path) {
      case '/debug/pprof':
        res.statusCode = 302;
        res.setHeader('Location', '/debug/pprof/');
        res.end();
        return true;
      case '/debug/pprof/':
        text(res, 200, `/debug/pprof/\n\n${names.map((n) => `/debug/pprof/${n}\n`).join('')}`);
        return true;
      case '/debug/pprof/profile': {
        if (cpuBusy) {
          text(res, 500, 'Could not enable CPU profiling: cpu profiling already in use\n');
          return true;
        }
        cpuBusy = true;
        try {
          await cpuProfile(req, res, { seconds: secondsOf(req), intervalUs: c.contention ? 100 : 1000 });
        } finally {
          cpuBusy = false;
        }
        return true;
      }
      case '/debug/pprof/heap':
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/octet-stream');
        res.setHeader('Content-Disposition', 'attachment; filename="heap.heapsnapshot"');
        await new Promise<void>((resolve) => {
          const snapshot = getHeapSnapshot();
          snapshot.on('end', resolve).on('error', () => resolve());
          res.once('close', () => {
            snapshot.destroy();
            resolve();
          });
          snapshot.pipe(res as NodeJS.WritableStream);
        });
        return true;
      case '/debug/pprof/block':
        if (!loopDelay) return false;
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(histogramOf(loopDelay)));
        return true;
      case '/debug/pprof/cmdline':
        if (!c.cmdline) return false;
        text(res, 200, process.argv.join('\0'));
        return true;
      default:
        return false;
    }
  };
}

function text(res: Res, code: number, body: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(body);
}

function secondsOf(req: Req): number {
  const raw = new URL(req.url ?? '/', 'https://x').searchParams.get('seconds') ?? '';
  const n = /^\d+$/.test(raw) ? Number(raw) : 0;
  return n > 0 ? n : DEFAULT_PROFILE_SECONDS;
}

/** Samples the CPU for `seconds` (less if the client leaves) and answers the profile. */
async function cpuProfile(req: Req, res: Res, o: { seconds: number; intervalUs: number }): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: o.intervalUs });
    await session.post('Profiler.start');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, o.seconds * 1000);
      res.once('close', done);
      function done(): void {
        clearTimeout(timer);
        res.off('close', done);
        resolve();
      }
    });
    const { profile } = await session.post('Profiler.stop');
    if (res.writableEnded || (req as { destroyed?: boolean }).destroyed) return;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Disposition', 'attachment; filename="profile.cpuprofile"');
    res.end(JSON.stringify(profile));
  } finally {
    session.disconnect();
  }
}

function histogramOf(h: IntervalHistogram): Record<string, number> {
  const ms = (ns: number): number => Math.round(ns / 1e3) / 1e3;
  return {
    count: h.count,
    minMs: ms(h.min),
    meanMs: ms(h.mean),
    p50Ms: ms(h.percentile(50)),
    p99Ms: ms(h.percentile(99)),
    maxMs: ms(h.max),
  };
}
