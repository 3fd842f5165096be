import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AuditResponseStatus, AuditStage, AuditUserInfo, Status } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { RequestInfo } from '../endpoints/request-info.js';
import type { AuditBackend } from './backend.js';
import { AuditRecord, nowMicros, type AuditEventFields } from './event.js';
import type { AuditMetrics } from './metrics.js';
import { levelAtLeast, type PolicyEvaluator, type RequestAuditConfig } from './policy.js';

/** One request as the audit stage sees it. */
export interface AuditRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request URI as received (path and query). */
  uri: string;
  info: RequestInfo;
  /** The authenticated user, before impersonation; absent when authentication failed. */
  requester?: UserInfo;
  /** The user the request acts as (after impersonation) and its audit annotations, filled in later stages. */
  ctx: { user?: UserInfo; annotations?: Record<string, string> };
  auditID: string;
  /** Microseconds since the epoch. */
  receivedAt: number;
}

/**
 * Makes the events of requests (Kubernetes' audit filter and policy evaluator): the policy
 * decides each request's level, and every event the level and stages select goes to the backend.
 */
export class Auditor {
  constructor(private readonly o: { policy: PolicyEvaluator; backend: AuditBackend; metrics: AuditMetrics }) {}

  /** The request's audit, or undefined when the policy gives it level None; counts the level either way. */
  begin(a: AuditRequest): RequestAudit | undefined {
    const config = this.o.policy.evaluate({ user: a.requester, ...a.info });
    this.o.metrics.observeLevel(config.level);
    if (config.level === 'None') return undefined;
    return new RequestAudit(this, a, config);
  }

  /**
   * A request whose credentials were refused: one ResponseStarted event with the code and the
   * kinds of credential tried (Kubernetes' failed-authentication audit).
   */
  async failedAuthentication(a: AuditRequest, code: number): Promise<void> {
    const ra = this.begin({ ...a, requester: undefined });
    if (!ra) return;
    ra.respondedWith({ metadata: {}, message: authenticationMethods(a.req), code });
    await ra.emit('ResponseStarted');
  }

  /** Hands one event to the backend; false when it could not be recorded. */
  process(record: AuditRecord): Promise<boolean> {
    this.o.metrics.events.inc();
    return this.o.backend.processEvents([record]);
  }

  /** A request refused because its first event could not be recorded (blocking-strict). */
  rejected(): void {
    this.o.metrics.rejected.inc();
  }

  /** Stops the backends once everything taken is recorded or reported lost. */
  shutdown(): Promise<void> {
    return this.o.backend.shutdown();
  }
}

/** Requests being audited, by their request and response objects (for the decode and answer hooks). */
const active = new WeakMap<object, RequestAudit>();

/** The handlers' hook for a decoded request body. */
export function auditRequestObject(req: object, value: unknown): void {
  active.get(req)?.recordRequestObject(value);
}

/** The handlers' hook for an answer's object; `json` is its compact JSON when already made. */
export function auditResponseObject(res: object, value: unknown, json?: string): void {
  active.get(res)?.recordResponseObject(value, json);
}

const MAX_USER_AGENT = 1024;

/**
 * The event of one audited request, filled in as the request goes: metadata at the start, the
 * request object when its body is decoded, the answer when it is written. Each stage's event is
 * a snapshot, so later changes never reach an event already handed to a backend.
 */
export class RequestAudit {
  private readonly fields: Omit<AuditEventFields, 'stage' | 'stageTimestamp'>;
  private started = false;
  private done = false;

  constructor(
    private readonly auditor: Auditor,
    private readonly a: AuditRequest,
    readonly config: RequestAuditConfig,
  ) {
    const { info } = a;
    const ua = String(a.req.headers['user-agent'] ?? '');
    this.fields = {
      level: config.level,
      auditID: a.auditID,
      requestURI: a.uri,
      verb: info.verb,
      user: a.requester ? userWire(a.requester) : {},
      sourceIPs: sourceIPs(a.req),
      userAgent: ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua,
      objectRef: info.isResourceRequest
        ? {
            resource: info.resource,
            namespace: info.namespace,
            name: info.name,
            apiGroup: info.apiGroup,
            apiVersion: info.apiVersion,
            subresource: info.subresource,
          }
        : undefined,
      requestReceivedTimestamp: a.receivedAt,
    };
  }

