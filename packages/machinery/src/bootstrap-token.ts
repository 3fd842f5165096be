import type { ApiObject } from '@svc/api';

/** `<token-id>.<token-secret>` (the spec's format). */
export const BOOTSTRAP_TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** Prefix of bootstrap-token Secret names: `bootstrap-token-<id>`. */
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';

/** A `data` value of a Secret, decoded from base64 (undefined when absent). */
export function secretDataString(secret: ApiObject, key: string): string | undefined {
  const v = (secret.data as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
}

/**
 * When a bootstrap token's `expiration` (RFC 3339) passes, in ms since the epoch: undefined
 * when it never expires, NaN when the value does not read (it counts as expired then, as
 * Kubernetes).
 */
export function bootstrapTokenExpiry(secret: ApiObject): number | undefined {
  const exp = secretDataString(secret, 'expiration');
  if (exp === undefined || exp === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(exp)) return NaN;
  return Date.parse(exp);
}

export function bootstrapTokenExpired(secret: ApiObject, now: number): boolean {
  const t = bootstrapTokenExpiry(secret);
  return t !== undefined && (Number.isNaN(t) || t <= now);
}
