import { group, type Lease } from '@svc/api';
import type { RestClient } from './rest-client.js';
import { responseError } from './watch-stream.js';
import { silentClientLogger, sleep, type ClientLogger } from './logger.js';

export interface LeaderElectionConfig {
  client: RestClient;
  /** The Lease's namespace and name. */
  namespace: string;
  name: string;
  /** This candidate's identity (unique among candidates). */
  identity: string;
  /** How long a lease holds without renewal; others take over after it. */
  leaseDurationMs: number;
  /** The leader gives up when it could not renew for this long; must be below `leaseDurationMs`. */
  renewDeadlineMs: number;
  /** Pause between acquire and renew attempts. */
  retryPeriodMs: number;
  /** Runs while leading; `signal` fires when leadership ends and the work must stop. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once after leading ended (not when this candidate never led). */
  onStoppedLeading?(): void;
  /** Called when a different holder is observed. */
  onNewLeader?(identity: string): void;
  /** Clear the holder on shutdown so another candidate takes over at once (default true). */
  releaseOnCancel?: boolean;
  logger?: ClientLogger;
}

export class LeaderElectionConfigError extends Error {
  override name = 'LeaderElectionConfigError';
}

/** Kubernetes' JitterFactor: retries wait retryPeriod × [1, 1.2). */
const JITTER = 1.2;

/** Kubernetes' checks: leaseDuration > renewDeadline > retryPeriod × 1.2, all positive. */
export function validateLeaderElectionConfig(
  c: Pick<LeaderElectionConfig, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'identity'>,
): void {
  if (!(c.leaseDurationMs > 0) || !(c.renewDeadlineMs > 0) || !(c.retryPeriodMs > 0))
    throw new LeaderElectionConfigError('leaseDuration, renewDeadline and retryPeriod must be positive');
  if (c.renewDeadlineMs >= c.leaseDurationMs)
    throw new LeaderElectionConfigError(
      `leaseDuration (${c.leaseDurationMs} ms) must be greater than renewDeadline (${c.renewDeadlineMs} ms)`,
    );
  if (c.renewDeadlineMs <= JITTER * c.retryPeriodMs)
    throw new LeaderElectionConfigError(
      `renewDeadline (${c.renewDeadlineMs} ms) must be greater than retryPeriod*${JITTER} (${c.retryPeriodMs} ms)`,
    );
  if (!c.identity) throw new LeaderElectionConfigError('identity must not be empty');
}

/** The Lease MicroTime format (RFC 3339 with microseconds). */
function microTime(d: Date): string {
  return d.toISOString().replace(/Z$/, '000Z');
}

/**
 * Leader election on a `coordination/v1` Lease with optimistic updates (resourceVersion
 * preconditions; a conflict re-reads and tries again). A lease is free when it has no holder
 * or its holder's renewTime + leaseDurationSeconds is in the past (we trust the holder's
 * clock, unlike Kubernetes, which times the lease with its own observation clock).
 */
export class LeaderElector {
  private leader = false;
  private observedHolder = '';
  private renewedAt = 0;
  private readonly logger: ClientLogger;
  private readonly path: string;

