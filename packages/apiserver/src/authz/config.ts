import { createHash } from 'node:crypto';
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';
import YAML from 'yaml';
import { group } from '@svc/api';
import { formatDuration, isDns1123Label, parseDuration } from '@svc/machinery';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';
import { counting, UnionAuthorizer, type DecisionRecorder } from './authorizer.js';
import { compileMatchCondition, WebhookAuthorizer, type FailurePolicy } from './webhook.js';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.js';

export const MAX_MATCH_CONDITIONS = 64;
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;
export const AUTHORIZATION_CONFIG_RELOAD_MS = 60_000;

export type AuthorizerType = 'Webhook' | 'Node' | 'RBAC';

export interface WebhookConfig {
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  timeoutMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  matchConditionSubjectAccessReviewVersion: 'v1';
  failurePolicy: FailurePolicy;
  kubeConfigFile: string;
  matchConditions: string[];
}

export interface AuthorizerConfig {
  type: AuthorizerType;
  name: string;
  webhook?: WebhookConfig;
}

/** A validated `AuthorizationConfiguration` (durations in milliseconds, defaults filled). */
export interface AuthorizationConfig {
  authorizers: AuthorizerConfig[];
}

/** The accepted `apiVersion`s (`apiserver.config.<suffix>/v1beta1`, and `v1` as Kubernetes 1.32 serves it). */
export function authorizationConfigApiVersions(): string[] {
  return [`${group('apiserver.config')}/v1beta1`, `${group('apiserver.config')}/v1`];
}

type Obj = Record<string, unknown>;

/**
 * Parses and validates an AuthorizationConfiguration (YAML or JSON). Throws one Error whose
 * message lists every field error on one line, Kubernetes-style
 * (`authorizers[0].webhook.timeout: Invalid value: "31s": must be no more than 30s`).
 */
