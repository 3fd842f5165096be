import type {
  Container,
  ContainerState,
  ContainerStateTerminated,
  ContainerStateWaiting,
  ContainerStatus,
  Pod,
  PodCondition,
  PodPhase,
  PodStatus,
} from '@svc/api';
import type { ContainerStateName } from './cri.js';
import { timeString } from './types.js';

/** One CRI container the svclet created for a spec container (from its labels, annotations and status). */
export interface ContainerInstance {
  id: string;
  name: string;
  restartCount: number;
  state: ContainerStateName | string;
  /** Hash of the spec container it was created from. */
  hash: string;
  createdAtMs: number;
  startedAtMs: number;
  finishedAtMs: number;
  exitCode: number;
  reason: string;
  message: string;
  imageRef: string;
}

/** What the worker knows of one spec container: its instances (newest first) and probe and start-up state. */
export interface ContainerView {
  instances: ContainerInstance[];
  /** Why the container is not running now (Kubernetes' reason cache: CrashLoopBackOff, ErrImagePull...). */
  waiting?: ContainerStateWaiting;
  /** The start-up probe passed (or there is none). */
  started: boolean;
  /** The readiness probe passes (or there is none). */
  ready: boolean;
}

function terminated(c: ContainerInstance, runtimeName: string): ContainerStateTerminated {
  const t: ContainerStateTerminated = {
    exitCode: c.exitCode,
    reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
    startedAt: timeString(c.startedAtMs || c.createdAtMs),
    finishedAt: timeString(c.finishedAtMs),
    containerID: `${runtimeName}://${c.id}`,
  };
  if (c.message) t.message = c.message;
  return t;
}

/**
 * Kubernetes' container status of a spec container: the newest instance gives state,
 * containerID and imageID, the one before it `lastState`; an exited instance that waits to be
 * restarted is shown as `waiting` (reason from the reason cache) with itself as `lastState`.
 * A running container is `started` once its start-up probe passed and `ready` once its
 * readiness probe passes as well.
 */
export function containerStatus(
  spec: Container,
  v: ContainerView,
  { runtimeName, initWaitingReason = 'ContainerCreating' }: { runtimeName: string; initWaitingReason?: string },
): ContainerStatus {
  const [latest, prev] = v.instances;
  const s: ContainerStatus = {
    name: spec.name,
    state: {},
    lastState: {},
    ready: false,
    restartCount: latest?.restartCount ?? 0,
    image: spec.image ?? '',
    imageID: latest?.imageRef ?? '',
    started: false,
  };
  if (latest) s.containerID = `${runtimeName}://${latest.id}`;
  const last = (c: ContainerInstance | undefined): ContainerState =>
    c && c.state === 'CONTAINER_EXITED' ? { terminated: terminated(c, runtimeName) } : {};
  if (!latest) {
    s.state = { waiting: v.waiting ?? { reason: initWaitingReason } };
  } else if (latest.state === 'CONTAINER_RUNNING') {
    s.state = { running: { startedAt: timeString(latest.startedAtMs || latest.createdAtMs) } };
    s.lastState = last(prev);
    s.started = v.started;
    s.ready = v.started && v.ready;
  } else if (latest.state === 'CONTAINER_EXITED') {
    if (v.waiting) {
      s.state = { waiting: v.waiting };
      s.lastState = last(latest);
    } else {
      s.state = { terminated: terminated(latest, runtimeName) };
      s.lastState = last(prev);
    }
  } else {
    s.state = { waiting: v.waiting ?? { reason: 'ContainerCreating' } };
    s.lastState = last(prev);
  }
  return s;
}

/**
 * Kubernetes' getPhase; `terminal`: the pod is stopped for good (being deleted), so no container
 * restarts whatever the restart policy (Kubernetes does not apply it to static pods).
 */
