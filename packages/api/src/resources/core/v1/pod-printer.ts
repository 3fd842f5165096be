import type { ApiObject } from '../../../types.js';
import { age } from '../../../table-format.js';

interface ContainerState {
  waiting?: { reason?: string };
  running?: object;
  terminated?: { reason?: string; exitCode?: number; signal?: number };
}
interface ContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: { terminated?: { finishedAt?: string } };
}
interface PodStatus {
  phase?: string;
  reason?: string;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  conditions?: Array<{ type?: string; status?: string }>;
}

const status = (o: ApiObject): PodStatus => (o.status ?? {}) as PodStatus;

export function podReady(o: ApiObject): string {
  const total = ((o.spec as { containers?: unknown[] } | undefined)?.containers ?? []).length;
  const ready = (status(o).containerStatuses ?? []).filter((c) => c.ready && c.state?.running).length;
  return `${ready}/${total}`;
}

/** Kubernetes' printPod status: waiting/terminated reasons over the phase, `Terminating` while deleting. */
export function podStatusReason(o: ApiObject): string {
  const st = status(o);
  let reason = st.reason || st.phase || '';
  (st.initContainerStatuses ?? []).forEach((c, i, all) => {
    const t = c.state?.terminated;
    if (t && t.exitCode === 0) return;
    if (t) reason = t.reason ? `Init:${t.reason}` : `Init:ExitCode:${t.exitCode ?? 0}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing')
      reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${all.length}`;
  });
  let running = false;
  for (const c of [...(st.containerStatuses ?? [])].reverse()) {
    const s = c.state ?? {};
    if (s.waiting?.reason) reason = s.waiting.reason;
    else if (s.terminated?.reason) reason = s.terminated.reason;
    else if (s.terminated)
      reason = s.terminated.signal ? `Signal:${s.terminated.signal}` : `ExitCode:${s.terminated.exitCode ?? 0}`;
    else if (c.ready && s.running) running = true;
  }
  if (reason === 'Completed' && running) {
    const ready = (st.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    reason = ready ? 'Running' : 'NotReady';
  }
  if (o.metadata.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

export function podRestarts(o: ApiObject, now: number): string {
  let restarts = 0;
  let last: number | undefined;
  for (const c of status(o).containerStatuses ?? []) {
    restarts += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished) last = Math.max(last ?? 0, Date.parse(finished));
  }
  return last !== undefined && restarts > 0
    ? `${restarts} (${age(new Date(last).toISOString(), now)} ago)`
    : String(restarts);
}
