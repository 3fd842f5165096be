import { setMaxListeners } from 'node:events';
import { criLabel, naming, podConfigAnnotation, type ApiObject, type ConfigMap, type Pod, type Secret } from '@svc/api';
import {
  EventRecorder,
  Informer,
  ResourceClient,
  listWatcherFor,
  type ClientLogger,
  type RestClient,
} from '@svc/client';
import { Counter, Gauge, type Registry } from 'prom-client';
import { BackOff } from './backoff.js';
import { criErrorMessage, type CriClient } from './cri.js';
import type { ObjectReader } from './environment.js';
import { MirrorPods, isMirrorPod, staticPodHash } from './mirror-pods.js';
import { ProbeManager } from './prober.js';
import { PodWorker } from './pod-worker.js';
import { fetchManifestUrl, readManifestPath } from './static-pods.js';
import { sleep } from './sleep.js';
import { StatusManager } from './status-manager.js';
import { podKey, type PodEvent, type PodSource } from './types.js';
import { VolumeManager } from '../volumes/volume-manager.js';
import { StreamRequestError, type StreamRequest } from '../pod-source.js';
import { processGroupUsage, type ContainerUsage } from '../resource-metrics.js';

export interface PodManagerOptions {
  /** API-server mode; absent = standalone (static pods only, no mirror pods, no status writes). */
  client?: RestClient;
  cri: CriClient;
  nodeName: string;
  /** The node's IP: pods' `hostIP`, and `podIP` when the runtime reports none. */
  nodeIp: string;
  /** `--root-dir`: pod volumes go to `<rootDir>/pods/<uid>/volumes/`. */
  rootDir: string;
  /** How often configMap, secret, projected and downwardAPI volumes are rewritten from their sources (`syncFrequency`, Kubernetes: 1 min). */
  volumeResyncPeriodMs?: number;
  /** The ClusterTrustBundleProjection feature gate (off: such projections are skipped). */
  clusterTrustBundleProjection?: boolean;
  /** Container logs go to `<podLogsDir>/<ns>_<pod>_<uid>/<container>/<restartCount>.log`. */
  podLogsDir: string;
  /** `--pod-manifest-path`: a file or directory of static pod manifests. */
  staticPodPath?: string;
  /** `--file-check-frequency` in ms (Kubernetes: 20 s). */
  fileCheckFrequencyMs: number;
  /** `--manifest-url` and `--manifest-url-header`. */
  manifestUrl?: string;
  manifestUrlHeaders?: Record<string, string[]>;
  /** `--http-check-frequency` in ms (Kubernetes: 20 s). */
  httpCheckFrequencyMs: number;
  /** Resolves with the registered Node (mirror pods' owner); absent = the Node is read from the API when needed. */
  registeredNode?: Promise<ApiObject>;
  logger: ClientLogger;
  metrics?: Registry;
  /** The node's allocatable resources (`resourceFieldRef` to a limit a container does not set). */
  nodeAllocatable?: Readonly<Record<string, string>>;
  /** How often each pod's containers are re-read from the runtime (Kubernetes' PLEG relist: 1 s). */
  relistPeriodMs?: number;
  /** Orphan clean-up and mirror pods (Kubernetes' housekeeping: 2 s). */
  housekeepingPeriodMs?: number;
  /** CrashLoopBackOff (and image pull back-off): first and longest period (Kubernetes: 10 s, 5 min). */
  backOffInitialMs?: number;
  backOffMaxMs?: number;
}

/** Where a container's log files are, for the svclet's `/containerLogs`. */
export interface ContainerLogFiles {
  current?: string;
  previous?: string;
  /** The current instance still runs. */
  running?: boolean;
}

const PODS = { group: '', version: 'v1', resource: 'pods' };

class PodMetrics {
  private readonly started: Counter<'container_type'>;
  private readonly startErrors: Counter<'container_type' | 'code'>;
  readonly runningPods: Gauge;

  constructor(registry: Registry) {
    const prefix = naming().nodeAgentName;
    const registers = [registry];
    this.started = new Counter({
      name: `${prefix}_started_containers_total`,
      help: 'Cumulative number of containers started',
      labelNames: ['container_type'],
      registers,
    });
    this.startErrors = new Counter({
      name: `${prefix}_started_containers_errors_total`,
      help: 'Cumulative number of errors when starting containers',
      labelNames: ['container_type', 'code'],
      registers,
    });
    this.runningPods = new Gauge({
      name: `${prefix}_running_pods`,
      help: 'Number of pods that have a running pod sandbox',
      registers,
    });
  }