  /**
   * Watches the request's body and answer: the handlers' hooks record into this event, and a
   * long-running request's first header makes its ResponseStarted event.
   */
  watch(): void {
    active.set(this.a.req, this);
    active.set(this.a.res, this);
    if (!this.a.info.longRunning) return;
    const res = this.a.res;
    const writeHead = res.writeHead;
    const started = (code: number): void => void this.responseStarted(code);
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      started(args[0]);
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
  }

  /** The RequestReceived event; false when blocking-strict mode could not record it. */
  received(): Promise<boolean> {
    return this.emit('RequestReceived');
  }

  /** Metadata and up: the object reference from the body; Request and up: the body itself (the first one decoded). */
  recordRequestObject(value: unknown): void {
    if (this.done) return;
    const meta = metadataOf(value);
    if (meta) {
      const ref = (this.fields.objectRef ??= {});
      ref.namespace ||= str(meta.namespace);
      ref.name ||= str(meta.name);
      ref.uid ||= str(meta.uid);
      ref.resourceVersion ||= str(meta.resourceVersion);
    }
    if (this.fields.requestObject !== undefined || !levelAtLeast(this.config.level, 'Request')) return;
    this.fields.requestObject = JSON.stringify(this.config.omitManagedFields ? withoutManagedFields(value) : value);
  }

  /** Metadata and up: a Status answer's fields; RequestResponse: the answer itself. */
  recordResponseObject(value: unknown, json?: string): void {
    if (this.done) return;
    if (isStatus(value)) this.respondedWith(boundedStatus(value));
    if (!levelAtLeast(this.config.level, 'RequestResponse')) return;
    this.fields.responseObject =
      this.config.omitManagedFields || json === undefined
        ? JSON.stringify(this.config.omitManagedFields ? withoutManagedFields(value) : value)
        : json;
  }

  respondedWith(status: AuditResponseStatus): void {
    this.fields.responseStatus = status;
  }

  /** A long-running request's answer began: its ResponseStarted event, once. */
  responseStarted(code: number): Promise<boolean> {
    if (this.started || this.done) return Promise.resolve(true);
    this.started = true;
    this.fields.responseStatus = { ...(this.fields.responseStatus ?? { metadata: {} }), code };
    return this.emit('ResponseStarted');
  }

  /**
   * The ResponseComplete event. `code` is the answer's status when it is still to be written
   * (an error thrown to the chain's panic recovery), else the written one is taken; a request
   * that wrote nothing reads as Kubernetes' "Connection closed early".
   */
  async complete(o: { code?: number } = {}): Promise<void> {
    if (this.done) return;
    const { res } = this.a;
    const code = o.code ?? (res.headersSent ? res.statusCode : undefined);
    if (code === undefined) {
      const early: AuditResponseStatus = {
        metadata: {},
        status: 'Success',
        message: 'Connection closed early',
        code: 200,
      };
      if (this.a.info.longRunning && !this.started) {
        this.fields.responseStatus = early;
        await this.responseStarted(200);
      }
      this.fields.responseStatus ??= early;
    } else {
      if (this.a.info.longRunning && !this.started) await this.responseStarted(code);
      this.fields.responseStatus = { ...(this.fields.responseStatus ?? { metadata: {} }), code };
    }
    this.done = true;
    await this.emit('ResponseComplete');
  }

  /** Something other than a Status error escaped the handler: the Panic event instead of ResponseComplete. */
  async panic(err: unknown): Promise<void> {
    if (this.done) return;
    this.done = true;
    const message = err instanceof Error ? err.message : String(err);
    this.fields.responseStatus = {
      metadata: {},
      status: 'Failure',
      message: `APIServer panic'd: ${message}`,
      reason: 'InternalError',
      code: 500,
    };
    await this.emit('Panic');
  }