  constructor(private readonly c: LeaderElectionConfig) {
    validateLeaderElectionConfig(c);
    this.logger = c.logger ?? silentClientLogger;
    this.path = `/apis/${group('coordination')}/v1/namespaces/${encodeURIComponent(c.namespace)}/leases`;
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** When this candidate last acquired or renewed the lease (ms since the epoch; 0 = never). */
  get lastRenewed(): number {
    return this.renewedAt;
  }

  /** The holder last seen on the lease ('' when free or not read yet). */
  get leaderIdentity(): string {
    return this.observedHolder;
  }

  /**
   * Campaigns until leading, leads until the lease is lost or `signal` fires. On a lost lease
   * `onStoppedLeading` runs at once, as client-go's does, without waiting for the work to wind
   * down (components exit there: a candidate that is no longer leader must not go on writing).
   * On `signal` the work finishes first, then (with `releaseOnCancel`) the lease is released,
   * then `onStoppedLeading` runs. Resolves once the work finished and `onStoppedLeading` ran, or
   * when `signal` fires before leading.
   */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (await this.attempt(signal, this.c.renewDeadlineMs)) break;
      await sleep(this.jittered(), signal);
    }
    if (signal.aborted) return;
    this.leader = true;
    this.logger.info('became leader', { lease: `${this.c.namespace}/${this.c.name}`, identity: this.c.identity });
    const lead = new AbortController();
    const stop = (): void => lead.abort();
    signal.addEventListener('abort', stop, { once: true });
    const work = (async () => {
      await this.c.onStartedLeading(lead.signal);
    })().catch((e: unknown) => {
      this.logger.error('onStartedLeading failed', { error: String(e) });
    });
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.c.retryPeriodMs, signal);
      if (signal.aborted) break;
      const left = lastRenew + this.c.renewDeadlineMs - Date.now();
      if (left > 0 && (await this.attempt(signal, left))) {
        lastRenew = Date.now();
      } else if (Date.now() - lastRenew >= this.c.renewDeadlineMs) {
        this.logger.warn('failed to renew lease within the renew deadline, stopping', { identity: this.c.identity });
        break;
      }
    }
    this.leader = false;
    signal.removeEventListener('abort', stop);
    lead.abort();
    const lost = !signal.aborted;
    if (lost) this.stoppedLeading();
    await work;
    if (lost) return;
    if (this.c.releaseOnCancel ?? true) await this.release();
    this.stoppedLeading();
  }

  private stoppedLeading(): void {
    try {
      this.c.onStoppedLeading?.();
    } catch (e) {
      this.logger.error('onStoppedLeading failed', { error: String(e) });
    }
  }

  private jittered(): number {
    return this.c.retryPeriodMs * (1 + Math.random() * (JITTER - 1));
  }

  /** One acquire-or-renew, bounded by `timeoutMs`; false on any failure. */
  private async attempt(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const s = AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, timeoutMs))]);
    try {
      return await this.tryAcquireOrRenew(s);
    } catch (e) {
      if (!signal.aborted) this.logger.warn('lease acquire/renew failed', { error: String(e) });
      return false;
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const c = this.c;
    const durationSeconds = Math.max(1, Math.ceil(c.leaseDurationMs / 1000));
    for (let tries = 0; tries < 3 && !signal.aborted; tries++) {
      const now = new Date();
      const got = await c.client.request('GET', `${this.path}/${encodeURIComponent(c.name)}`, { signal });
      if (got.status === 404) {
        const body: Lease = {
          apiVersion: `${group('coordination')}/v1`,
          kind: 'Lease',
          metadata: { name: c.name, namespace: c.namespace },
          spec: {
            holderIdentity: c.identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        };
        const r = await c.client.request('POST', this.path, { body, signal });
        if (r.status === 201) return this.observe(c.identity);
        if (r.status === 409) continue;
        throw responseError(r.status, r.body);
      }
      if (got.status !== 200) throw responseError(got.status, got.body);
      const lease = got.json<Lease>();
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity ?? '';
      this.observe(holder);
      const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '');
      const expired =
        !holder || Number.isNaN(renewed) || renewed + (spec.leaseDurationSeconds ?? 0) * 1000 < now.getTime();
      if (holder !== c.identity && !expired) return false;
      const mine = holder === c.identity && this.leader;
      const next: Lease = {
        ...lease,
        spec: {
          ...spec,
          holderIdentity: c.identity,
          leaseDurationSeconds: durationSeconds,
          renewTime: microTime(now),
          acquireTime: mine ? spec.acquireTime : microTime(now),
          leaseTransitions: holder === c.identity ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
        },
      };
      const r = await c.client.request('PUT', `${this.path}/${encodeURIComponent(c.name)}`, { body: next, signal });
      if (r.status === 200) return this.observe(c.identity);
      if (r.status === 409) continue;
      throw responseError(r.status, r.body);
    }
    return false;
  }

  private observe(holder: string): true {
    if (holder === this.c.identity) this.renewedAt = Date.now();
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      if (holder) this.c.onNewLeader?.(holder);
    }
    return true;
  }

  /** Clears the holder if it is still us, so another candidate can take over at once. */
  private async release(): Promise<void> {
    const signal = AbortSignal.timeout(this.c.renewDeadlineMs);
    try {
      for (let tries = 0; tries < 3; tries++) {
        const got = await this.c.client.request('GET', `${this.path}/${encodeURIComponent(this.c.name)}`, { signal });
        if (got.status !== 200) return;
        const lease = got.json<Lease>();
        if (lease.spec?.holderIdentity !== this.c.identity) return;
        const now = microTime(new Date());
        const next: Lease = {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
        };
        delete next.spec?.holderIdentity;
        const r = await this.c.client.request('PUT', `${this.path}/${encodeURIComponent(this.c.name)}`, {
          body: next,
          signal,
        });
        if (r.status === 200) return;
        if (r.status !== 409) throw responseError(r.status, r.body);
      }
    } catch (e) {
      this.logger.warn('failed to release lease', { error: String(e) });
    }
  }
}
