import type { ApiObject } from '../../../types.js';
import { age } from '../../../table-format.js';

export function eventLastSeen(o: ApiObject, now: number): string {
  const series = (o.series as { lastObservedTime?: string } | undefined)?.lastObservedTime;
  const t =
    series ??
    (o.lastTimestamp as string | undefined) ??
    (o.eventTime as string | undefined) ??
    o.metadata.creationTimestamp;
  return age(t, now);
}

export function eventObject(o: ApiObject): string {
  const ref = (o.involvedObject ?? {}) as { kind?: string; name?: string };
  return `${(ref.kind ?? '').toLowerCase()}/${ref.name ?? ''}`;
}

/** Kubernetes' Source cell: `component, instance` (the source's, else the reporting ones). */
export function eventSourceText(o: ApiObject): string {
  const src = (o.source ?? {}) as { component?: string; host?: string };
  const component = src.component || String(o.reportingComponent ?? '');
  const instance = src.host || String(o.reportingInstance ?? '');
  return instance ? `${component}, ${instance}` : component;
}