  containerStarted(kind: string, error?: string): void {
    this.started.inc({ container_type: kind });
    if (error) this.startErrors.inc({ container_type: kind, code: error });
  }
}

/**
 * The svclet's pod side: gathers the pods this node must run from its sources — the API
 * (pods with `spec.nodeName` = this node, watched), `--pod-manifest-path` (read every
 * `--file-check-frequency`) and `--manifest-url` (every `--http-check-frequency`) — and runs one
 * `PodWorker` per pod uid. A pod that leaves its source is stopped and removed; a uid that
 * comes back after its worker ended gets a new worker. Housekeeping removes sandboxes this
 * svclet labelled whose pod no source has (after every source was read once) and keeps the
 * mirror pods in step; CRI objects without the svclet's `pod.uid` label are never touched.
 * Stopping (`signal`) ends the loops and leaves containers running, as Kubernetes does.
 */
export class PodManager {
  private readonly desired = new Map<string, { pod: Pod; source: PodSource }>();
  private readonly workers = new Map<string, PodWorker>();
  private readonly informer?: Informer<Pod>;
  private readonly statuses?: StatusManager;
  private readonly mirrors?: MirrorPods;
  private readonly prober: ProbeManager;
  /** Kubernetes' kubelet events (API-server mode). */
  private readonly events?: EventRecorder;
  private readonly backoff: BackOff;
  private readonly pullBackoff: BackOff;
  private readonly metrics?: PodMetrics;
  private readonly volumes: VolumeManager;
  private readonly sourcesRead = new Set<string>();
  private runtimeName = '';
  private signal?: AbortSignal;
  private lastLoop = 0;
  private kickHousekeeping?: () => void;

  constructor(private readonly o: PodManagerOptions) {
    this.backoff = new BackOff(o.backOffInitialMs ?? 10_000, o.backOffMaxMs ?? 300_000);
    this.pullBackoff = new BackOff(o.backOffInitialMs ?? 10_000, o.backOffMaxMs ?? 300_000);
    if (o.client)
      this.events = new EventRecorder(o.client, {
        component: naming().nodeAgentName,
        host: o.nodeName,
        logger: o.logger,
      });
    this.prober = new ProbeManager({
      cri: o.cri,
      logger: o.logger,
      onChange: (uid) => this.workers.get(uid)?.kick(),
      onFailure: (t, type, output) => {
        const pod = this.workers.get(t.podUid)?.podWithStatus();
        if (!pod) return;
        const kind = `${type.charAt(0).toUpperCase()}${type.slice(1)}`;
        this.recordEvent(pod, {
          type: 'Warning',
          reason: 'Unhealthy',
          message: `${kind} probe failed: ${output}`,
          fieldPath: `spec.containers{${t.container.name}}`,
        });
      },
    });
    if (o.metrics) this.metrics = new PodMetrics(o.metrics);
    this.volumes = new VolumeManager({
      rootDir: o.rootDir,
      client: o.client,
      read: o.client ? readerOf(o.client) : undefined,
      nodeIp: o.nodeIp,
      nodeAllocatable: o.nodeAllocatable,
      clusterTrustBundles: o.clusterTrustBundleProjection ?? false,
      resyncPeriodMs: o.volumeResyncPeriodMs ?? 60_000,
      logger: o.logger,
      onFailedMount: (pod, message) => this.recordEvent(pod, { type: 'Warning', reason: 'FailedMount', message }),
    });
    if (o.client) {
      this.informer = new Informer<Pod>(
        listWatcherFor<Pod>(o.client, PODS, { fieldSelector: `spec.nodeName=${o.nodeName}` }),
        { logger: o.logger },
      );
      this.statuses = new StatusManager({ client: o.client, logger: o.logger, mirrorOf: (p) => this.mirrorOf(p) });
      this.mirrors = new MirrorPods({
        client: o.client,
        nodeName: o.nodeName,
        logger: o.logger,
        nodeUid: o.registeredNode?.then((n) => n.metadata.uid),
      });
    }
  }

