import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { criLabel, type Container, type ContainerStateWaiting, type Pod, type PodStatus } from '@svc/api';
import type { ClientLogger } from '@svc/client';
import { goDuration, type BackOff } from './backoff.js';
import {
  criErrorMessage,
  nsToMs,
  type ContainerConfig,
  type CriClient,
  type CriContainerStatus,
  type PodSandbox,
  type PodSandboxConfig,
} from './cri.js';
import {
  containerStatus,
  podConditions,
  podPhase,
  qosClass,
  type ContainerInstance,
  type ContainerView,
} from './pod-status.js';
import type { ProbeManager } from './prober.js';
import { sleep } from './sleep.js';
import {
  ContainerConfigError,
  containerEnvironment,
  expandVars,
  resourceFieldValue,
  type ObjectReader,
} from './environment.js';
import { timeString, type PodEvent, type PodSource } from './types.js';
import type { MountedVolume, VolumeManager } from '../volumes/volume-manager.js';
import { containerMounts } from '../volumes/container-mounts.js';
import { effectiveUser, linuxUserConfig, verifyRunAsNonRoot } from './security-context.js';

/** Kubernetes' minimumGracePeriodInSeconds: a container always gets this long between TERM and KILL. */
const MIN_GRACE_SECONDS = 2;

/** What every pod worker shares. */
export interface WorkerContext {
  cri: CriClient;
  /** `<runtime name>` of container ids (`svc-runtime://<id>`). */
  runtimeName: string;
  nodeIp: string;
  podLogsDir: string;
  logger: ClientLogger;
  /** Container restarts (CrashLoopBackOff), keyed `<pod uid>/<container>`. */
  backoff: BackOff;
  /** Image pulls (ImagePullBackOff), keyed `<pod uid>/<image>`. */
  pullBackoff: BackOff;
  prober: ProbeManager;
  /** How often a worker re-reads its pod's sandboxes and containers from the runtime. */
  relistPeriodMs: number;
  /** Writes the status to the API (absent in standalone mode); failures are retried by the next call. */
  writeStatus?(pod: Pod, source: PodSource, status: PodStatus): Promise<void>;
  /** Deletes the API pod once it is terminated (grace 0, uid precondition); true when it is gone. */
  finalDelete?(pod: Pod): Promise<boolean>;
  onContainerStarted?(kind: ContainerKind, error?: string): void;
  /** Reads the ConfigMaps and Secrets env vars name (absent in standalone mode). */
  readObject?: ObjectReader;
  /** The node's allocatable resources: a `resourceFieldRef` to a limit the container does not set. */
  nodeAllocatable?: Readonly<Record<string, string>>;
  /** Records a core/v1 Event about the pod (Kubernetes' kubelet events); `fieldPath` names the container. */
  recordEvent?(pod: Pod, e: PodEvent): void;
  /** Sets up, resyncs and removes pods' volumes; absent: volumes are ignored. */
  volumes?: VolumeManager;
}

type ContainerKind = 'container' | 'init_container' | 'ephemeral_container';

const FIELD_PATH_LIST: Record<ContainerKind, string> = {
  container: 'containers',
  init_container: 'initContainers',
  ephemeral_container: 'ephemeralContainers',
};

/** An event about one container of the pod. */
type ContainerEvent = Omit<PodEvent, 'fieldPath'>;

/** A container to start and the sandbox it starts in. */
interface ContainerTarget {
  c: Container;
  kind: ContainerKind;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
}

export interface PodWorkerOptions {
  pod: Pod;
  source: PodSource;
  ctx: WorkerContext;
  /** Ends the worker's loop. */
  signal: AbortSignal;
}

/** Waiting reasons of a container whose creation is retried at every sync. */
const RETRYING = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

interface Observed {
  sandboxes: PodSandbox[];
  /** The newest ready sandbox. */
  ready?: PodSandbox;
  ip?: string;
  /** Instances by container name, newest (highest restart count) first. */
  byName: Map<string, ContainerInstance[]>;
}

/** The container hash Kubernetes keeps in an annotation: a changed definition (image) restarts the container. */
export function containerHash(c: Container): string {
  const { resources: _resources, ...rest } = c;
  return createHash('md5').update(JSON.stringify(rest)).digest('hex').slice(0, 8);
}

