import { badRequest, fieldErrors, invalid, type ApiObject, type FieldError } from '@svc/api';
import { parseGoBool } from '@svc/machinery';

/** PodLogOptions as the `pods/log` query carries them (Kubernetes' names). */
export interface PodLogOptions {
  container: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
}

function boolParam(q: URLSearchParams, key: string): boolean {
  const v = q.get(key);
  if (v === null || v === '') return false;
  try {
    return parseGoBool(v);
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}

function intParam(q: URLSearchParams, key: string): number | undefined {
  const v = q.get(key);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

/**
 * The query of a `pods/log` request, decoded (400 on a value that does not parse) and
 * validated as Kubernetes' ValidatePodLogOptions (422 Invalid of kind PodLogOptions).
 */
export function parsePodLogOptions(q: URLSearchParams, podName: string): PodLogOptions {
  const o: PodLogOptions = {
    container: q.get('container') ?? '',
    follow: boolParam(q, 'follow'),
    previous: boolParam(q, 'previous'),
    timestamps: boolParam(q, 'timestamps'),
    sinceSeconds: intParam(q, 'sinceSeconds'),
    tailLines: intParam(q, 'tailLines'),
    limitBytes: intParam(q, 'limitBytes'),
  };
  const sinceTime = q.get('sinceTime');
  if (sinceTime) {
    const t = Date.parse(sinceTime);
    if (Number.isNaN(t)) throw badRequest(`parsing time ${JSON.stringify(sinceTime)} as RFC 3339: cannot parse`);
    o.sinceTime = new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  const errs: FieldError[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0)
    errs.push(fieldErrors.invalid('tailLines', o.tailLines, 'must be greater than or equal to 0'));
  if (o.limitBytes !== undefined && o.limitBytes < 1)
    errs.push(fieldErrors.invalid('limitBytes', o.limitBytes, 'must be greater than 0'));
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined) {
    errs.push(fieldErrors.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  } else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1) {
    errs.push(fieldErrors.invalid('sinceSeconds', o.sinceSeconds, 'must be greater than 0'));
  }
  if (errs.length > 0) throw invalid({ group: '', kind: 'PodLogOptions' }, podName, errs);
  return o;
}

/** Container names of a pod in Kubernetes' VisitContainers order: init, regular, ephemeral. */
function containerNames(pod: ApiObject): string[] {
  const spec = (pod.spec ?? {}) as Record<string, Array<{ name?: string }> | undefined>;
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) =>
    (spec[k] ?? []).map((c) => c.name ?? ''),
  );
}

/**
 * The container whose log is asked for (Kubernetes' validateContainer): the named one, which
 * must exist, else the only regular container; 400 otherwise.
 */
export function logContainer(pod: ApiObject, container: string): string {
  const name = pod.metadata.name ?? '';
  if (container) {
    if (!containerNames(pod).includes(container))
      throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  const regular = (pod.spec as { containers?: Array<{ name?: string }> } | undefined)?.containers ?? [];
  if (regular.length === 1) return regular[0]?.name ?? '';
  if (regular.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  // Go's %s of a []string: `[a b c]`.
  throw badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`,
  );
}

/** The node agent's query for `o` (Kubernetes' LogLocation parameters, sorted by key as Go encodes them). */
export function containerLogsQuery(o: PodLogOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (o.follow) q.set('follow', 'true');
  if (o.previous) q.set('previous', 'true');
  if (o.timestamps) q.set('timestamps', 'true');
  if (o.sinceSeconds !== undefined) q.set('sinceSeconds', String(o.sinceSeconds));
  if (o.sinceTime !== undefined) q.set('sinceTime', o.sinceTime);
  if (o.tailLines !== undefined) q.set('tailLines', String(o.tailLines));
  if (o.limitBytes !== undefined) q.set('limitBytes', String(o.limitBytes));
  q.sort();
  return q;
}