  /** Runs until `signal` fires; resolves once every loop and worker stopped (containers keep running). */
  async run(outer: AbortSignal): Promise<void> {
    // One signal for every worker and loop: many wait on it at once.
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    if (outer.aborted) stop.abort();
    outer.addEventListener('abort', () => stop.abort(), { once: true });
    const signal = stop.signal;
    this.signal = signal;
    this.runtimeName = await this.waitForRuntime(signal);
    if (signal.aborted) return;
    const loops: Promise<void>[] = [this.housekeeping(signal), this.volumes.run(signal)];
    if (this.informer) {
      this.informer.addEventHandler({
        onAdd: (p) => this.apiPod(p),
        onUpdate: (_old, p) => this.apiPod(p),
        onDelete: (p) =>
          isMirrorPod(p) ? this.kickHousekeeping?.() : this.setDesired(p.metadata.uid ?? '', undefined),
      });
      loops.push(this.informer.run(signal));
    }
    const o = this.o;
    if (o.staticPodPath) {
      const path = o.staticPodPath;
      loops.push(
        this.poll('file', {
          periodMs: o.fileCheckFrequencyMs,
          signal,
          read: () => readManifestPath(path, o.nodeName, o.logger),
        }),
      );
    }
    if (o.manifestUrl) {
      const url = o.manifestUrl;
      loops.push(
        this.poll('http', {
          periodMs: o.httpCheckFrequencyMs,
          signal,
          read: () => fetchManifestUrl(url, { headers: o.manifestUrlHeaders ?? {}, nodeName: o.nodeName, signal }),
        }),
      );
    }
    await Promise.all(loops);
    await Promise.all([...this.workers.values()].map((w) => w.done));
    await this.prober.stopAll();
  }

  /** The pods this node runs now (API and static), each with the status last generated. */
  pods(): Pod[] {
    return [...this.workers.values()].filter((w) => !w.isRemoved).map((w) => w.podWithStatus());
  }

  /** The log files of `container` of pod `namespace/name`; undefined when there is no such pod or container. */
  containerLogFiles(namespace: string, name: string, container: string): ContainerLogFiles | undefined {
    const w = [...this.workers.values()].find(
      (x) => !x.isRemoved && podKey(x.podWithStatus()) === `${namespace}/${name}`,
    );
    if (!w) return undefined;
    if (!hasContainer(w.podWithStatus(), container)) return undefined;
    return w.logPaths(container) ?? {};
  }

  /** The runtime's streaming URL for `r` (see `PodSource.streamUrl`). */
  async streamUrl(r: StreamRequest): Promise<string> {
    const w = [...this.workers.values()].find(
      (x) => !x.isRemoved && podKey(x.podWithStatus()) === `${r.namespace}/${r.pod}`,
    );
    if (!w) throw new StreamRequestError(404, `pod does not exist`);
    const rt = this.o.cri.runtime;
    try {
      if (r.kind === 'portforward') {
        const { sandboxId } = w.runningIds();
        if (!sandboxId) throw new StreamRequestError(400, `pod ${JSON.stringify(r.pod)} has no running sandbox`);
        return (await rt.portForward({ podSandboxId: sandboxId, port: r.ports })).url;
      }
      if (!hasContainer(w.podWithStatus(), r.container))
        throw new StreamRequestError(404, `container not found (${JSON.stringify(r.container)})`);
      const { containerId } = w.runningIds(r.container);
      if (!containerId) throw new StreamRequestError(400, `container ${JSON.stringify(r.container)} is not running`);
      const io = { containerId, tty: r.tty, stdin: r.stdin, stdout: r.stdout, stderr: r.stderr };
      return r.kind === 'exec' ? (await rt.exec({ ...io, cmd: r.command })).url : (await rt.attach(io)).url;
    } catch (e) {
      if (e instanceof StreamRequestError) throw e;
      throw new StreamRequestError(500, criErrorMessage(e));
    }
  }

