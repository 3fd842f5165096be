import { eventToCore, fieldErrors, naming, type ApiObject, type FieldError } from '@svc/api';
import { jsonEqual, validateQualifiedName } from '@svc/machinery';
import type { Strategy } from '../strategy.js';

/** Kubernetes' limits on Event fields (checked when `eventTime` is set). */
const REPORTING_INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

type Ref = { namespace?: string };
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Length as Go counts it (UTF-8 bytes). */
const bytes = (v: string): number => Buffer.byteLength(v, 'utf8');

/**
 * Kubernetes' validation of every Event, on the core/v1 form (`e`), with its error paths
 * (the reporting controller is `reportingComponent` to core/v1 requests, as the field is
 * named there). Events without `eventTime` (core/v1 style) only need
 * `involvedObject.namespace` to agree with the Event's namespace; newer ones also need the
 * reporting fields.
 */
function legacyValidate(e: ApiObject, controllerPath: 'reportingComponent' | 'reportingController'): FieldError[] {
  const errs: FieldError[] = [];
  const ns = e.metadata.namespace ?? '';
  const involvedNs = (e.involvedObject as Ref | undefined)?.namespace ?? '';
  const mismatch = (): FieldError =>
    fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace');
  if (!e.eventTime) {
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs) errs.push(mismatch());
    return errs;
  }
  if (involvedNs === '' && ns !== 'default' && ns !== naming().systemNamespace) errs.push(mismatch());
  const controller = str(e.reportingComponent);
  if (!controller) errs.push(fieldErrors.required(controllerPath));
  errs.push(...validateQualifiedName(controller, controllerPath));
  const limited = (path: string, value: string, max: number): void => {
    if (bytes(value) > max) errs.push(fieldErrors.invalid(path, '', `can have at most ${max} characters`));
  };
  const required = (path: string, value: string, max: number): void => {
    if (!value) errs.push(fieldErrors.required(path));
    limited(path, value, max);
  };
  required('reportingInstance', str(e.reportingInstance), REPORTING_INSTANCE_MAX);
  required('action', str(e.action), ACTION_MAX);
  required('reason', str(e.reason), REASON_MAX);
  limited('message', str(e.message), NOTE_MAX);
  return errs;
}

function validateSeries(e: ApiObject): FieldError[] {
  const series = e.series as { count?: number; lastObservedTime?: string } | undefined;
  if (!series) return [];
  const errs: FieldError[] = [];
  if ((series.count ?? 0) < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (!series.lastObservedTime) errs.push(fieldErrors.required('series.lastObservedTime'));
  return errs;
}

/** Creates through events/v1 are held to the newer rules: the deprecated fields stay unset. */
function strictValidateCreate(e: ApiObject): FieldError[] {
  const errs = validateSeries(e);
  if (!e.eventTime) errs.push(fieldErrors.required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning')
    errs.push(fieldErrors.invalid('type', '', `has invalid value: ${str(e.type)}`));
  for (const f of ['firstTimestamp', 'lastTimestamp'])
    if (e[f]) errs.push(fieldErrors.invalid(f, '', 'needs to be unset'));
  if (e.count) errs.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  const source = e.source as { component?: string; host?: string } | undefined;
  if (source?.component || source?.host) errs.push(fieldErrors.invalid('source', '', 'needs to be unset'));
  return errs;
}

/** Fields an update through events/v1 may not change (core/v1 names, as Kubernetes reports them). */
const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
] as const;
/** Kubernetes' paths for the fields whose core/v1 JSON name differs from its internal one. */
const PATH: Partial<Record<string, string>> = { reportingComponent: 'reportingController' };

/**
 * A value as Go holds it after decoding, for comparing as Kubernetes does (DeepEqual on the
 * decoded structs): absent, null and zero values are the same, and a date-time is its instant
 * (`…:00Z` equals `…:00.000000Z`).
 */
function decoded(v: unknown): unknown {
  if (v === null || v === undefined || v === '' || v === 0 || v === false) return undefined;
  if (typeof v === 'string') {
    const t = RFC3339.test(v) ? Date.parse(v) : NaN;
    return Number.isNaN(t) ? v : t;
  }
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(decoded);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const d = decoded(x);
      if (d !== undefined) out[k] = d;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function strictValidateUpdate(e: ApiObject, old: ApiObject): FieldError[] {
  const same = (a: unknown, b: unknown): boolean => jsonEqual(decoded(a) ?? null, decoded(b) ?? null);
  const errs = same(e.series, old.series) ? [] : validateSeries(e);
  for (const f of IMMUTABLE) {
    if (!same(e[f], old[f])) errs.push(fieldErrors.invalid(PATH[f] ?? f, e[f] ?? null, 'field is immutable'));
  }
  return errs;
}

/** core/v1 Events: PUT may create, and updates need no resourceVersion (as Kubernetes). */
export const eventStrategy: Strategy = {
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  validate: (obj) => legacyValidate(obj, 'reportingComponent'),
  validateUpdate: (obj) => legacyValidate(obj, 'reportingComponent'),
};

/** events/v1 Events: the same, plus the newer rules on create and update. */
export const eventsV1EventStrategy: Strategy = {
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  validate: (obj) => {
    const e = eventToCore(obj);
    return [...legacyValidate(e, 'reportingController'), ...strictValidateCreate(e)];
  },
  validateUpdate: (obj, old) => {
    const e = eventToCore(obj);
    return [...legacyValidate(e, 'reportingController'), ...strictValidateUpdate(e, eventToCore(old))];
  },
};
