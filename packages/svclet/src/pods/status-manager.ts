import { isConflict, isNotFound, type Pod, type PodStatus } from '@svc/api';
import { jsonEqual } from '@svc/machinery';
import { ResourceClient, type ClientLogger, type RestClient } from '@svc/client';
import { podKey, type PodSource } from './types.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };

/** Kubernetes' status manager reconciles with the API every 10 s (syncPeriod). */
const RECONCILE_MS = 10_000;

/** Whether every field of `ours` is what `api` holds (fields others own are ignored). */
function sameStatus(api: PodStatus | undefined, ours: PodStatus): boolean {
  return Object.entries(ours).every(([k, v]) => jsonEqual((api as Record<string, unknown> | undefined)?.[k], v));
}

/**
 * Writes pod statuses to the API (Kubernetes' status manager): through `/status` as a merge
 * patch carrying the target's uid, when the status differs from the one last written to that
 * object, or, at most every 10 s, from what the cached object holds (someone else changed
 * it); a static pod's status goes to its mirror pod (skipped while there is none). Failed
 * writes are logged and retried by the next `update`, which answers false for them.
 */
export class StatusManager {
  private readonly pods: ResourceClient<Pod>;
  private readonly written = new Map<string, { json: string; at: number }>();

  constructor(
    private readonly o: { client: RestClient; logger: ClientLogger; mirrorOf: (staticPod: Pod) => Pod | undefined },
  ) {
    this.pods = new ResourceClient<Pod>(o.client, PODS);
  }

  async update(pod: Pod, source: PodSource, status: PodStatus): Promise<boolean> {
    const target = source === 'api' ? pod : this.o.mirrorOf(pod);
    const uid = target?.metadata.uid;
    if (!target || !uid) return true;
    const json = JSON.stringify(status);
    const last = this.written.get(uid);
    if (last?.json === json) {
      if (Date.now() - last.at < RECONCILE_MS) return true;
      if (sameStatus(target.status, status)) {
        last.at = Date.now();
        return true;
      }
    }
    try {
      await this.pods
        .namespace(target.metadata.namespace ?? '')
        .patch(target.metadata.name ?? '', { metadata: { uid }, status }, { type: 'merge', subresource: 'status' });
      this.written.set(uid, { json, at: Date.now() });
      return true;
    } catch (e) {
      if (isNotFound(e)) return true;
      this.o.logger.warn('cannot write pod status', { pod: podKey(target), error: String(e) });
      return false;
    }
  }

  /** The final delete of a terminated pod (grace 0, uid precondition); true when the pod is gone. */
  async finalDelete(pod: Pod): Promise<boolean> {
    try {
      await this.pods
        .namespace(pod.metadata.namespace ?? '')
        .delete(pod.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
      this.o.logger.info('pod deleted', { pod: podKey(pod) });
      return true;
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return true;
      this.o.logger.warn('cannot delete pod', { pod: podKey(pod), error: String(e) });
      return false;
    }
  }

  /** Forgets what was written to objects whose uid is not in `keep`. */
  prune(keep: ReadonlySet<string>): void {
    for (const uid of this.written.keys()) if (!keep.has(uid)) this.written.delete(uid);
  }
}
