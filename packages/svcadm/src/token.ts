import { randomInt } from 'node:crypto';
import { bootstrapTokenSecretType, bootstrapToolName, naming, type ApiObject } from '@svc/api';
import { BOOTSTRAP_TOKEN, BOOTSTRAP_TOKEN_SECRET_PREFIX, bootstrapTokenExpiry, secretDataString } from '@svc/machinery';

/** The usages a bootstrap token may have (Kubernetes' KnownTokenUsages, in its order). */
export const TOKEN_USAGES = ['signing', 'authentication'] as const;

/** Extra groups of a bootstrap token (Kubernetes' BootstrapGroupPattern). */
export const BOOTSTRAP_GROUP_PATTERN = '\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z';
const BOOTSTRAP_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** The group `svcadm join`'s default token puts nodes in: `system:bootstrappers:svcadm:default-node-token`. */
export function defaultNodeTokenGroup(): string {
  return `system:bootstrappers:${bootstrapToolName()}:default-node-token`;
}

/** A bootstrap token as `svcadm token` creates and lists it. */
export interface BootstrapToken {
  id: string;
  secret: string;
  description?: string;
  /** ms since the epoch; undefined: never expires. NaN: the stored value does not read. */
  expires?: number;
  usages: string[];
  groups: string[];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

/** A fresh random `<id>.<secret>`, six and sixteen characters of `[a-z0-9]`. */
export function generateToken(): string {
  return `${randomString(6)}.${randomString(16)}`;
}

/** Splits `<id>.<secret>`; throws with Kubernetes' message when it does not have the form. */
export function parseToken(token: string): { id: string; secret: string } {
  const m = BOOTSTRAP_TOKEN.exec(token);
  if (!m)
    throw new Error(
      `the bootstrap token ${JSON.stringify(token)} was not of the form "^([a-z0-9]{6})\\.([a-z0-9]{16})$"`,
    );
  return { id: m[1] ?? '', secret: m[2] ?? '' };
}

/** Throws with Kubernetes' message for usages outside `signing`, `authentication`. */
export function validateUsages(usages: readonly string[]): void {
  const bad = [...new Set(usages.filter((u) => !(TOKEN_USAGES as readonly string[]).includes(u)))].sort();
  if (bad.length > 0)
    throw new Error(
      `invalid bootstrap token usage string: ${bad.join(',')}, valid usage options: ${TOKEN_USAGES.join(',')}`,
    );
}

/** Throws with Kubernetes' message for an extra group outside `system:bootstrappers:`. */
export function validateGroups(groups: readonly string[]): void {
  for (const g of groups) {
    if (!BOOTSTRAP_GROUP.test(g))
      throw new Error(`bootstrap group ${JSON.stringify(g)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN})`);
  }
}

/** RFC 3339 in UTC without fractions, as Go's time.RFC3339 prints it. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The Secret that stores `t` (the spec's data keys) in the system namespace. */
export function tokenSecret(t: BootstrapToken): ApiObject {
  const data: Record<string, string> = { 'token-id': t.id, 'token-secret': t.secret };
  if (t.description) data.description = t.description;
  if (t.expires !== undefined) data.expiration = rfc3339(t.expires);
  for (const u of t.usages) data[`usage-bootstrap-${u}`] = 'true';
  if (t.groups.length > 0) data['auth-extra-groups'] = t.groups.join(',');
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${t.id}`, namespace: naming().systemNamespace },
    type: bootstrapTokenSecretType(),
    data: b64,
  };
}

/** The token a Secret stores; undefined for Secrets that are not well-formed bootstrap tokens. */
export function tokenFromSecret(s: ApiObject): BootstrapToken | undefined {
  if (s.type !== bootstrapTokenSecretType()) return undefined;
  const id = secretDataString(s, 'token-id') ?? '';
  const secret = secretDataString(s, 'token-secret') ?? '';
  if (!BOOTSTRAP_TOKEN.test(`${id}.${secret}`) || s.metadata.name !== `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`)
    return undefined;
  const usages = Object.keys((s.data ?? {}) as Record<string, string>)
    .filter((k) => k.startsWith('usage-bootstrap-') && secretDataString(s, k) === 'true')
    .map((k) => k.slice('usage-bootstrap-'.length))
    .sort();
  const groups = (secretDataString(s, 'auth-extra-groups') ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  return {
    id,
    secret,
    description: secretDataString(s, 'description'),
    expires: bootstrapTokenExpiry(s),
    usages,
    groups,
  };
}

/** Kubernetes' ShortHumanDuration: `45s`, `12m`, `23h`, `6d`, `2y`; `<invalid>` in the past. */
export function shortHumanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.floor(hours / 24)}d`;
  return `${Math.floor(hours / 24 / 365)}y`;
}

/**
 * Rows aligned as Go's tabwriter with kubeadm's settings (minimum width 10, padding 3): every
 * column but the last is padded.
 */
export function alignColumns(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const r of rows)
    r.slice(0, -1).forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 10, c.length + 3);
    });
  return rows
    .map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i] ?? 10) : c)).join(''))
    .map((l) => `${l}\n`)
    .join('');
}

/** `svcadm token list`'s table (kubeadm's columns and placeholders). */
export function tokenTable(tokens: readonly BootstrapToken[], now: number): string {
  const rows = [['TOKEN', 'TTL', 'EXPIRES', 'USAGES', 'DESCRIPTION', 'EXTRA GROUPS']];
  for (const t of tokens) {
    const never = t.expires === undefined;
    const invalid = t.expires !== undefined && Number.isNaN(t.expires);
    rows.push([
      `${t.id}.${t.secret}`,
      never ? '<forever>' : invalid ? '<invalid>' : shortHumanDuration((t.expires ?? 0) - now),
      never ? '<never>' : invalid ? '<invalid>' : rfc3339(t.expires ?? 0),
      t.usages.join(',') || '<none>',
      t.description || '<none>',
      t.groups.join(',') || '<none>',
    ]);
  }
  return alignColumns(rows);
}