function instanceOf(s: CriContainerStatus): ContainerInstance {
  const restart = Number(s.annotations?.[criLabel('container.restartCount')] ?? s.metadata?.attempt ?? 0);
  return {
    id: s.id,
    name: s.labels?.[criLabel('container.name')] ?? s.metadata?.name ?? '',
    restartCount: Number.isFinite(restart) ? restart : 0,
    state: s.state,
    hash: s.annotations?.[criLabel('container.hash')] ?? '',
    createdAtMs: nsToMs(s.createdAt),
    startedAtMs: nsToMs(s.startedAt),
    finishedAtMs: nsToMs(s.finishedAt),
    exitCode: s.exitCode ?? 0,
    reason: s.reason ?? '',
    message: s.message ?? '',
    imageRef: s.imageRef ?? '',
  };
}

function shouldRestart(policy: string, exitCode: number): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

/** A pod's `<namespace>_<name>_<uid>` log directory under `podLogsDir` (Kubernetes' layout). */
export function podLogDir(podLogsDir: string, pod: Pod): string {
  const m = pod.metadata;
  return join(podLogsDir, `${m.namespace ?? ''}_${m.name ?? ''}_${m.uid ?? ''}`);
}

/**
 * One pod's worker (Kubernetes' pod worker plus its SyncPod): a loop that, on every change
 * of the pod, probe result or back-off expiry and at least every `relistPeriodMs`, reads the
 * pod's sandboxes and containers from the runtime (only those labelled with its uid), brings
 * them to what the spec asks and writes the status. Steps of one pod never overlap.
 * - Running: one sandbox; init containers one by one, then every container; exited ones
 *   restarted as `restartPolicy` says after CrashLoopBackOff; liveness or start-up failures and
 *   changed definitions kill (with the pod's grace) and restart.
 * - Finished (Succeeded/Failed, or already so in the API): nothing restarts, the sandbox stops.
 * - Being deleted (`deletionTimestamp`): every container stops with `deletionGracePeriodSeconds`
 *   (TERM, KILL at the deadline), then the final status is written and the API pod deleted.
 * - Removed from its source: stopped likewise (spec grace), then its containers, sandboxes and
 *   logs are removed and the loop ends. A svclet that stops leaves containers running.
 */
export class PodWorker {
  private removed = false;
  private finished = false;
  private terminated = false;
  private deleted = false;
  private status?: PodStatus;
  private startTimeMs?: number;
  private lastSeen?: Observed;
  private readonly waiting = new Map<string, ContainerStateWaiting>();
  /** The pod's volumes once set up. */
  private volumes: ReadonlyMap<string, MountedVolume> = new Map();
  private kicked = true;
  private wakeAtMs = Infinity;
  private wake?: () => void;
  readonly done: Promise<void>;

  private pod: Pod;
  readonly source: PodSource;
  private readonly ctx: WorkerContext;