  /**
   * CPU and memory of every running container, from its process group (the svc-runtime's
   * verbose ContainerStatus names the group leader's `pid`); `scrapeError` when one could not be read.
   */
  async containerUsage(): Promise<{ containers: ContainerUsage[]; scrapeError: boolean }> {
    const rt = this.o.cri.runtime;
    let scrapeError = false;
    const found: Array<Omit<ContainerUsage, 'cpuSeconds' | 'memoryBytes'> & { pid: number }> = [];
    const running = [...this.workers.values()]
      .filter((w) => !w.isRemoved)
      .flatMap((w) => w.runningContainers().map((c) => ({ pod: w.podWithStatus(), ...c })));
    await Promise.all(
      running.map(async (c) => {
        try {
          const { info } = await rt.containerStatus({ containerId: c.id, verbose: true });
          const pid = Number((JSON.parse(info?.info ?? '{}') as { pid?: number }).pid ?? 0);
          if (pid <= 0) throw new Error('no pid');
          found.push({
            namespace: c.pod.metadata.namespace ?? '',
            pod: c.pod.metadata.name ?? '',
            container: c.name,
            startedAtMs: c.startedAtMs || undefined,
            pid,
          });
        } catch {
          scrapeError = true;
        }
      }),
    );
    const usage = await processGroupUsage(found.map((c) => c.pid));
    const containers = found.flatMap(({ pid, ...c }) => {
      const u = usage.get(pid);
      return u ? [{ ...c, ...u }] : [];
    });
    return { containers, scrapeError };
  }

  /** When the housekeeping loop last started an iteration (ms since the epoch; 0 = not yet). */
  lastSyncLoop(): number {
    return this.lastLoop;
  }

  /** Kubernetes' kubelet events about a pod (API-server mode only). */
  private recordEvent(pod: Pod, e: PodEvent): void {
    this.events?.event({ object: pod, apiVersion: 'v1', kind: 'Pod', ...e });
  }

