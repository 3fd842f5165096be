import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { ClientLogger } from '@svc/client';
import type { Container, Probe } from '@svc/api';
import { criErrorMessage, type CriClient } from './cri.js';
import { sleep } from './sleep.js';

export type ProbeType = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

/** A running container to probe. */
export interface ProbeTarget {
  podUid: string;
  podIp: string;
  container: Container;
  containerId: string;
  startedAtMs: number;
}

const PROBES: ReadonlyArray<[ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe']> = [
  ['liveness', 'livenessProbe'],
  ['readiness', 'readinessProbe'],
  ['startup', 'startupProbe'],
];

/** Kubernetes' results before the first probe: a container is live until proven otherwise, neither ready nor started. */
const INITIAL: Record<ProbeType, ProbeResult> = { liveness: 'success', readiness: 'failure', startup: 'unknown' };

function resolvePort(port: number | string, c: Container): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const named = c.ports?.find((p) => p.name === port);
  if (!named) throw new Error(`port ${port} not found in the container's ports`);
  return named.containerPort;
}

function httpProbe(p: NonNullable<Probe['httpGet']>, t: ProbeTarget, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const https = (p.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
    const headers: Record<string, string> = {};
    for (const h of p.httpHeaders ?? []) headers[h.name] = h.value;
    const path = p.path ? (p.path.startsWith('/') ? p.path : `/${p.path}`) : '/';
    const req = (https ? httpsRequest : httpRequest)(
      {
        host: p.host || t.podIp,
        port: resolvePort(p.port, t.container),
        path,
        method: 'GET',
        headers,
        timeout: timeoutMs,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? undefined : `HTTP probe failed with statuscode: ${code}`);
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (e) =>
      resolve(`Get ${https ? 'https' : 'http'}://${p.host || t.podIp}:${String(p.port)}${path}: ${e.message}`),
    );
    req.end();
  });
}

function tcpProbe(p: NonNullable<Probe['tcpSocket']>, t: ProbeTarget, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const sock = connect({ host: p.host || t.podIp, port: resolvePort(p.port, t.container), timeout: timeoutMs });
    sock.on('connect', () => {
      sock.destroy();
      resolve(undefined);
    });
    sock.on('timeout', () => {
      sock.destroy();
      resolve('dial tcp: i/o timeout');
    });
    sock.on('error', (e) => resolve(`dial tcp: ${e.message}`));
  });
}

/**
 * Probe workers, one per probe of each running container (Kubernetes' prober manager): the
 * first probe runs `initialDelaySeconds` after the container started, then one every
 * `periodSeconds` with `timeoutSeconds`; a result changes after `successThreshold`
 * (`failureThreshold`) equal outcomes in a row, and `onChange(podUid)` is called then.
 * Liveness and readiness wait until the start-up probe passed; the start-up probe stops
 * once it passed; a liveness or start-up failure holds (no more probing) until the
 * container is replaced, i.e. a new container id.
 */
export class ProbeManager {
  private readonly workers = new Map<string, { podUid: string; stop: AbortController; done: Promise<void> }>();
  private readonly results = new Map<string, ProbeResult>();
  private stopped = false;

  constructor(
    private readonly o: {
      cri: CriClient;
      logger: ClientLogger;
      onChange: (podUid: string) => void;
      /** Every failed probe, with what failed (Kubernetes records an `Unhealthy` event each time). */
      onFailure?: (t: ProbeTarget, type: ProbeType, output: string) => void;
    },
  ) {}

  /** Starts the workers of `t`'s probes unless running already (idempotent per container id); nothing after `stopAll`. */
  ensure(t: ProbeTarget): void {
    if (this.stopped) return;
    for (const [type, field] of PROBES) {
      const probe = t.container[field];
      const key = `${t.containerId}/${type}`;
      if (!probe || this.workers.has(key)) continue;
      this.results.set(key, INITIAL[type]);
      const stop = new AbortController();
      const done = this.work(t, { type, probe, key, signal: stop.signal }).catch((e: unknown) => {
        this.o.logger.error('probe worker failed', {
          pod: t.podUid,
          container: t.container.name,
          probe: type,
          error: String(e),
        });
      });
      this.workers.set(key, { podUid: t.podUid, stop, done });
    }
  }

