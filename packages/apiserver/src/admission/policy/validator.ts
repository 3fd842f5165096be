/**
 * One evaluation of a compiled policy (one binding, one param), as Kubernetes' validator:
 * matchConditions first (any false: the policy does not apply; errors: a failure under
 * `Fail`, no match under `Ignore`), then every validation (a decision each: admit, deny with
 * the rule's reason and message, or an error handled by the failure policy), then the audit
 * annotations (a string is published, null or blank is not, anything else is an error).
 */
import type { CompiledExpression } from './compile.js';
import { evaluationErrorText } from './compile.js';
import type { CompiledPolicy } from './compiled-policy.js';

export interface PolicyDecision {
  action: 'admit' | 'deny';
  evaluation: 'admit' | 'deny' | 'error';
  message: string;
  reason?: string;
}

export interface AuditAnnotationResult {
  key: string;
  action: 'publish' | 'error' | 'exclude';
  value?: string;
  error?: string;
}

export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationResult[];
}

/** Kubernetes' limit on a messageExpression's result. */
const MAX_MESSAGE_BYTES = 5 * 1024;

type Outcome = { value: unknown } | { error: string };

/** Evaluates one expression: its value, or Kubernetes' error detail. */
export async function run(e: CompiledExpression, ctx: Record<string, unknown>): Promise<Outcome> {
  if (e.error !== undefined) return { error: `compilation error: ${e.error}` };
  if (!e.program) return { error: 'unexpected internal error compiling expression' };
  try {
    return { value: await e.program(ctx) };
  } catch (err) {
    return { error: `expression '${e.expression}' resulted in error: ${evaluationErrorText(err)}` };
  }
}

function actionForError(failurePolicy: string): 'admit' | 'deny' {
  return failurePolicy === 'Ignore' ? 'admit' : 'deny';
}

/** The matchConditions' verdict: true (apply), false (skip), or an error message. */
async function matchConditions(p: CompiledPolicy, ctx: Record<string, unknown>): Promise<boolean | string> {
  if (p.matchConditions.length === 0) return true;
  const outcomes = await Promise.all(p.matchConditions.map((m) => run(m.expression, ctx)));
  const errors: string[] = [];
  for (const o of outcomes) {
    if ('error' in o) errors.push(o.error);
    else if (o.value === false) return false;
  }
  if (errors.length === 0) return true;
  if (p.failurePolicy === 'Ignore') return false;
  return errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`;
}

async function messageOf(v: CompiledPolicy['validations'][number], ctx: Record<string, unknown>): Promise<string> {
  let message = '';
  if (v.messageExpression) {
    const m = await run(v.messageExpression, ctx);
    if ('value' in m && typeof m.value === 'string') {
      message = m.value.trim();
      if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
    }
  }
  if (message === '' && v.message) message = v.message.trim();
  if (message === '') message = `failed expression: ${v.expression.expression.trim()}`;
  return message;
}

async function auditAnnotation(
  a: CompiledPolicy['auditAnnotations'][number],
  o: { ctx: Record<string, unknown>; failurePolicy: string },
): Promise<AuditAnnotationResult> {
  const r = await run(a.expression, o.ctx);
  if ('error' in r) return { key: a.key, action: o.failurePolicy === 'Ignore' ? 'exclude' : 'error', error: r.error };
  if (r.value === null) return { key: a.key, action: 'exclude' };
  if (typeof r.value === 'string') {
    const value = r.value.trim();
    return value === '' ? { key: a.key, action: 'exclude' } : { key: a.key, action: 'publish', value };
  }
  return {
    key: a.key,
    action: 'error',
    error: `valueExpression '${a.expression.expression}' resulted in unsupported return type: ${celTypeOf(r.value)}. Return type must be either string or null.`,
  };
}

function celTypeOf(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  return typeof v === 'object' ? 'map' : typeof v;
}

/** Kubernetes' validator.Validate over one activation. */
export async function validate(p: CompiledPolicy, ctx: Record<string, unknown>): Promise<ValidateResult> {
  const matched = await matchConditions(p, ctx);
  if (matched === false) return { decisions: [], auditAnnotations: [] };
  if (typeof matched === 'string') {
    const decision: PolicyDecision = { action: actionForError(p.failurePolicy), evaluation: 'error', message: matched };
    return { decisions: [decision], auditAnnotations: [] };
  }
  const decisions = await Promise.all(
    p.validations.map(async (v): Promise<PolicyDecision> => {
      const r = await run(v.expression, ctx);
      if ('error' in r) return { action: actionForError(p.failurePolicy), evaluation: 'error', message: r.error };
      if (r.value === true) return { action: 'admit', evaluation: 'admit', message: '' };
      return { action: 'deny', evaluation: 'deny', reason: v.reason ?? 'Invalid', message: await messageOf(v, ctx) };
    }),
  );
  const auditAnnotations = await Promise.all(
    p.auditAnnotations.map((a) => auditAnnotation(a, { ctx, failurePolicy: p.failurePolicy })),
  );
  return { decisions, auditAnnotations };
}
