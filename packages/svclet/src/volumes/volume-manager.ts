import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { naming, type Pod, type Volume } from '@svc/api';
import type { ClientLogger, RestClient } from '@svc/client';
import type { ObjectReader } from '../pods/environment.js';
import { fsUserOf } from '../pods/security-context.js';
import { sleep } from '../pods/sleep.js';
import { parseQuantity } from '../quantity.js';
import { writeAtomic, type Payload } from './atomic-writer.js';
import { checkHostPath, type HostPathSource } from './host-path.js';
import { setVolumeOwnership } from './volume-ownership.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { readTrustBundles } from './trust-bundles.js';
import {
  configMapPayload,
  downwardApiPayload,
  MountError,
  projectedPayload,
  secretPayload,
  type ConfigMapSource,
  type DownwardApiSource,
  type ProjectedSource,
  type SecretSource,
  type SourceContext,
} from './volume-sources.js';

const run = promisify(execFile);

/** A failed set-up is tried again after this long (the pod's syncs come more often). */
const RETRY_MS = 1000;

/** The plugins this node serves, by the volume source's field name, with their directory under the pod. */
const PLUGINS: Record<string, string> = {
  emptyDir: 'empty-dir',
  configMap: 'configmap',
  secret: 'secret',
  projected: 'projected',
  downwardAPI: 'downward-api',
  hostPath: 'host-path',
};

/** Sources whose files come from the API and the pod: written atomically, resynced, always mounted read-only. */
const SYNCED = new Set(['configMap', 'secret', 'projected', 'downwardAPI']);

/** Where a volume is on the host and how containers must mount it. */
export interface MountedVolume {
  hostPath: string;
  /** configMap, secret, projected and downwardAPI volumes are read-only in containers, as in Kubernetes. */
  readOnly: boolean;
}

export type MountResult = { ok: true; volumes: ReadonlyMap<string, MountedVolume> } | { ok: false; message: string };

export interface VolumeManagerOptions {
  /** `--root-dir`: volumes go to `<rootDir>/pods/<uid>/volumes/<prefix>~<plugin>/<name>`. */
  rootDir: string;
  /** TokenRequests (API-server mode). */
  client?: RestClient;
  read?: ObjectReader;
  nodeIp: string;
  nodeAllocatable?: Readonly<Record<string, string>>;
  /** The ClusterTrustBundleProjection feature gate. */
  clusterTrustBundles?: boolean;
  /** How often mounted configMap, secret, projected and downwardAPI volumes are rewritten from their sources (Kubernetes: the sync period, 1 min). */
  resyncPeriodMs: number;
  logger: ClientLogger;
  /** A set-up or resync failure, reported as Kubernetes' `FailedMount` event. */
  onFailedMount?(pod: Pod, message: string): void;
}

interface PodState {
  pod: Pod;
  podIp?: string;
  volumes?: Map<string, MountedVolume>;
  lastError?: string;
  lastAttemptMs: number;
  /** Resyncs and the removal of one pod's volumes run one after the other. */
  queue: Promise<void>;
}

/** The source field of a volume (`configMap`, `hostPath`, ...), the first key besides `name`. */
export function volumeType(v: Volume): string {
  return Object.keys(v).find((k) => k !== 'name' && v[k] !== undefined && v[k] !== null) ?? '';
}

/**
 * The svclet's volume manager: sets up a pod's volumes before its containers start, keeps
 * configMap, secret, projected (tokens rotated) and downwardAPI volumes in step with their
 * sources, and removes a pod's volumes once the pod is gone. A volume it cannot set up (a
 * missing source that is not optional, a type this node cannot serve) keeps the pod's
 * containers from starting, with a `FailedMount` event, as Kubernetes does.
 */
export class VolumeManager {
  private readonly pods = new Map<string, PodState>();
  private readonly tokens?: ServiceAccountTokens;

  constructor(private readonly o: VolumeManagerOptions) {
    if (o.client) this.tokens = new ServiceAccountTokens(o.client);
  }

  /** `<rootDir>/pods/<uid>`. */
  podDir(uid: string): string {
    return join(this.o.rootDir, 'pods', uid);
  }

  /** `<rootDir>/pods/<uid>/volumes/<prefix>~<plugin>/<name>` (Kubernetes' layout, e.g. `kubernetes.io~configmap`). */
  volumeDir(uid: string, type: string, name: string): string {
    return join(this.podDir(uid), 'volumes', `${naming().labelPrefix}~${PLUGINS[type] ?? type}`, name);
  }