  constructor({ pod, source, ctx, signal }: PodWorkerOptions) {
    this.pod = pod;
    this.source = source;
    this.ctx = ctx;
    const start = pod.status?.startTime ? Date.parse(pod.status.startTime) : NaN;
    if (source === 'api' && Number.isFinite(start)) this.startTimeMs = start;
    if (source === 'api' && (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')) this.finished = true;
    this.done = this.loop(signal);
  }

  get uid(): string {
    return this.pod.metadata.uid ?? '';
  }

  get isRemoved(): boolean {
    return this.removed;
  }

  /** The pod as last given, with the status last generated (or the API's until then). */
  podWithStatus(): Pod {
    return { ...this.pod, status: this.status ?? this.pod.status };
  }

  update(pod: Pod): void {
    this.pod = pod;
    this.kick();
  }

  /** The pod left its source: stop it and remove its containers, then end. */
  remove(): void {
    this.removed = true;
    this.kick();
  }

  /** Runs a step soon (a change, probe result). */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** The CRI id of `container`'s newest instance if it runs now, and of the ready sandbox, as last observed. */
  runningIds(container?: string): { containerId?: string; sandboxId?: string } {
    const latest = container === undefined ? undefined : this.lastSeen?.byName.get(container)?.[0];
    return {
      containerId: latest?.state === 'CONTAINER_RUNNING' ? latest.id : undefined,
      sandboxId: this.lastSeen?.ready?.id,
    };
  }

  /** The running containers as last observed: name, runtime id and start time. */
  runningContainers(): Array<{ name: string; id: string; startedAtMs: number }> {
    const out: Array<{ name: string; id: string; startedAtMs: number }> = [];
    for (const [name, [latest]] of this.lastSeen?.byName ?? [])
      if (latest?.state === 'CONTAINER_RUNNING') out.push({ name, id: latest.id, startedAtMs: latest.startedAtMs });
    return out;
  }

  /** Current and previous log file of `container` as last observed, and whether the current one still runs; undefined when it never ran. */
  logPaths(container: string): { current: string; previous?: string; running: boolean } | undefined {
    const [latest, prev] = this.lastSeen?.byName.get(container) ?? [];
    if (!latest) return undefined;
    const dir = join(podLogDir(this.ctx.podLogsDir, this.pod), container);
    const paths: { current: string; previous?: string; running: boolean } = {
      current: join(dir, `${latest.restartCount}.log`),
      running: latest.state === 'CONTAINER_RUNNING',
    };
    if (prev) paths.previous = join(dir, `${prev.restartCount}.log`);
    return paths;
  }

  private get log(): ClientLogger {
    const m = this.pod.metadata;
    const pod = `${m.namespace}/${m.name}`;
    const l = this.ctx.logger;
    return {
      info: (msg, f) => l.info(msg, { pod, ...f }),
      warn: (msg, f) => l.warn(msg, { pod, ...f }),
      error: (msg, f) => l.error(msg, { pod, ...f }),
    };
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.kicked = false;
      this.wakeAtMs = Infinity;
      try {
        if (this.removed) {
          await this.cleanup();
          return;
        }
        if (this.pod.metadata.deletionTimestamp && this.source === 'api') await this.syncDeleting();
        else await this.sync();
      } catch (e) {
        this.log.error('pod sync failed', { error: criErrorMessage(e) });
      }
      await this.pause(signal);
    }
  }

  private async pause(signal: AbortSignal): Promise<void> {
    if (this.kicked || signal.aborted) return;
    await sleep(Math.min(this.ctx.relistPeriodMs, this.wakeAtMs - Date.now()), signal, (wake) => {
      this.wake = wake;
    });
  }

  private wakeAfter(ms: number): void {
    this.wakeAtMs = Math.min(this.wakeAtMs, Date.now() + ms);
  }

  private grace(c?: Container): number {
    const probeGrace = c?.livenessProbe?.terminationGracePeriodSeconds;
    const g =
      probeGrace ?? this.pod.metadata.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30;
    return Math.max(MIN_GRACE_SECONDS, g);
  }

  private async observe(): Promise<Observed> {
    const rt = this.ctx.cri.runtime;
    const selector = { labelSelector: { [criLabel('pod.uid')]: this.uid } };
    const [sbs, cs] = await Promise.all([
      rt.listPodSandbox({ filter: selector }),
      rt.listContainers({ filter: selector }),
    ]);
    const sandboxes = [...(sbs.items ?? [])].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0));
    const ready = sandboxes.find((s) => s.state === 'SANDBOX_READY');
    let ip: string | undefined;
    if (ready) {
      const st = await rt.podSandboxStatus({ podSandboxId: ready.id }).catch(() => undefined);
      ip = st?.status?.network?.ip || undefined;
    }
    const statuses = await Promise.all(
      (cs.containers ?? []).map((c) =>
        rt.containerStatus({ containerId: c.id }).then(
          (r) => r.status ?? undefined,
          () => undefined,
        ),
      ),
    );
    const byName = new Map<string, ContainerInstance[]>();
    for (const s of statuses) {
      if (!s) continue;
      const i = instanceOf(s);
      const list = byName.get(i.name) ?? [];
      list.push(i);
      byName.set(i.name, list);
    }
    for (const list of byName.values())
      list.sort((a, b) => b.restartCount - a.restartCount || b.createdAtMs - a.createdAtMs);
    this.lastSeen = { sandboxes, ready, ip, byName };
    return this.lastSeen;
  }

  private async sync(): Promise<void> {
    this.startTimeMs ??= Date.now();
    let seen = await this.observe();
    if (!this.finished && (await this.mountVolumes())) {
      if (await this.syncContainers(seen)) seen = await this.observe();
    }
    const status = this.generateStatus(seen, false);
    if (status.phase === 'Succeeded' || status.phase === 'Failed') this.finished = true;
    if (this.finished) await this.stopAll(seen, 0);
    await this.publish(status);
  }

  /** Sets up the pod's volumes (Kubernetes' WaitForAttachAndMount); false, and a retry soon, while one cannot be. */
  private async mountVolumes(): Promise<boolean> {
    const volumes = this.ctx.volumes;
    if (!volumes) return true;
    const r = await volumes.mount(this.pod, this.lastSeen?.ip);
    if (!r.ok) {
      this.wakeAfter(1000);
      return false;
    }
    this.volumes = r.volumes;
    return true;
  }

  /** Brings the containers to what the spec asks; true when it started or stopped one. */
  private async syncContainers(seen: Observed): Promise<boolean> {
    const spec = this.pod.spec;
    const policy = spec.restartPolicy ?? 'Always';
    const sandbox = seen.ready;
    if (!sandbox) {
      if (seen.byName.size > 0 && policy === 'Never') {
        this.finished = true;
        return false;
      }
      const config = this.sandboxConfig(seen.sandboxes.length);
      await mkdir(config.logDirectory ?? '', { recursive: true });
      const { podSandboxId } = await this.ctx.cri.runtime.runPodSandbox({ config });
      this.log.info('pod sandbox started', { podSandboxId });
      this.kick();
      return true;
    }
    const sandboxConfig = this.sandboxConfig(sandbox.metadata?.attempt ?? 0);
    const ip = seen.ip || this.ctx.nodeIp;
    const target = (c: Container, kind: ContainerKind): ContainerTarget => ({
      c,
      kind,
      sandboxId: sandbox.id,
      sandboxConfig,
    });
    const regularStarted = spec.containers.some((c) => (seen.byName.get(c.name)?.length ?? 0) > 0);
    if (!regularStarted) {
      for (const c of spec.initContainers ?? []) {
        const latest = seen.byName.get(c.name)?.[0];
        if (latest?.state === 'CONTAINER_EXITED' && latest.exitCode === 0) continue;
        if (!latest) return this.start(target(c, 'init_container'), 0);
        if (latest.state !== 'CONTAINER_EXITED') return false;
        return policy !== 'Never' && this.restart(target(c, 'init_container'), latest);
      }
    }
    let changed = false;
    const live = new Set<string>();
    for (const c of spec.containers) {
      const latest = seen.byName.get(c.name)?.[0];
      if (!latest) {
        changed = (await this.start(target(c, 'container'), 0)) || changed;
      } else if (latest.state === 'CONTAINER_RUNNING') {
        const why =
          this.ctx.prober.failed(latest.id, c) ??
          (latest.hash && latest.hash !== containerHash(c) ? 'definition changed' : undefined);
        if (why) {
          this.log.info(`container ${why}, will be restarted`, { container: c.name });
          this.event(c, 'container', {
            type: 'Normal',
            reason: 'Killing',
            message: `Container ${c.name} ${why}${policy === 'Never' ? '' : ', will be restarted'}`,
          });
          await this.ctx.cri.runtime.stopContainer({ containerId: latest.id, timeout: this.grace(c) });
          this.kick();
          changed = true;
        } else {
          live.add(latest.id);
          this.ctx.prober.ensure({
            podUid: this.uid,
            podIp: ip,
            container: c,
            containerId: latest.id,
            startedAtMs: latest.startedAtMs || Date.now(),
          });
        }
      } else if (latest.state === 'CONTAINER_EXITED') {
        if (shouldRestart(policy, latest.exitCode))
          changed = (await this.restart(target(c, 'container'), latest)) || changed;
        else this.waiting.delete(c.name);
      }
    }
    // Ephemeral containers (kubectl debug) start once and are never restarted.
    for (const c of spec.ephemeralContainers ?? [])
      if (!seen.byName.has(c.name)) changed = (await this.start(target(c, 'ephemeral_container'), 0)) || changed;
    this.ctx.prober.prune(this.uid, live);
    await this.removeDead(seen);
    return changed;
  }

  /** Kubernetes' container GC for a live pod: of each container's exited instances only the two newest are kept (current and previous). */
  private async removeDead(seen: Observed): Promise<void> {
    for (const list of seen.byName.values()) {
      for (const old of list.slice(2)) {
        if (old.state === 'CONTAINER_EXITED') await this.ctx.cri.runtime.removeContainer({ containerId: old.id });
      }
    }
  }

  /** Restarts an exited container unless it is in back-off (then waits as CrashLoopBackOff). */
  private async restart(t: ContainerTarget, latest: ContainerInstance): Promise<boolean> {
    const { c, kind } = t;
    const key = `${this.uid}/${c.name}`;
    const { backoff } = this.ctx;
    const remaining = backoff.remainingMs(key, latest.finishedAtMs);
    if (remaining > 0) {
      const m = this.pod.metadata;
      const message = `back-off ${goDuration(backoff.get(key))} restarting failed container=${c.name} pod=${m.name}_${m.namespace}(${m.uid})`;
      // One event per back-off period (its message names the period), not one per sync while it lasts.
      this.failed(c, kind, {
        waiting: { reason: 'CrashLoopBackOff', message },
        events: [
          [
            'Warning',
            'BackOff',
            `Back-off restarting failed container ${c.name} in pod ${m.name ?? ''}_${m.namespace ?? ''}(${m.uid ?? ''})`,
          ],
        ],
      });
      this.wakeAfter(remaining);
      return false;
    }
    backoff.next(key, latest.finishedAtMs);
    return this.start(t, latest.restartCount + 1);
  }

  /** Pulls the image, creates and starts one container; a failure is kept as the container's waiting reason. */
  private async start(t: ContainerTarget, restartCount: number): Promise<boolean> {
    const { c, kind, sandboxId, sandboxConfig } = t;
    const imageRef = await this.ensureImage(c, kind, sandboxConfig);
    if (imageRef === undefined) return false;
    const rt = this.ctx.cri.runtime;
    await mkdir(join(sandboxConfig.logDirectory ?? '', c.name), { recursive: true });
    let env: Map<string, string>;
    let mounts: NonNullable<ContainerConfig['mounts']>;
    try {
      env = await containerEnvironment(c, {
        namespace: this.pod.metadata.namespace ?? '',
        fieldRef: (path) => this.fieldRef(path),
        read: this.ctx.readObject,
        resourceRef: (ref) => {
          const named = ref.containerName
            ? [...(this.pod.spec.initContainers ?? []), ...this.pod.spec.containers].find(
                (x) => x.name === ref.containerName,
              )
            : c;
          if (!named) throw new ContainerConfigError(`container ${ref.containerName ?? ''} not found in the pod`);
          return resourceFieldValue(named, ref, this.ctx.nodeAllocatable ?? {});
        },
      });
      mounts = await containerMounts(c, { volumes: this.volumes, env, managed: !!this.ctx.volumes });
      await verifyRunAsNonRoot(this.pod, c, async () => {
        const image = (await this.ctx.cri.image.imageStatus({ image: { image: imageRef } })).image;
        return { uid: image?.uid?.value, username: image?.username };
      });
    } catch (e) {
      if (!(e instanceof ContainerConfigError)) throw e;
      this.failed(c, kind, {
        waiting: { reason: 'CreateContainerConfigError', message: e.message },
        events: [['Warning', 'Failed', `Error: ${e.message}`]],
      });
      this.ctx.onContainerStarted?.(kind, 'CreateContainerConfigError');
      this.log.warn('cannot make the container config', { container: c.name, error: e.message });
      return false;
    }
    let containerId: string;
    try {
      ({ containerId } = await rt.createContainer({
        podSandboxId: sandboxId,
        config: {
          ...this.containerConfig(c, { restartCount, imageRef, env }),
          mounts,
          linux: linuxUserConfig(effectiveUser(this.pod, c)),
        },
        sandboxConfig,
      }));
    } catch (e) {
      this.failed(c, kind, {
        waiting: { reason: 'CreateContainerError', message: criErrorMessage(e) },
        events: [['Warning', 'Failed', `Error: ${criErrorMessage(e)}`]],
      });
      this.ctx.onContainerStarted?.(kind, 'CreateContainerError');
      this.log.warn('cannot create container', { container: c.name, error: criErrorMessage(e) });
      return false;
    }
    this.event(c, kind, { type: 'Normal', reason: 'Created', message: `Created container: ${c.name}` });
    try {
      await rt.startContainer({ containerId });
    } catch (e) {
      this.failed(c, kind, {
        waiting: { reason: 'RunContainerError', message: criErrorMessage(e) },
        events: [['Warning', 'Failed', `Error: ${criErrorMessage(e)}`]],
      });
      this.ctx.onContainerStarted?.(kind, 'RunContainerError');
      this.log.warn('cannot start container', { container: c.name, error: criErrorMessage(e) });
      return true;
    }
    this.waiting.delete(c.name);
    this.event(c, kind, { type: 'Normal', reason: 'Started', message: `Started container ${c.name}` });
    this.ctx.onContainerStarted?.(kind);
    this.log.info('container started', { container: c.name, containerId, restartCount });
    return true;
  }

  /** The image reference to create `c` from, pulled per `imagePullPolicy`; undefined (and a waiting reason) when unavailable. */
  private async ensureImage(
    c: Container,
    kind: ContainerKind,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string | undefined> {
    const img = this.ctx.cri.image;
    const image = c.image ?? '';
    const policy = c.imagePullPolicy ?? 'IfNotPresent';
    // A container that could not be created is retried at every sync: its image events are not recorded again.
    const quiet = RETRYING.has(this.waiting.get(c.name)?.reason ?? '');
    if (policy !== 'Always') {
      const present = (await img.imageStatus({ image: { image } })).image?.id;
      if (present) {
        if (!quiet)
          this.event(c, kind, {
            type: 'Normal',
            reason: 'Pulled',
            message: `Container image "${image}" already present on machine`,
          });
        return present;
      }
      if (policy === 'Never') {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        this.failed(c, kind, {
          waiting: { reason: 'ErrImageNeverPull', message },
          events: [
            ['Warning', 'ErrImageNeverPull', message],
            ['Warning', 'Failed', 'Error: ErrImageNeverPull'],
          ],
        });
        return undefined;
      }
    }
    const key = `${this.uid}/${image}`;
    if (this.ctx.pullBackoff.isInBackOffSinceUpdate(key)) {
      this.failed(c, kind, {
        waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` },
        events: [
          ['Normal', 'BackOff', `Back-off pulling image "${image}"`],
          ['Warning', 'Failed', 'Error: ImagePullBackOff'],
        ],
      });
      return undefined;
    }
    if (!quiet) this.event(c, kind, { type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` });
    const started = performance.now();
    try {
      const { imageRef } = await img.pullImage({ image: { image }, sandboxConfig });
      const took = goDuration(Math.round(performance.now() - started));
      if (!quiet)
        this.event(c, kind, {
          type: 'Normal',
          reason: 'Pulled',
          message: `Successfully pulled image "${image}" in ${took} (${took} including waiting)`,
        });
      return imageRef;
    } catch (e) {
      this.ctx.pullBackoff.next(key, Date.now());
      this.failed(c, kind, {
        waiting: { reason: 'ErrImagePull', message: `failed to pull image "${image}": ${criErrorMessage(e)}` },
        events: [
          ['Warning', 'Failed', `Failed to pull image "${image}": ${criErrorMessage(e)}`],
          ['Warning', 'Failed', 'Error: ErrImagePull'],
        ],
      });
      return undefined;
    }
  }

  /**
   * Keeps `waiting` as the container's reason for not running and records `events`, once:
   * a retry that fails the same way (every relist) records nothing new.
   */
  private failed(
    c: Container,
    kind: ContainerKind,
    { waiting, events }: { waiting: ContainerStateWaiting; events: Array<['Normal' | 'Warning', string, string]> },
  ): void {
    const before = this.waiting.get(c.name);
    this.waiting.set(c.name, waiting);
    if (before?.reason === waiting.reason && before?.message === waiting.message) return;
    for (const [type, reason, message] of events) this.event(c, kind, { type, reason, message });
  }

  /** A kubelet event about container `c` of this pod. */
  private event(c: Pick<Container, 'name'>, kind: ContainerKind, e: ContainerEvent): void {
    this.ctx.recordEvent?.(this.pod, {
      ...e,
      fieldPath: `spec.${FIELD_PATH_LIST[kind]}{${c.name}}`,
    });
  }

  private sandboxConfig(attempt: number): PodSandboxConfig {
    const m = this.pod.metadata;
    const name = m.name ?? '';
    const ports = [...(this.pod.spec.initContainers ?? []), ...this.pod.spec.containers]
      .flatMap((c) => c.ports ?? [])
      .filter((p) => p.hostPort);
    return {
      metadata: { name, uid: this.uid, namespace: m.namespace ?? '', attempt },
      hostname: (this.pod.spec.hostname || name).slice(0, 63),
      logDirectory: podLogDir(this.ctx.podLogsDir, this.pod),
      portMappings: ports.map((p) => ({
        protocol: p.protocol ?? 'TCP',
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        hostIp: p.hostIP ?? '',
      })),
      labels: {
        ...m.labels,
        [criLabel('pod.name')]: name,
        [criLabel('pod.namespace')]: m.namespace ?? '',
        [criLabel('pod.uid')]: this.uid,
      },
      annotations: { ...m.annotations },
    };
  }

  /** Kubernetes' downward-API field paths an env var may name. */
  private fieldRef(path: string): string {
    const m = this.pod.metadata;
    const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
    if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2] ?? ''] ?? '';
    const values: Record<string, string | undefined> = {
      'metadata.name': m.name,
      'metadata.namespace': m.namespace,
      'metadata.uid': m.uid,
      'spec.nodeName': this.pod.spec.nodeName,
      'spec.serviceAccountName': this.pod.spec.serviceAccountName,
      'status.hostIP': this.ctx.nodeIp,
      'status.podIP': this.lastSeen?.ip ?? this.ctx.nodeIp,
    };
    return values[path] ?? '';
  }

  private containerConfig(
    c: Container,
    { restartCount, imageRef, env }: { restartCount: number; imageRef: string; env: ReadonlyMap<string, string> },
  ): ContainerConfig {
    const m = this.pod.metadata;
    return {
      metadata: { name: c.name, attempt: restartCount },
      image: { image: imageRef, userSpecifiedImage: c.image ?? '' },
      command: (c.command ?? []).map((x) => expandVars(x, env)),
      args: (c.args ?? []).map((x) => expandVars(x, env)),
      workingDir: c.workingDir ?? '',
      envs: [...env].map(([key, value]) => ({ key, value })),
      labels: {
        [criLabel('pod.name')]: m.name ?? '',
        [criLabel('pod.namespace')]: m.namespace ?? '',
        [criLabel('pod.uid')]: this.uid,
        [criLabel('container.name')]: c.name,
      },
      annotations: {
        [criLabel('container.hash')]: containerHash(c),
        [criLabel('container.restartCount')]: String(restartCount),
        [criLabel('container.terminationMessagePath')]: c.terminationMessagePath ?? '',
        [criLabel('pod.terminationGracePeriod')]: String(this.pod.spec.terminationGracePeriodSeconds ?? 30),
      },
      logPath: join(c.name, `${restartCount}.log`),
      stdin: c.stdin ?? false,
      stdinOnce: c.stdinOnce ?? false,
      tty: c.tty ?? false,
    };
  }

  /** Stops every container (TERM, KILL after `graceSeconds`; at once for 0) and every sandbox. */
  private async stopAll(seen: Observed, graceSeconds: number): Promise<void> {
    this.ctx.prober.prune(this.uid);
    const rt = this.ctx.cri.runtime;
    const running = [...seen.byName.values()]
      .flat()
      .filter((i) => i.state === 'CONTAINER_RUNNING' || i.state === 'CONTAINER_CREATED');
    for (const [name, list] of seen.byName) {
      if (!list.some((i) => i.state === 'CONTAINER_RUNNING')) continue;
      const init = (this.pod.spec.initContainers ?? []).some((x) => x.name === name);
      this.event({ name }, init ? 'init_container' : 'container', {
        type: 'Normal',
        reason: 'Killing',
        message: `Stopping container ${name}`,
      });
    }
    await Promise.all(running.map((i) => rt.stopContainer({ containerId: i.id, timeout: graceSeconds })));
    for (const s of seen.sandboxes) if (s.state === 'SANDBOX_READY') await rt.stopPodSandbox({ podSandboxId: s.id });
  }

  /** Graceful deletion: stop with the deletion's grace, write the final status, then delete the API pod. */
  private async syncDeleting(): Promise<void> {
    if (!this.terminated) {
      const grace = this.grace();
      this.log.info('killing pod for deletion', { gracePeriodSeconds: grace });
      await this.stopAll(await this.observe(), grace);
      this.terminated = true;
      this.finished = true;
    }
    const status = this.generateStatus(await this.observe(), true);
    await this.publish(status);
    if (!this.deleted && this.ctx.finalDelete) this.deleted = await this.ctx.finalDelete(this.pod);
  }

  private async cleanup(): Promise<void> {
    const seen = await this.observe();
    if (!this.terminated) await this.stopAll(seen, this.grace());
    const rt = this.ctx.cri.runtime;
    for (const i of [...seen.byName.values()].flat()) await rt.removeContainer({ containerId: i.id });
    for (const s of seen.sandboxes) await rt.removePodSandbox({ podSandboxId: s.id });
    await rm(podLogDir(this.ctx.podLogsDir, this.pod), { recursive: true, force: true });
    await this.ctx.volumes?.unmount(this.uid);
    this.ctx.backoff.forget(`${this.uid}/`);
    this.ctx.pullBackoff.forget(`${this.uid}/`);
    this.log.info('pod removed');
  }

  private generateStatus(seen: Observed, terminal: boolean): PodStatus {
    const pod = this.pod;
    const view = (c: Container): ContainerView => {
      const instances = seen.byName.get(c.name) ?? [];
      const latest = instances[0];
      const running = latest?.state === 'CONTAINER_RUNNING';
      return {
        instances,
        waiting: this.waiting.get(c.name),
        started: !!latest && running && this.ctx.prober.started(latest.id, c),
        ready: !!latest && running && this.ctx.prober.ready(latest.id, c),
      };
    };
    const rt = this.ctx.runtimeName;
    const init = (pod.spec.initContainers ?? []).map((c) => {
      const s = containerStatus(c, view(c), { runtimeName: rt, initWaitingReason: 'PodInitializing' });
      s.ready = s.state.terminated?.exitCode === 0;
      return s;
    });
    const initPending = init.some((s) => s.state.terminated?.exitCode !== 0);
    const regular = pod.spec.containers.map((c) =>
      containerStatus(c, view(c), {
        runtimeName: rt,
        initWaitingReason: initPending ? 'PodInitializing' : 'ContainerCreating',
      }),
    );
    const phase = podPhase(pod, { init, regular, terminal: terminal && this.source === 'api' });
    const previous = this.status ?? pod.status;
    const ip = seen.ip ?? (seen.ready ? this.ctx.nodeIp : previous?.podIP);
    const status: PodStatus = {
      phase,
      conditions: podConditions({
        pod,
        phase,
        sandboxReady: !!seen.ready,
        init,
        regular,
        old: previous?.conditions,
        nowMs: Date.now(),
      }),
      hostIP: this.ctx.nodeIp,
      hostIPs: [{ ip: this.ctx.nodeIp }],
    };
    if (ip) {
      status.podIP = ip;
      status.podIPs = [{ ip }];
    }
    status.startTime = timeString(this.startTimeMs ?? Date.now());
    if (init.length > 0) status.initContainerStatuses = init;
    status.containerStatuses = regular;
    const ephemeral = (pod.spec.ephemeralContainers ?? []).map((c) =>
      containerStatus(c, view(c), { runtimeName: rt, initWaitingReason: 'ContainerCreating' }),
    );
    if (ephemeral.length > 0) status.ephemeralContainerStatuses = ephemeral;
    status.qosClass = qosClass(pod);
    return status;
  }

  private async publish(status: PodStatus): Promise<void> {
    this.status = status;
    await this.ctx.writeStatus?.(this.pod, this.source, status);
  }
}
