import { badRequest, internalError, StatusError, type Status } from '@svc/api';

/**
 * A webhook that could not be called or answered wrongly (Kubernetes' ErrCallingWebhook):
 * `failurePolicy` decides. Failing closed, the request gets a 500 `Internal error occurred:
 * failed calling webhook "<name>": <reason>`; `code` is what the metrics record.
 */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhook: string,
    readonly reason: string,
    readonly code: number,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
    this.name = 'CallingWebhookError';
  }

  toStatusError(): StatusError {
    return internalError(this.message);
  }
}

/** A webhook that answered `allowed: false` (Kubernetes' ErrWebhookRejection). */
export class WebhookRejection extends Error {
  constructor(readonly status: StatusError) {
    super(status.message);
    this.name = 'WebhookRejection';
  }
}

interface ResultStatus {
  code?: unknown;
  status?: unknown;
  message?: unknown;
  reason?: unknown;
  details?: unknown;
  metadata?: unknown;
}

/**
 * Kubernetes' ToStatusErr: the webhook's `status` with a code of at least 400, `Failure`, and
 * the message `admission webhook "<name>" denied the request: <message or reason>` (or `...
 * denied the request without explanation`).
 */
export function rejectionStatus(webhook: string, result: ResultStatus | undefined): StatusError {
  const r = result ?? {};
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = typeof r.message === 'string' ? r.message : '';
  const reason = typeof r.reason === 'string' ? r.reason : '';
  // A code HTTP cannot carry (over 999) is a 400 too.
  const code = typeof r.code === 'number' && Number.isInteger(r.code) && r.code >= 400 && r.code <= 999 ? r.code : 400;
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: message
      ? `${deniedBy}: ${message}`
      : reason
        ? `${deniedBy}: ${reason}`
        : `${deniedBy} without explanation`,
    code,
  };
  if (reason) status.reason = reason;
  if (typeof r.details === 'object' && r.details !== null) status.details = r.details as Status['details'];
  return new StatusError(status);
}

/** Kubernetes' NewDryRunUnsupportedErr: a dry run would call a webhook with side effects. */
export function dryRunUnsupported(webhook: string): StatusError {
  return badRequest(`admission webhook "${webhook}" does not support dry run`);
}
