import { createHash } from 'node:crypto';
import type { Container, ContainerStatus, Pod, PodStatus } from '@svc/api';
import { containerStatus, podConditions, podPhase, qosClass, type ContainerInstance } from '../pods/pod-status.js';
import { timeString } from '../pods/types.js';
import { SIMULATED_RUNTIME } from './simulated-machine.js';

/** Where a simulated pod is in its life: started at `startedAtMs`, and stopped (being deleted) or not. */
export interface SimulatedPodState {
  startedAtMs: number;
  podIp: string;
  hostIp: string;
  /** When the pod was stopped for its deletion: its containers are shown terminated (exit 0) then, and the phase is final. */
  stoppedAtMs?: number;
}

/** A stable container id (64 hex digits) for container `name` of the pod with `uid`. */
export function simulatedContainerId(uid: string, name: string): string {
  return createHash('sha256').update(`${uid}/${name}`).digest('hex');
}

function instance(
  uid: string,
  c: Container,
  { running, startedAtMs, stoppedAtMs }: { running: boolean; startedAtMs: number; stoppedAtMs: number },
): ContainerInstance {
  return {
    id: simulatedContainerId(uid, c.name),
    name: c.name,
    restartCount: 0,
    state: running ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED',
    hash: '',
    createdAtMs: startedAtMs,
    startedAtMs,
    finishedAtMs: running ? 0 : stoppedAtMs,
    exitCode: 0,
    reason: running ? '' : 'Completed',
    message: '',
    imageRef: '',
  };
}

/**
 * The status a svclet writes for `pod` once its containers run, built with the real svclet's
 * status functions (containerStatus, podPhase, podConditions, qosClass): init containers
 * completed (exit 0), every container running, started and ready (probes count as passing), so
 * the phase is Running; once `stopped`, every container terminated with exit 0 and the phase
 * final (Succeeded). The API's conditions keep the conditions' transition times.
 */
export function simulatedPodStatus(pod: Pod, s: SimulatedPodState, nowMs = Date.now()): PodStatus {
  const stopped = s.stoppedAtMs !== undefined;
  const uid = pod.metadata.uid ?? '';
  const runtimeName = SIMULATED_RUNTIME;
  const view = (c: Container, running: boolean, stoppedAtMs: number) => ({
    instances: [instance(uid, c, { running, startedAtMs: s.startedAtMs, stoppedAtMs })],
    started: running,
    ready: running,
  });
  // Init containers completed as they started.
  const init: ContainerStatus[] = (pod.spec.initContainers ?? []).map((c) => {
    const st = containerStatus(c, view(c, false, s.startedAtMs), { runtimeName });
    st.ready = true;
    return st;
  });
  const regular = pod.spec.containers.map((c) =>
    containerStatus(c, view(c, !stopped, s.stoppedAtMs ?? nowMs), { runtimeName }),
  );
  const phase = podPhase(pod, { init, regular, terminal: stopped });
  const status: PodStatus = {
    phase,
    conditions: podConditions({
      pod,
      phase,
      sandboxReady: !stopped,
      init,
      regular,
      old: pod.status?.conditions,
      nowMs,
    }),
    hostIP: s.hostIp,
    hostIPs: [{ ip: s.hostIp }],
    podIP: s.podIp,
    podIPs: [{ ip: s.podIp }],
    startTime: timeString(s.startedAtMs),
  };
  if (init.length > 0) status.initContainerStatuses = init;
  status.containerStatuses = regular;
  status.qosClass = qosClass(pod);
  return status;
}
