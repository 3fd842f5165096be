import { badRequest, metaGroup } from '@svc/api';

/**
 * The opaque `continue` token: base64 of JSON carrying the list's revision and the key
 * (relative to the resource's prefix) the next chunk starts at, as Kubernetes does.
 */
export interface ContinueToken {
  rv: number;
  start: string;
  /** `<group or core>/<resource>` the token was issued for. */
  resource: string;
}

/** The token format's version, in the naming's meta group (Kubernetes: `meta.k8s.io/v1`). */
const version = (): string => `${metaGroup()}/v1`;

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: version(), rv: t.rv, start: t.start, r: t.resource })).toString('base64url');
}

/** Decodes a token issued for `resource`; anything else (garbage, another type's token) is a 400. */
export function decodeContinue(token: string, resource: string): ContinueToken {
  const bad = (why: string): never => {
    throw badRequest(`invalid continue token: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return bad('not a valid continue token');
  }
  if (typeof parsed !== 'object' || parsed === null) return bad('not a valid continue token');
  const { v, rv, start, r } = parsed as { v?: unknown; rv?: unknown; start?: unknown; r?: unknown };
  if (v !== version()) return bad('unrecognized continue token version');
  if (typeof rv !== 'number' || !Number.isInteger(rv) || (rv <= 0 && rv !== -1))
    return bad('continue token has an invalid resource version');
  if (typeof start !== 'string' || start === '' || start.startsWith('/') || start.split('/').includes('..')) {
    return bad('continue token has an invalid start key');
  }
  if (r !== resource) return bad(`the token was issued for another resource (${String(r)}), not ${resource}`);
  return { rv, start, resource };
}
