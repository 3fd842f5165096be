import type { Status, StatusCause, StatusDetails } from './types.js';
import { fieldErrorBody, fieldErrorMessage, type FieldError } from './field-errors.js';

/** Kubernetes' Status reasons, and the one table that maps each to its HTTP code. */
export const REASON_CODES = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
} as const;

export type StatusReason = keyof typeof REASON_CODES;

/** Identifies the resource in messages: `configmaps`, or `leases.coordination.<group suffix>`. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export interface GroupKind {
  group: string;
  kind: string;
}

function qualified(r: QualifiedResource): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** An error that carries the wire `Status` it answers with. */
export class StatusError extends Error {
  readonly status: Status;
  constructor(status: Status) {
    super(status.message ?? status.reason ?? 'error');
    this.name = 'StatusError';
    this.status = status;
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): string | undefined {
    return this.status.reason;
  }
}

export function statusFailure(reason: StatusReason, message: string, details?: StatusDetails): Status {
  const s: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code: REASON_CODES[reason],
  };
  if (details) s.details = details;
  return s;
}

export function statusError(reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  return new StatusError(statusFailure(reason, message, details));
}

export function successStatus(details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) s.details = details;
  return s;
}

function details(r: QualifiedResource, name: string | undefined): StatusDetails {
  const d: StatusDetails = { kind: r.resource };
  if (name !== undefined && name !== '') d.name = name;
  if (r.group) d.group = r.group;
  return d;
}

export function notFound(r: QualifiedResource, name: string): StatusError {
  return statusError('NotFound', `${qualified(r)} "${name}" not found`, details(r, name));
}

export function alreadyExists(r: QualifiedResource, name: string): StatusError {
  return statusError('AlreadyExists', `${qualified(r)} "${name}" already exists`, details(r, name));
}

export function conflict(r: QualifiedResource, name: string, why: string): StatusError {
  return statusError(
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`,
    details(r, name),
  );
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

export function invalid(gk: GroupKind, name: string, errs: FieldError[]): StatusError {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.path }));
  const list = errs.map(fieldErrorMessage);
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const d: StatusDetails = { name, kind: gk.kind, causes };
  if (gk.group) d.group = gk.group;
  if (!name) delete d.name;
  return statusError('Invalid', `${gk.kind}${gk.group ? '.' + gk.group : ''} "${name}" is invalid: ${summary}`, d);
}

export function badRequest(message: string, causes?: StatusCause[]): StatusError {
  return statusError('BadRequest', message, causes ? { causes } : undefined);
}

export function methodNotAllowed(): StatusError {
  return statusError('MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function unsupportedMediaType(contentType: string, accepted: string[]): StatusError {
  return statusError(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    { causes: [{ reason: 'UnexpectedServerResponse', message: contentType }] },
  );
}

export function notAcceptable(accepted: string[]): StatusError {
  return statusError('NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

export function requestEntityTooLarge(limit: number): StatusError {
  return statusError('RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

export function expired(message: string): StatusError {
  return statusError('Expired', message);
}

export function gone(message: string): StatusError {
  return statusError('Gone', message);
}

/** 504 Timeout; the message reads `Timeout: <message>`, as Kubernetes' NewTimeoutError. */
export function timeout(message: string, retryAfterSeconds?: number): StatusError {
  return statusError('Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : undefined);
}

export function forbidden(message: string): StatusError {
  return statusError('Forbidden', message);
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return statusError('Unauthorized', message);
}

export function internalError(message: string): StatusError {
  return statusError('InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function serviceUnavailable(message: string): StatusError {
  return statusError('ServiceUnavailable', message);
}

export function tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return statusError('TooManyRequests', message, { retryAfterSeconds });
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

function hasReason(e: unknown, reason: StatusReason): boolean {
  return e instanceof StatusError && e.status.reason === reason;
}

export const isNotFound = (e: unknown): boolean => hasReason(e, 'NotFound');
export const isAlreadyExists = (e: unknown): boolean => hasReason(e, 'AlreadyExists');
export const isConflict = (e: unknown): boolean => hasReason(e, 'Conflict');
export const isInvalid = (e: unknown): boolean => hasReason(e, 'Invalid');
export const isExpired = (e: unknown): boolean => hasReason(e, 'Expired') || hasReason(e, 'Gone');
export const isBadRequest = (e: unknown): boolean => hasReason(e, 'BadRequest');