  /** Stops the workers of `podUid`'s containers whose id is not in `keep` and forgets their results. */
  prune(podUid: string, keep: ReadonlySet<string> = new Set()): void {
    for (const [key, w] of this.workers) {
      if (w.podUid !== podUid || keep.has(key.slice(0, key.lastIndexOf('/')))) continue;
      w.stop.abort();
      this.workers.delete(key);
      this.results.delete(key);
    }
  }

  /** Stops every worker for good and waits for them. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    const all = [...this.workers.values()];
    for (const w of all) w.stop.abort();
    this.workers.clear();
    await Promise.all(all.map((w) => w.done));
  }

  private result(containerId: string, type: ProbeType): ProbeResult {
    return this.results.get(`${containerId}/${type}`) ?? INITIAL[type];
  }

  /** The start-up probe passed (or `c` has none). */
  started(containerId: string, c: Container): boolean {
    return !c.startupProbe || this.result(containerId, 'startup') === 'success';
  }

  /** The readiness probe passes (or `c` has none). */
  ready(containerId: string, c: Container): boolean {
    return !c.readinessProbe || this.result(containerId, 'readiness') === 'success';
  }

  /** Why the container must be restarted (a liveness or start-up failure), else undefined. */
  failed(containerId: string, c: Container): string | undefined {
    if (c.livenessProbe && this.result(containerId, 'liveness') === 'failure') return 'failed liveness probe';
    if (c.startupProbe && this.result(containerId, 'startup') === 'failure') return 'failed startup probe';
    return undefined;
  }

  /** Runs `probe` of `t` until `signal` fires, keeping its result under `key`. */
  private async work(
    t: ProbeTarget,
    { type, probe, key, signal }: { type: ProbeType; probe: Probe; key: string; signal: AbortSignal },
  ): Promise<void> {
    const periodMs = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
    const successThreshold = Math.max(1, probe.successThreshold ?? 1);
    const failureThreshold = Math.max(1, probe.failureThreshold ?? 3);
    await sleep(t.startedAtMs + (probe.initialDelaySeconds ?? 0) * 1000 - Date.now(), signal);
    let last: ProbeResult | undefined;
    let run = 0;
    while (!signal.aborted) {
      const gated =
        type === 'startup' ? this.started(t.containerId, t.container) : !this.started(t.containerId, t.container);
      if (!gated) {
        const failure = await this.probeOnce(probe, t, timeoutMs);
        if (signal.aborted) return;
        const outcome: ProbeResult = failure === undefined ? 'success' : 'failure';
        if (failure !== undefined) this.o.onFailure?.(t, type, failure);
        if (outcome === last) run++;
        else {
          last = outcome;
          run = 1;
        }
        if (run >= (outcome === 'success' ? successThreshold : failureThreshold) && this.results.get(key) !== outcome) {
          this.results.set(key, outcome);
          this.o.logger.info('probe result changed', {
            pod: t.podUid,
            container: t.container.name,
            probe: type,
            result: outcome,
            output: failure,
          });
          this.o.onChange(t.podUid);
        }
        if (outcome === 'failure' && type !== 'readiness' && this.results.get(key) === 'failure') return;
      }
      await sleep(periodMs, signal);
    }
  }

  /** One probe: undefined on success, else what failed. */
  private async probeOnce(p: Probe, t: ProbeTarget, timeoutMs: number): Promise<string | undefined> {
    try {
      if (p.exec) {
        const deadline = new Promise<{ exitCode?: number; stdout?: Uint8Array | string }>((resolve) =>
          setTimeout(() => resolve({ exitCode: -1, stdout: 'command timed out' }), timeoutMs + 1000).unref(),
        );
        const r = await Promise.race([
          this.o.cri.runtime.execSync({
            containerId: t.containerId,
            cmd: p.exec.command ?? [],
            timeout: timeoutMs / 1000,
          }),
          deadline,
        ]);
        // As Kubernetes, what failed is the command's output (nothing, for `false`).
        return r.exitCode === 0
          ? undefined
          : Buffer.from(r.stdout ?? '')
              .toString('utf8')
              .slice(0, 200);
      }
      if (p.httpGet) return await httpProbe(p.httpGet, t, timeoutMs);
      if (p.tcpSocket) return await tcpProbe(p.tcpSocket, t, timeoutMs);
      return undefined;
    } catch (e) {
      return criErrorMessage(e);
    }
  }
}
