import { randomBytes } from 'node:crypto';
import type { HttpResponse } from './https-client.js';

/** A JSON object whose shape the test does not spell out. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

/** The wire `Status` of a failed request. */
export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  message?: string;
  reason?: string;
  code: number;
  details?: {
    name?: string;
    kind?: string;
    group?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

export const MEDIA = {
  MERGE: 'application/merge-patch+json',
  SMP: 'application/strategic-merge-patch+json',
  JSON_PATCH: 'application/json-patch+json',
  APPLY: 'application/apply-patch+yaml',
} as const;

let seq = 0;

/** A name no other test uses: `<prefix>-<n>-<random>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${++seq}-${randomBytes(3).toString('hex')}`;
}

/** Requires `code` and returns the body as JSON (empty object for an empty body). */
export function expectCode(res: Pick<HttpResponse, 'status' | 'text' | 'json'>, code: number): Json {
  if (res.status !== code) throw new Error(`expected HTTP ${code}, got ${res.status}: ${res.text}`);
  return res.text ? res.json<Json>() : {};
}

/** The failure `Status` a response must carry: its code and reason, and its message when given. */
export interface ExpectedFailure {
  code: number;
  reason: string;
  /** The whole message, or a pattern it must match. */
  message?: string | RegExp | undefined;
}

/** Requires a failure `Status` with `code` and `reason` (and the message, when given). */
export function expectFailure(
  res: Pick<HttpResponse, 'status' | 'text' | 'json'>,
  { code, reason, message }: ExpectedFailure,
): StatusBody {
  if (res.status !== code) throw new Error(`expected HTTP ${code} ${reason}, got ${res.status}: ${res.text}`);
  const s = res.json<StatusBody>();
  expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
  if (typeof message === 'string') expect(s.message).toBe(message);
  else if (message) expect(s.message).toMatch(message);
  return s;
}
