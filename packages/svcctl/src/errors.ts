import type { Status } from '@svc/api/types';

/**
 * An error svcctl reports itself: printed as kubectl prints its own (`error: <message>`
 * unless the message is already complete) with `exitCode`.
 */
export class CliError extends Error {
  /** What to print on standard output before the error (a template's partial output and debugging text). */
  stdout?: string;

  constructor(
    message: string,
    readonly exitCode = 1,
    /** Print the message as it is, without the `error: ` prefix. */
    readonly verbatim = false,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The wire Status an error carries (a `StatusError` of @svc/api), if any. */
export function statusOf(e: unknown): Status | undefined {
  if (e && typeof e === 'object' && 'status' in e) {
    const s = (e as { status: unknown }).status;
    if (s && typeof s === 'object' && (s as Status).kind === 'Status') return s as Status;
  }
  return undefined;
}

/** kubectl's message for the causes of an Invalid answer: one line, or a bulleted list. */
function causesMessage(prefix: string, status: Status): string {
  const seen = new Set<string>();
  for (const c of status.details?.causes ?? []) seen.add(`${c.field ?? ''}: ${c.message ?? ''}`);
  const msgs = [...seen];
  if (msgs.length === 0) return prefix.replace(/: $/, '');
  if (msgs.length === 1) return `${prefix}${msgs[0]}`;
  return `${prefix}\n${msgs.map((m) => `* ${m}`).join('\n')}`;
}

/** The text kubectl prints for a failed server answer (cmdutil.CheckErr / StandardErrorMessage). */
export function statusMessage(s: Status): string {
  if (s.reason === 'Invalid' && !s.details) return `The request is invalid: ${s.message ?? ''}`;
  if (s.reason === 'Invalid' && s.details) {
    const d = s.details;
    let prefix = 'The request is invalid';
    if (d.kind || d.name) prefix = `The ${d.kind ?? ''} ${JSON.stringify(d.name ?? '')} is invalid`;
    return causesMessage(`${prefix}: `, s);
  }
  if (s.reason === 'Unauthorized') return `error: You must be logged in to the server (${s.message ?? 'Unauthorized'})`;
  if (s.reason) return `Error from server (${s.reason}): ${s.message ?? ''}`;
  return `Error from server: ${s.message ?? ''}`;
}

/** A server Status whose message says where it came from (kubectl's AddSourceToErr). */
export function withSource(e: unknown, o: { verb: string; source: string }): unknown {
  const s = statusOf(e);
  if (!o.source) return e;
  if (s) return { status: { ...s, message: `error when ${o.verb} ${JSON.stringify(o.source)}: ${s.message ?? ''}` } };
  if (e instanceof CliError) return e;
  return new CliError(`error when ${o.verb} ${JSON.stringify(o.source)}: ${(e as Error).message}`);
}

/** What to print for any error, and the exit code. */
export function describeError(e: unknown): { text: string; code: number } {
  if (e instanceof CliError) {
    const t = e.verbatim || e.message.startsWith('error: ') ? e.message : `error: ${e.message}`;
    return { text: t, code: e.exitCode };
  }
  const s = statusOf(e);
  if (s) return { text: statusMessage(s), code: 1 };
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  if (err && err.code === 'ECONNREFUSED') {
    const host = err.address && err.port ? `${err.address}:${err.port}` : 'localhost';
    return {
      text: `The connection to the server ${host} was refused - did you specify the right host or port?`,
      code: 1,
    };
  }
  if (
    err &&
    typeof err.code === 'string' &&
    /^(ENOTFOUND|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|CERT_|UNABLE_|DEPTH_|SELF_SIGNED)/.test(err.code)
  ) {
    return { text: `Unable to connect to the server: ${err.message}`, code: 1 };
  }
  const msg = e instanceof Error ? e.message : String(e);
  return { text: msg.startsWith('error: ') ? msg : `error: ${msg}`, code: 1 };
}