  /**
   * The pod's volumes, set up on the first call (and retried after a failure); later calls
   * only take the newer pod (labels, annotations) for the next resync.
   */
  async mount(pod: Pod, podIp?: string): Promise<MountResult> {
    const uid = pod.metadata.uid ?? '';
    let st = this.pods.get(uid);
    if (!st) {
      st = { pod, podIp, lastAttemptMs: 0, queue: Promise.resolve() };
      this.pods.set(uid, st);
    }
    const before = st.pod;
    st.pod = pod;
    st.podIp = podIp ?? st.podIp;
    if (st.volumes) {
      // As Kubernetes remounts on every pod sync: a change of the pod's labels or annotations reaches downwardAPI files now.
      if (metadataChanged(before, pod)) void this.resyncPod(st);
      return { ok: true, volumes: st.volumes };
    }
    if (st.lastError !== undefined && Date.now() - st.lastAttemptMs < RETRY_MS)
      return { ok: false, message: st.lastError };
    st.lastAttemptMs = Date.now();
    const volumes = new Map<string, MountedVolume>();
    for (const v of pod.spec.volumes ?? []) {
      try {
        volumes.set(v.name, await this.setUp(st, v));
      } catch (e) {
        const message = `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : ${(e as Error).message}`;
        if (message !== st.lastError) this.o.onFailedMount?.(pod, message);
        st.lastError = message;
        this.o.logger.warn('cannot set up a volume', { pod: podName(pod), volume: v.name, error: message });
        return { ok: false, message };
      }
    }
    st.volumes = volumes;
    st.lastError = undefined;
    return { ok: true, volumes };
  }

  /** Rewrites every synced volume of every set-up pod every `resyncPeriodMs` until `signal`. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(this.o.resyncPeriodMs, signal);
      if (signal.aborted) return;
      await this.resyncAll();
    }
  }

  /** One resync of every set-up pod's synced volumes (a failure leaves the old files and is reported). */
  async resyncAll(): Promise<void> {
    for (const st of [...this.pods.values()]) await this.resyncPod(st);
  }

  private resyncPod(st: PodState): Promise<void> {
    st.queue = st.queue.then(() => this.rewrite(st));
    return st.queue;
  }

  private async rewrite(st: PodState): Promise<void> {
    if (!st.volumes || this.pods.get(st.pod.metadata.uid ?? '') !== st) return;
    for (const v of st.pod.spec.volumes ?? []) {
      if (!SYNCED.has(volumeType(v))) continue;
      try {
        await this.setUp(st, v);
      } catch (e) {
        const message = `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : ${(e as Error).message}`;
        this.o.onFailedMount?.(st.pod, message);
        this.o.logger.warn('cannot resync a volume', { pod: podName(st.pod), volume: v.name, error: message });
      }
    }
  }

  /** Removes the pod's volumes (tmpfs unmounted first) and forgets it. */
  async unmount(uid: string): Promise<void> {
    const st = this.pods.get(uid);
    this.pods.delete(uid);
    await st?.queue;
    this.tokens?.forget(uid);
    await this.removePodDir(uid);
  }

  /** Removes the volume directories of pods not in `keep` (left by a svclet that stopped before their pods went). */
  async removeOrphans(keep: ReadonlySet<string>): Promise<void> {
    let uids: string[];
    try {
      uids = await readdir(join(this.o.rootDir, 'pods'));
    } catch {
      return;
    }
    for (const uid of uids) {
      if (keep.has(uid) || this.pods.has(uid)) continue;
      this.o.logger.info('removing the volumes of a pod that is gone', { uid });
      await this.removePodDir(uid);
    }
  }

  private async removePodDir(uid: string): Promise<void> {
    const dir = this.podDir(uid);
    for (const point of (await mountPointsUnder(dir)).reverse()) {
      try {
        await run('umount', [point]);
      } catch (e) {
        this.o.logger.error('cannot unmount a volume; its directory stays', { path: point, error: String(e) });
        return;
      }
    }
    await rm(dir, { recursive: true, force: true });
  }

  private sourceContext(st: PodState): SourceContext {
    const tokens = this.tokens;
    const client = this.o.client;
    return {
      pod: st.pod,
      read: this.o.read,
      token: tokens ? (pod, p) => tokens.token(pod, p) : undefined,
      trustBundles: this.o.clusterTrustBundles && client ? (p) => readTrustBundles(client, p) : undefined,
      nodeIp: this.o.nodeIp,
      podIp: st.podIp,
      nodeAllocatable: this.o.nodeAllocatable ?? {},
      fsUser: fsUserOf(st.pod),
      fsGroup: st.pod.spec?.securityContext?.fsGroup ?? undefined,
    };
  }

