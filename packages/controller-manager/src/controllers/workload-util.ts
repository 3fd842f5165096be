import { isNotFound, type ApiObject, type Deployment, type ReplicaSet } from '@svc/api';
import type { ResourceClient } from '@svc/client';

/** `spec.replicas`, 1 when unset (the apps/v1 default). */
export function replicasOf(o: ReplicaSet | Deployment): number {
  return o.spec.replicas ?? 1;
}

/** RFC 3339 at whole seconds, as Kubernetes' metav1.Time is written. */
export function nowTime(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Writes an object's status through its `status` subresource, as Kubernetes' ReplicaSet and
 * DaemonSet controllers do: the status is built from the copy at hand (`status(cur)`); when the
 * write fails (a newer copy won), the object is read again and the write tried once more. A
 * missing object is not retried. Answers the object as stored.
 */
export async function writeStatusRetryingOnce<T extends ApiObject & { status?: unknown }>(
  api: ResourceClient<T>,
  o: { cached: T; status: (cur: T) => T['status'] },
): Promise<T> {
  let cur = o.cached;
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.update({ ...structuredClone(cur), status: o.status(cur) }, { subresource: 'status' });
    } catch (e) {
      if (attempt >= 1 || isNotFound(e)) throw e;
      cur = await api.get(o.cached.metadata.name ?? '');
    }
  }
}