  /** The stage's event unless the policy omits the stage; false when the backend could not record it. */
  emit(stage: AuditStage): Promise<boolean> {
    if (this.config.omitStages.has(stage)) return Promise.resolve(true);
    const f = this.fields;
    const { user } = this.a.ctx;
    const annotations = this.a.ctx.annotations;
    const record = new AuditRecord({
      ...f,
      stage,
      stageTimestamp: stage === 'RequestReceived' ? f.requestReceivedTimestamp : nowMicros(),
      objectRef: f.objectRef && { ...f.objectRef },
      responseStatus: f.responseStatus && { ...f.responseStatus },
      impersonatedUser: user && this.a.requester && user !== this.a.requester ? userWire(user) : undefined,
      annotations: annotations && { ...annotations },
    });
    return this.auditor.process(record);
  }
}

function userWire(u: UserInfo): AuditUserInfo {
  const out: AuditUserInfo = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function metadataOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const m = (value as { metadata?: unknown }).metadata;
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined;
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status';
}

function boundedStatus(s: Status): AuditResponseStatus {
  return { metadata: {}, status: s.status, message: s.message, reason: s.reason, details: s.details, code: s.code };
}

/** A copy without `metadata.managedFields` (of the object, of a list's items, of a Table's row objects). */
function withoutManagedFields(value: unknown): unknown {
  const strip = (o: unknown): unknown => {
    const meta = metadataOf(o);
    if (!meta || !('managedFields' in meta)) return o;
    const { managedFields: _m, ...rest } = meta;
    return { ...(o as object), metadata: rest };
  };
  if (typeof value !== 'object' || value === null) return value;
  const v = strip(value) as Record<string, unknown>;
  if (Array.isArray(v.items)) return { ...v, items: v.items.map(strip) };
  if (v.kind === 'Table' && Array.isArray(v.rows))
    return {
      ...v,
      rows: v.rows.map((row: unknown) => {
        const r = row as { object?: unknown };
        return r && typeof r === 'object' && r.object !== undefined ? { ...r, object: strip(r.object) } : row;
      }),
    };
  return v;
}

/**
 * Kubernetes' source IPs: the X-Forwarded-For chain, X-Real-Ip when not in it, then the peer
 * address unless it is already last.
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string' && forwarded !== '') {
    for (const part of forwarded.split(',')) {
      const ip = parseIp(part.trim());
      if (ip) ips.push(ip);
    }
  }
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && real !== '') {
    const ip = parseIp(real.trim());
    if (ip && !ips.includes(ip)) ips.push(ip);
  }
  const peer = parseIp(req.socket.remoteAddress ?? '');
  if (peer && ips[ips.length - 1] !== peer) ips.push(peer);
  return ips;
}

/** An IP in Go's canonical text (IPv4-mapped IPv6 as IPv4), or undefined when it is none. */
function parseIp(s: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped) return mapped[1];
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(s)) return s.split('.').every((o) => Number(o) <= 255) ? s : undefined;
  if (s.includes(':') && /^[0-9a-f:.]+$/i.test(s)) return s.toLowerCase();
  return undefined;
}

/** The kinds of credential a refused request carried, as Kubernetes words them. */
function authenticationMethods(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = String(req.headers.authorization ?? '').trim();
  if (/^basic\s+\S/i.test(auth)) methods.push('basic');
  const parts = auth.split(' ');
  if (parts.length > 1 && parts[0]?.toLowerCase() === 'bearer') methods.push('bearer');
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  if ((query.get('access_token') ?? '').trim()) methods.push('access_token');
  const peer = (req.socket as Partial<TLSSocket>).getPeerCertificate?.();
  if (peer && Object.keys(peer).length > 0) methods.push('x509');
  return methods.length > 0
    ? `Authentication failed, attempted: ${methods.join(', ')}`
    : 'Authentication failed, no credentials provided';
}