export function podPhase(
  pod: Pod,
  {
    init,
    regular,
    terminal,
  }: { init: readonly ContainerStatus[]; regular: readonly ContainerStatus[]; terminal: boolean },
): PodPhase {
  const policy = pod.spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const c of pod.spec.initContainers ?? []) {
    const st = init.find((s) => s.name === c.name);
    if (!st || st.state.running) pendingInit++;
    else if (st.state.terminated) {
      if (st.state.terminated.exitCode !== 0) failedInit++;
    } else if (st.state.waiting && st.lastState.terminated) {
      if (st.lastState.terminated.exitCode !== 0) failedInit++;
    } else pendingInit++;
  }
  let unknown = 0,
    running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;
  for (const c of pod.spec.containers) {
    const st = regular.find((s) => s.name === c.name);
    if (!st) unknown++;
    else if (st.state.running) running++;
    else if (st.state.terminated) {
      stopped++;
      if (st.state.terminated.exitCode === 0) succeeded++;
    } else if (st.state.waiting) {
      if (st.lastState.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  const regularStarted = regular.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if ((pendingInit > 0 && !regularStarted) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (terminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    return policy === 'Never' ? 'Failed' : 'Running';
  }
  return 'Pending';
}

/** Condition `type`, True when `ok`; else False with `why`. */
function condition(type: string, ok: boolean, why: { reason?: string; message?: string } = {}): PodCondition {
  const c: PodCondition = { type, status: ok ? 'True' : 'False' };
  if (!ok && why.reason) c.reason = why.reason;
  if (!ok && why.message) c.message = why.message;
  return c;
}

/**
 * The pod conditions the kubelet writes, in its order: PodReadyToStartContainers,
 * Initialized, Ready, ContainersReady, PodScheduled; `lastTransitionTime` is kept from `old`
 * while a condition's status does not change.
 */
export function podConditions(o: {
  pod: Pod;
  phase: PodPhase;
  sandboxReady: boolean;
  init: readonly ContainerStatus[];
  regular: readonly ContainerStatus[];
  old?: readonly PodCondition[];
  nowMs: number;
}): PodCondition[] {
  const incompleteInit = (o.pod.spec.initContainers ?? [])
    .filter((c) => !o.init.some((s) => s.name === c.name && s.state.terminated?.exitCode === 0))
    .map((c) => c.name);
  const regularStarted = o.regular.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  const initialized = incompleteInit.length === 0 || regularStarted || o.phase === 'Succeeded';
  const unready = o.pod.spec.containers
    .filter((c) => !o.regular.some((s) => s.name === c.name && s.ready))
    .map((c) => c.name);
  const completed = o.phase === 'Succeeded';
  const readyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conds = [
    condition('PodReadyToStartContainers', o.sandboxReady),
    condition('Initialized', initialized, {
      reason: 'ContainersNotInitialized',
      message: `containers with incomplete status: [${incompleteInit.join(' ')}]`,
    }),
    condition('Ready', unready.length === 0 && !completed, { reason: readyReason, message: readyMessage }),
    condition('ContainersReady', unready.length === 0 && !completed, { reason: readyReason, message: readyMessage }),
    condition('PodScheduled', true),
  ];
  for (const c of conds) {
    const before = o.old?.find((x) => x.type === c.type);
    c.lastTransitionTime =
      before && before.status === c.status && before.lastTransitionTime
        ? before.lastTransitionTime
        : timeString(o.nowMs);
  }
  return conds;
}

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource quantity (`100m`, `64Mi`, `1e3`) as a number; NaN when unreadable. */
export function quantityValue(q: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(q.trim());
  const scale = m ? SUFFIX[m[2] ?? ''] : undefined;
  return m && scale !== undefined ? Number(m[1]) * scale : NaN;
}

/** Kubernetes' GetPodQOS over cpu and memory of every container. */
export function qosClass(pod: Pod): NonNullable<PodStatus['qosClass']> {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const rq = req[r];
      const lm = lim[r];
      if ((rq !== undefined && quantityValue(rq) !== 0) || (lm !== undefined && quantityValue(lm) !== 0)) any = true;
      if (lm === undefined || (rq !== undefined && quantityValue(rq) !== quantityValue(lm))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