export function parseAuthorizationConfig(text: string): AuthorizationConfig {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new Error(`invalid authorization config: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  const errs: string[] = [];
  const invalid = (path: string, value: unknown, detail: string): void => {
    errs.push(`${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`);
  };
  const required = (path: string): void => {
    errs.push(`${path}: Required value`);
  };
  const unsupported = (path: string, value: unknown, allowed: string[]): void => {
    errs.push(
      `${path}: Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    );
  };
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new Error('invalid authorization config: not an object');
  const d = doc as Obj;
  if (d.kind !== 'AuthorizationConfiguration' || !authorizationConfigApiVersions().includes(String(d.apiVersion))) {
    throw new Error(
      `invalid authorization config: expected apiVersion ${authorizationConfigApiVersions()[0]} and kind AuthorizationConfiguration, got ${JSON.stringify(d.apiVersion)} ${JSON.stringify(d.kind)}`,
    );
  }
  const list = d.authorizers;
  const out: AuthorizerConfig[] = [];
  if (!Array.isArray(list) || list.length === 0) required('authorizers');
  const seenNames = new Set<string>();
  const seenTypes = new Set<string>();
  const duration = (path: string, v: unknown, def: number | undefined): number | undefined => {
    if (v === undefined || v === null || v === '') {
      if (def === undefined) required(path);
      return def;
    }
    try {
      const ms = parseDuration(String(v));
      if (ms <= 0) {
        invalid(path, v, 'must be > 0');
        return undefined;
      }
      return ms;
    } catch {
      invalid(path, v, 'not a duration');
      return undefined;
    }
  };
  for (const [i, raw] of (Array.isArray(list) ? list : []).entries()) {
    const p = `authorizers[${i}]`;
    const a = (raw && typeof raw === 'object' ? raw : {}) as Obj;
    const type = a.type;
    if (type === undefined || type === '') required(`${p}.type`);
    else if (type !== 'Webhook' && type !== 'Node' && type !== 'RBAC')
      unsupported(`${p}.type`, type, ['Webhook', 'Node', 'RBAC']);
    else if (type !== 'Webhook' && seenTypes.has(type))
      errs.push(`${p}.type: Duplicate value: ${JSON.stringify(type)}`);
    else seenTypes.add(String(type));
    const name = a.name;
    if (typeof name !== 'string' || name === '') required(`${p}.name`);
    else {
      const bad = isDns1123Label(name);
      if (bad.length) invalid(`${p}.name`, name, bad.join('; '));
      else if (seenNames.has(name)) errs.push(`${p}.name: Duplicate value: ${JSON.stringify(name)}`);
      seenNames.add(name);
    }
    const w = a.webhook as Obj | undefined;
    if (type !== 'Webhook') {
      if (w !== undefined)
        errs.push(`${p}.webhook: Invalid value: "non-null": may only be specified when type=Webhook`);
      if (type === 'Node' || type === 'RBAC') out.push({ type, name: String(name) });
      continue;
    }
    if (!w || typeof w !== 'object') {
      required(`${p}.webhook`);
      continue;
    }
    const wp = `${p}.webhook`;
    const authorizedTtlMs = duration(`${wp}.authorizedTTL`, w.authorizedTTL, 300_000) ?? 0;
    const unauthorizedTtlMs = duration(`${wp}.unauthorizedTTL`, w.unauthorizedTTL, 30_000) ?? 0;
    const timeoutMs = duration(`${wp}.timeout`, w.timeout, undefined) ?? 0;
    if (timeoutMs > MAX_WEBHOOK_TIMEOUT_MS)
      invalid(`${wp}.timeout`, w.timeout, `must be no more than ${formatDuration(MAX_WEBHOOK_TIMEOUT_MS)}`);
    const sarv = w.subjectAccessReviewVersion;
    if (sarv === undefined || sarv === '') required(`${wp}.subjectAccessReviewVersion`);
    else if (sarv !== 'v1' && sarv !== 'v1beta1')
      unsupported(`${wp}.subjectAccessReviewVersion`, sarv, ['v1', 'v1beta1']);
    const mcv = w.matchConditionSubjectAccessReviewVersion;
    if (mcv === undefined || mcv === '') required(`${wp}.matchConditionSubjectAccessReviewVersion`);
    else if (mcv !== 'v1') unsupported(`${wp}.matchConditionSubjectAccessReviewVersion`, mcv, ['v1']);
    const fp = w.failurePolicy;
    if (fp === undefined || fp === '') required(`${wp}.failurePolicy`);
    else if (fp !== 'NoOpinion' && fp !== 'Deny') unsupported(`${wp}.failurePolicy`, fp, ['NoOpinion', 'Deny']);
    const ci = (w.connectionInfo ?? {}) as Obj;
    let kubeConfigFile = '';
    if (ci.type === undefined || ci.type === '') required(`${wp}.connectionInfo.type`);
    else if (ci.type === 'InClusterConfig') {
      invalid(
        `${wp}.connectionInfo.type`,
        ci.type,
        "InClusterConfig is not allowed for the API server's own authorization webhooks",
      );
    } else if (ci.type !== 'KubeConfigFile')
      unsupported(`${wp}.connectionInfo.type`, ci.type, ['KubeConfigFile', 'InClusterConfig']);
    else if (typeof ci.kubeConfigFile !== 'string' || ci.kubeConfigFile === '')
      required(`${wp}.connectionInfo.kubeConfigFile`);
    else if (!isAbsolute(ci.kubeConfigFile))
      invalid(`${wp}.connectionInfo.kubeConfigFile`, ci.kubeConfigFile, 'must be an absolute path');
    else if (!existsSync(ci.kubeConfigFile))
      invalid(`${wp}.connectionInfo.kubeConfigFile`, ci.kubeConfigFile, 'no such file');
    else kubeConfigFile = ci.kubeConfigFile;
    const mcs = w.matchConditions;
    const conditions: string[] = [];
    if (mcs !== undefined && mcs !== null) {
      if (!Array.isArray(mcs)) invalid(`${wp}.matchConditions`, mcs, 'must be a list');
      else {
        if (mcs.length > MAX_MATCH_CONDITIONS)
          errs.push(`${wp}.matchConditions: Too many: ${mcs.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
        for (const [j, mc] of mcs.entries()) {
          const expr = (mc as Obj | null)?.expression;
          const mp = `${wp}.matchConditions[${j}].expression`;
          if (typeof expr !== 'string' || expr.trim() === '') {
            required(mp);
            continue;
          }
          if (conditions.includes(expr)) {
            errs.push(`${mp}: Duplicate value: ${JSON.stringify(expr)}`);
            continue;
          }
          try {
            compileMatchCondition(expr);
          } catch (e) {
            invalid(mp, expr, (e as Error).message);
          }
          conditions.push(expr);
        }
      }
    }
    out.push({
      type: 'Webhook',
      name: String(name),
      webhook: {
        authorizedTtlMs,
        unauthorizedTtlMs,
        timeoutMs,
        kubeConfigFile,
        matchConditions: conditions,
        subjectAccessReviewVersion: sarv === 'v1' ? 'v1' : 'v1beta1',
        matchConditionSubjectAccessReviewVersion: 'v1',
        failurePolicy: fp === 'Deny' ? 'Deny' : 'NoOpinion',
      },
    });
  }
  if (errs.length) throw new Error(`invalid authorization config: ${errs.join(', ')}`);
  return { authorizers: out };
}

/** Builds the ordered authorizers of a config; Node and RBAC come from `builtin` (they keep their caches across reloads). */
export function authorizersOf(
  config: AuthorizationConfig,
  builtin: { Node?: Authorizer; RBAC?: Authorizer },
  record?: DecisionRecorder,
): Authorizer[] {
  return config.authorizers.map((a) => counting(authorizerOf(a, builtin), { type: a.type, name: a.name, record }));
}

function authorizerOf(
  a: AuthorizationConfig['authorizers'][number],
  builtin: { Node?: Authorizer; RBAC?: Authorizer },
): Authorizer {
  {
    if (a.type !== 'Webhook' || !a.webhook) {
      const b = builtin[a.type as 'Node' | 'RBAC'];
      if (!b) throw new Error(`authorizer type ${a.type} was not configured at start; restart to add it`);
      return b;
    }
    const w = a.webhook;
    return new WebhookAuthorizer({
      name: a.name,
      connection: loadWebhookKubeconfig(w.kubeConfigFile),
      version: w.subjectAccessReviewVersion,
      authorizedTtlMs: w.authorizedTtlMs,
      unauthorizedTtlMs: w.unauthorizedTtlMs,
      timeoutMs: w.timeoutMs,
      failurePolicy: w.failurePolicy,
      matchConditions: w.matchConditions,
    });
  }
}

/**
 * The authorizers of `--authorization-config`, in order (first allow or deny wins). The file
 * is read again when it changes and every `reloadMs`; a new config that does not parse,
 * validate or build is logged and the old one kept.
 */
export class ReloadingAuthorizer implements Authorizer {
  private chain: UnionAuthorizer;
  private hash: string;
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly o: {
      file: string;
      initial: { config: AuthorizationConfig; text: string };
      builtin: { Node?: Authorizer; RBAC?: Authorizer };
      onReload: (outcome: { ok: true } | { ok: false; error: string }) => void;
      /** Counts decisions per named authorizer. */
      record?: DecisionRecorder;
    },
  ) {
    this.chain = new UnionAuthorizer(authorizersOf(o.initial.config, o.builtin, o.record));
    this.hash = sha(o.initial.text);
  }

  authorize(a: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    return this.chain.authorize(a);
  }

  /** Reads the file again; a changed valid config replaces the chain. */
  reload(): void {
    let text: string;
    try {
      text = readFileSync(this.o.file, 'utf8');
    } catch (e) {
      this.o.onReload({ ok: false, error: (e as Error).message });
      return;
    }
    const h = sha(text);
    if (h === this.hash) return;
    try {
      this.chain = new UnionAuthorizer(authorizersOf(parseAuthorizationConfig(text), this.o.builtin, this.o.record));
      this.hash = h;
      this.o.onReload({ ok: true });
    } catch (e) {
      this.hash = h;
      this.o.onReload({ ok: false, error: (e as Error).message });
    }
  }

  /** Watches the file's directory (editors and config maps replace files) and polls every `reloadMs` until `signal` fires. */
  start(signal: AbortSignal, reloadMs = AUTHORIZATION_CONFIG_RELOAD_MS): void {
    if (this.timer) return;
    try {
      this.watcher = watch(dirname(this.o.file), (_event, name) => {
        if (!name || name === basename(this.o.file) || name.startsWith('..')) this.reload();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // Polling alone still reloads.
    }
    this.timer = setInterval(() => this.reload(), reloadMs);
    this.timer.unref();
    signal.addEventListener(
      'abort',
      () => {
        this.watcher?.close();
        clearInterval(this.timer);
      },
      { once: true },
    );
  }
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Reads and validates the file at start; throws an Error with one line on failure. */
export function loadAuthorizationConfigFile(path: string): { config: AuthorizationConfig; text: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error((e as Error).message, { cause: e });
  }
  return { config: parseAuthorizationConfig(text), text };
}