  private async setUp(st: PodState, v: Volume): Promise<MountedVolume> {
    const type = volumeType(v);
    const uid = st.pod.metadata.uid ?? '';
    const source = v[type];
    if (type === 'hostPath') {
      const src = source as HostPathSource;
      await checkHostPath(src);
      return { hostPath: src.path, readOnly: false };
    }
    if (!(type in PLUGINS))
      throw new MountError(
        type
          ? `volume type ${type} is not supported by this node: svc-runtime runs containers as host processes and has no ${type} plugin${type === 'persistentVolumeClaim' ? ' or local provisioner' : ''}`
          : 'the volume has no source',
      );
    const dir = this.volumeDir(uid, type, v.name);
    const ctx = this.sourceContext(st);
    if (type === 'emptyDir') {
      await this.emptyDir(dir, source as { medium?: string; sizeLimit?: string }, ctx.fsGroup);
      return { hostPath: dir, readOnly: false };
    }
    let payload: Payload;
    if (type === 'configMap') payload = await configMapPayload(ctx, source as ConfigMapSource);
    else if (type === 'secret') payload = await secretPayload(ctx, source as SecretSource);
    else if (type === 'downwardAPI') payload = downwardApiPayload(ctx, source as DownwardApiSource);
    else payload = await projectedPayload(ctx, source as ProjectedSource);
    // Files given to a user: the FsUser's token and trust-bundle files.
    const fsUser = [...payload.values()].some((f) => f.owner !== undefined) ? ctx.fsUser : undefined;
    if (await owning({ fsUser, fsGroup: ctx.fsGroup }, () => writeAtomic(dir, payload, { fsGroup: ctx.fsGroup })))
      this.o.logger.info('volume written', { pod: podName(st.pod), volume: v.name, files: payload.size });
    return { hostPath: dir, readOnly: true };
  }

  /** Kubernetes' emptyDir: a directory everyone may write (0777 whatever the umask), a tmpfs for `medium: Memory`; owned by `fsGroup`. */
  private async emptyDir(dir: string, src: { medium?: string; sizeLimit?: string }, fsGroup?: number): Promise<void> {
    const before = await stat(dir).catch(() => undefined);
    if (!before) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o777);
    }
    const mounted = src.medium === 'Memory' && (await this.memoryMount(dir, src));
    // Once, as kubelet sets an emptyDir up once: what the containers make there is theirs (a
    // failed attempt leaves the root's group unchanged, so the next one tries again).
    if (fsGroup !== undefined && (!before || mounted || before.gid !== fsGroup))
      await owning({ fsGroup }, () => setVolumeOwnership(dir, { fsGroup, readOnly: false }));
  }

  /** Mounts a tmpfs at `dir` unless one is there; answers whether it mounted. */
  private async memoryMount(dir: string, src: { sizeLimit?: string }): Promise<boolean> {
    if ((await mountPointsUnder(dir, true)).length > 0) return false;
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    if (uid !== 0)
      throw new MountError(
        `emptyDir with medium Memory needs a tmpfs mount, which needs root; the node agent runs as uid ${uid}`,
      );
    const options = ['mode=0777'];
    if (src.sizeLimit) options.push(`size=${Math.ceil(parseQuantity(src.sizeLimit))}`);
    try {
      await run('mount', ['-t', 'tmpfs', '-o', options.join(','), 'tmpfs', dir]);
    } catch (e) {
      throw new MountError(`cannot mount tmpfs at ${dir}: ${(e as { stderr?: string }).stderr || String(e)}`);
    }
    return true;
  }
}

/**
 * Runs `apply`; a failure to give the volume to the pod's FsUser (its token files) or `fsGroup`
 * (the node agent not root) becomes a MountError saying so.
 */
export async function owning<T>(to: { fsUser?: number; fsGroup?: number }, apply: () => Promise<T>): Promise<T> {
  try {
    return await apply();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const owners = [
      ...(to.fsUser === undefined ? [] : [`user ${to.fsUser}`]),
      ...(to.fsGroup === undefined ? [] : [`fsGroup ${to.fsGroup}`]),
    ];
    if (owners.length === 0 || (code !== 'EPERM' && code !== 'EACCES')) throw e;
    throw new MountError(`cannot give the volume to ${owners.join(' and ')}: ${(e as Error).message}`);
  }
}

function metadataChanged(a: Pod, b: Pod): boolean {
  const same = (x?: Record<string, string>, y?: Record<string, string>): boolean =>
    JSON.stringify(Object.entries(x ?? {}).sort()) === JSON.stringify(Object.entries(y ?? {}).sort());
  return !same(a.metadata.labels, b.metadata.labels) || !same(a.metadata.annotations, b.metadata.annotations);
}

function podName(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** The host mount points at or under `dir` (from /proc/self/mountinfo), parents first; with `exact` only `dir` itself. */
async function mountPointsUnder(dir: string, exact = false): Promise<string[]> {
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  try {
    await stat(dir);
  } catch {
    return [];
  }
  const points = text
    .split('\n')
    .map((line) => unescapeMountPath(line.split(' ')[4] ?? ''))
    .filter((p) => p === dir || (!exact && p.startsWith(`${dir}/`)));
  return [...new Set(points)].sort((a, b) => a.length - b.length);
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}
