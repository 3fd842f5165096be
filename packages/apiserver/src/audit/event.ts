import type {
  AuditLevel,
  AuditObjectReference,
  AuditResponseStatus,
  AuditStage,
  AuditUserInfo,
  StatusDetails,
} from '@svc/api';

/** The fields of an event; request and response objects are kept as the compact JSON they were captured as. */
export interface AuditEventFields {
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: AuditUserInfo;
  impersonatedUser?: AuditUserInfo;
  sourceIPs: readonly string[];
  userAgent: string;
  objectRef?: AuditObjectReference;
  responseStatus?: AuditResponseStatus;
  requestObject?: string;
  responseObject?: string;
  /** Microseconds since the epoch. */
  requestReceivedTimestamp: number;
  stageTimestamp: number;
  annotations?: Readonly<Record<string, string>>;
}

/**
 * One event as handed to the backends: immutable once made (a stage's snapshot of the request's
 * event), so every backend may hold it; its JSON is made once per apiVersion and shared by
 * truncation and the writers.
 */
export class AuditRecord {
  private encoded?: { apiVersion: string; json: string };

  constructor(readonly fields: Readonly<AuditEventFields>) {}

  /** The event as one line of JSON (no newline), in Kubernetes' field order. */
  json(apiVersion: string): string {
    if (this.encoded?.apiVersion !== apiVersion)
      this.encoded = { apiVersion, json: encodeEvent(this.fields, apiVersion) };
    return this.encoded.json;
  }

  /** Its size in bytes as JSON. */
  size(apiVersion: string): number {
    return Buffer.byteLength(this.json(apiVersion));
  }
}

/** MicroTime on the wire: RFC 3339 in UTC with exactly six fractional digits. */
export function microTime(us: number): string {
  const ms = Math.floor(us / 1000);
  const frac = String(Math.floor(us) % 1_000_000).padStart(6, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** Microseconds since the epoch, now. */
export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

const str = JSON.stringify;

/** Go's encoding of a map: keys sorted. */
function sortedMap(m: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(m).sort();
  return `{${keys.map((k) => `${str(k)}:${str(m[k])}`).join(',')}}`;
}

function fieldsJson(parts: Array<[string, string | undefined]>): string {
  let out = '';
  for (const [k, v] of parts) {
    if (v === undefined) continue;
    out += `${out ? ',' : ''}"${k}":${v}`;
  }
  return `{${out}}`;
}

const opt = (s: string | undefined): string | undefined => (s ? str(s) : undefined);

function userJson(u: AuditUserInfo): string {
  return fieldsJson([
    ['username', opt(u.username)],
    ['uid', opt(u.uid)],
    ['groups', u.groups?.length ? str(u.groups) : undefined],
    ['extra', u.extra && Object.keys(u.extra).length > 0 ? sortedMap(u.extra) : undefined],
  ]);
}

function objectRefJson(r: AuditObjectReference): string {
  return fieldsJson([
    ['resource', opt(r.resource)],
    ['namespace', opt(r.namespace)],
    ['name', opt(r.name)],
    ['uid', opt(r.uid)],
    ['apiGroup', opt(r.apiGroup)],
    ['apiVersion', opt(r.apiVersion)],
    ['resourceVersion', opt(r.resourceVersion)],
    ['subresource', opt(r.subresource)],
  ]);
}

function detailsJson(d: StatusDetails): string {
  return fieldsJson([
    ['name', opt(d.name)],
    ['group', opt(d.group)],
    ['kind', opt(d.kind)],
    ['uid', opt(d.uid)],
    ['causes', d.causes?.length ? str(d.causes) : undefined],
    ['retryAfterSeconds', d.retryAfterSeconds ? str(d.retryAfterSeconds) : undefined],
  ]);
}

function statusJson(s: AuditResponseStatus): string {
  return fieldsJson([
    ['metadata', str(s.metadata)],
    ['status', opt(s.status)],
    ['message', opt(s.message)],
    ['reason', opt(s.reason)],
    ['details', s.details ? detailsJson(s.details) : undefined],
    ['code', s.code ? str(s.code) : undefined],
  ]);
}

/** An event as Kubernetes' JSON serializer writes it: field order of the Go type, empty optional fields left out, maps sorted. */
export function encodeEvent(e: Readonly<AuditEventFields>, apiVersion: string): string {
  return fieldsJson([
    ['kind', '"Event"'],
    ['apiVersion', str(apiVersion)],
    ['level', str(e.level)],
    ['auditID', str(e.auditID)],
    ['stage', str(e.stage)],
    ['requestURI', str(e.requestURI)],
    ['verb', str(e.verb)],
    ['user', userJson(e.user)],
    ['impersonatedUser', e.impersonatedUser ? userJson(e.impersonatedUser) : undefined],
    ['sourceIPs', e.sourceIPs.length ? str(e.sourceIPs) : undefined],
    ['userAgent', opt(e.userAgent)],
    ['objectRef', e.objectRef ? objectRefJson(e.objectRef) : undefined],
    ['responseStatus', e.responseStatus ? statusJson(e.responseStatus) : undefined],
    ['requestObject', e.requestObject],
    ['responseObject', e.responseObject],
    ['requestReceivedTimestamp', str(microTime(e.requestReceivedTimestamp))],
    ['stageTimestamp', str(microTime(e.stageTimestamp))],
    ['annotations', e.annotations && Object.keys(e.annotations).length > 0 ? sortedMap(e.annotations) : undefined],
  ]);
}

/** An EventList of already encoded events (what the webhook backend POSTs). */
export function encodeEventList(records: readonly AuditRecord[], apiVersion: string): string {
  return `{"kind":"EventList","apiVersion":${str(apiVersion)},"metadata":{},"items":[${records.map((r) => r.json(apiVersion)).join(',')}]}`;
}

/** Go's `%q` of a string: double-quoted with Go's escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's RFC3339Nano of a microsecond time in UTC: trailing zeros of the fraction dropped. */
export function rfc3339Nano(us: number): string {
  const base = new Date(Math.floor(us / 1000)).toISOString().slice(0, 19);
  const frac = String(Math.floor(us) % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${base}${frac ? `.${frac}` : ''}Z`;
}

/** Kubernetes' one-line text form of an event (`--audit-log-format=legacy`). */
export function legacyEventLine(e: Readonly<AuditEventFields>): string {
  let username = '<none>';
  let groups = '<none>';
  if (e.user.username) {
    username = e.user.username;
    if (e.user.groups?.length) groups = e.user.groups.map(goQuote).join(',');
  }
  let as = '<self>';
  let asGroups = '<lookup>';
  if (e.impersonatedUser) {
    as = e.impersonatedUser.username ?? '';
    if (e.impersonatedUser.groups) asGroups = e.impersonatedUser.groups.map(goQuote).join(',');
  }
  const namespace = e.objectRef?.namespace || '<none>';
  const response = e.responseStatus ? String(e.responseStatus.code ?? 0) : '<deferred>';
  const ip = e.sourceIPs[0] ?? '<unknown>';
  const q = goQuote;
  return (
    `${rfc3339Nano(e.requestReceivedTimestamp)} AUDIT: id=${q(e.auditID)} stage=${q(e.stage)} ip=${q(ip)} ` +
    `method=${q(e.verb)} user=${q(username)} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} ` +
    `user-agent=${q(e.userAgent)} namespace=${q(namespace)} uri=${q(e.requestURI)} response="${response}"`
  );
}