  private async waitForRuntime(signal: AbortSignal): Promise<string> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        return (await this.o.cri.runtime.version({})).runtimeName || 'unknown';
      } catch (e) {
        if (attempt % 10 === 0) this.o.logger.warn('container runtime not answering', { error: criErrorMessage(e) });
        await sleep(1000, signal);
      }
    }
    return '';
  }

  private apiPod(p: Pod): void {
    if (isMirrorPod(p)) {
      this.kickHousekeeping?.();
      for (const w of this.workers.values())
        if (w.source !== 'api' && podKey(w.podWithStatus()) === podKey(p)) w.kick();
      return;
    }
    this.setDesired(p.metadata.uid ?? '', { pod: p, source: 'api' });
  }

  /** The whole set of pods from a static source (`file`, `http`). */
  private setStatic(source: 'file' | 'http', pods: Pod[]): void {
    const uids = new Set(pods.map((p) => p.metadata.uid ?? ''));
    for (const [uid, d] of this.desired) if (d.source === source && !uids.has(uid)) this.setDesired(uid, undefined);
    for (const p of pods) this.setDesired(p.metadata.uid ?? '', { pod: p, source });
    this.sourcesRead.add(source);
    this.kickHousekeeping?.();
  }

  private setDesired(uid: string, d: { pod: Pod; source: PodSource } | undefined): void {
    if (!uid) return;
    if (d) this.desired.set(uid, d);
    else this.desired.delete(uid);
    this.reconcileWorker(uid);
  }

  /** Starts, updates or removes the worker of `uid` to match `desired`. */
  private reconcileWorker(uid: string): void {
    const d = this.desired.get(uid);
    const w = this.workers.get(uid);
    if (w) {
      if (!d) w.remove();
      else if (!w.isRemoved) w.update(d.pod);
      return;
    }
    if (!d || !this.signal || this.signal.aborted) return;
    const worker = new PodWorker({
      pod: d.pod,
      source: d.source,
      ctx: {
        cri: this.o.cri,
        runtimeName: this.runtimeName,
        nodeIp: this.o.nodeIp,
        podLogsDir: this.o.podLogsDir,
        logger: this.o.logger,
        backoff: this.backoff,
        pullBackoff: this.pullBackoff,
        prober: this.prober,
        relistPeriodMs: this.o.relistPeriodMs ?? 1000,
        writeStatus: this.statuses
          ? async (pod, source, status) => {
              await this.statuses?.update(pod, source, status);
            }
          : undefined,
        finalDelete: this.statuses ? (pod) => this.statuses?.finalDelete(pod) ?? Promise.resolve(true) : undefined,
        onContainerStarted: (kind, error) => this.metrics?.containerStarted(kind, error),
        readObject: this.o.client ? readerOf(this.o.client) : undefined,
        recordEvent: (pod, e) => this.recordEvent(pod, e),
        nodeAllocatable: this.o.nodeAllocatable,
        volumes: this.volumes,
      },
      signal: this.signal,
    });
    this.workers.set(uid, worker);
    void worker.done.finally(() => {
      if (this.workers.get(uid) !== worker) return;
      this.workers.delete(uid);
      if (worker.isRemoved) this.reconcileWorker(uid);
    });
  }

  private mirrorOf(staticPod: Pod): Pod | undefined {
    const key = podKey(staticPod);
    const hash = staticPodHash(staticPod);
    return this.informer?.store
      .list()
      .find(
        (p) =>
          podKey(p) === key &&
          !p.metadata.deletionTimestamp &&
          p.metadata.annotations?.[podConfigAnnotation('mirror')] === hash,
      );
  }

  private async poll(
    source: 'file' | 'http',
    { periodMs, signal, read }: { periodMs: number; signal: AbortSignal; read: () => Promise<Pod[]> },
  ): Promise<void> {
    while (!signal.aborted) {
      try {
        this.setStatic(source, await read());
      } catch (e) {
        if (!signal.aborted) this.o.logger.error('cannot read static pods', { source, error: (e as Error).message });
      }
      await sleep(periodMs, signal);
    }
  }

  /** True once every source delivered its pods once (only then are unknown sandboxes orphans). */
  private sourcesReady(): boolean {
    return (
      (!this.informer || this.informer.hasSynced()) &&
      (!this.o.staticPodPath || this.sourcesRead.has('file')) &&
      (!this.o.manifestUrl || this.sourcesRead.has('http'))
    );
  }

  private async housekeeping(signal: AbortSignal): Promise<void> {
    const period = this.o.housekeepingPeriodMs ?? 2000;
    while (!signal.aborted) {
      this.lastLoop = Date.now();
      try {
        if (this.sourcesReady()) {
          await this.removeOrphans();
          await this.volumes.removeOrphans(new Set([...this.workers.keys(), ...this.desired.keys()]));
        }
        if (this.mirrors && this.informer?.hasSynced()) {
          const statics = [...this.desired.values()].filter((d) => d.source !== 'api').map((d) => d.pod);
          await this.mirrors.sync(statics, this.informer.store.list().filter(isMirrorPod));
          this.statuses?.prune(new Set(this.informer.store.list().map((p) => p.metadata.uid ?? '')));
        }
        this.metrics?.runningPods.set(this.pods().filter((p) => p.status?.phase === 'Running').length);
      } catch (e) {
        this.o.logger.error('housekeeping failed', { error: criErrorMessage(e) });
      }
      await sleep(period, signal, (wake) => {
        this.kickHousekeeping = wake;
      });
    }
  }

  /** Stops and removes the sandboxes (and their containers) labelled by this svclet whose pod uid no source has. */
  private async removeOrphans(): Promise<void> {
    const rt = this.o.cri.runtime;
    const uidLabel = criLabel('pod.uid');
    const { items = [] } = await rt.listPodSandbox({});
    for (const s of items) {
      const uid = s.labels?.[uidLabel];
      if (!uid || this.workers.has(uid) || this.desired.has(uid)) continue;
      this.o.logger.info('removing orphaned pod sandbox', { podSandboxId: s.id, uid });
      const { containers = [] } = await rt.listContainers({
        filter: { podSandboxId: s.id, labelSelector: { [uidLabel]: uid } },
      });
      await Promise.all(containers.map((c) => rt.stopContainer({ containerId: c.id, timeout: 2 })));
      for (const c of containers) await rt.removeContainer({ containerId: c.id });
      await rt.stopPodSandbox({ podSandboxId: s.id });
      await rt.removePodSandbox({ podSandboxId: s.id });
    }
  }
}

/** Reads ConfigMaps and Secrets through the API (the Node authorizer lets a node read those its pods name). */
function readerOf(client: RestClient): ObjectReader {
  return (resource, namespace, name) =>
    new ResourceClient<ConfigMap | Secret>(client, { group: '', version: 'v1', resource }, namespace).find(name);
}

/** Whether `pod` has a container named `name`: init, regular or ephemeral (Kubernetes' VisitContainers). */
function hasContainer(pod: Pod, name: string): boolean {
  const s = pod.spec;
  return [...(s.initContainers ?? []), ...s.containers, ...(s.ephemeralContainers ?? [])].some((c) => c.name === name);
}
