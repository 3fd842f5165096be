import type { Deployment, ReplicaSet } from '@svc/api';

/** `spec.replicas`, 1 when unset (the apps/v1 default). */
export function replicasOf(o: ReplicaSet | Deployment): number {
  return o.spec.replicas ?? 1;
}

/** RFC 3339 at whole seconds, as Kubernetes' metav1.Time is written. */
export function nowTime(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
