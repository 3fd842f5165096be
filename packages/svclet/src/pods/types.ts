/** Where a pod came from (Kubernetes' `config.source` annotation values). */
export type PodSource = 'api' | 'file' | 'http';

/** A kubelet event about a pod (core/v1 Event fields); `fieldPath` names a container (`spec.containers{web}`). */
export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  fieldPath?: string;
}

/** RFC 3339 at whole seconds, as Kubernetes' metav1.Time is written. */
export function timeString(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `namespace/name`. */
export function podKey(p: { metadata: { namespace?: string; name?: string } }): string {
  return `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;
}
