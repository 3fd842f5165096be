import type { Registry } from 'prom-client';
import type { Logger } from '@svc/component-base';
import { ConfigurationError } from '../options.js';
import { ignoreErrors, pluginErrors, unionBackend, type AuditBackend, type PluginErrors } from './backend.js';
import { BufferedBackend } from './buffered.js';
import { LogBackend } from './log-backend.js';
import { RotatingFileWriter, stdoutWriter, type LineWriter } from './log-file.js';
import { AuditMetrics } from './metrics.js';
import type { AuditBatchOptions, AuditOptions, AuditTruncateOptions } from './options.js';
import { PolicyEvaluator } from './policy.js';
import { Auditor } from './request-audit.js';
import { TruncatingBackend } from './truncate.js';
import { WebhookBackend } from './webhook-backend.js';

/**
 * The auditor from the flags, as Kubernetes assembles it: each backend wrapped by its mode
 * (blocking: errors ignored; blocking-strict: errors fail the request; batch: buffered) and
 * then by truncation when enabled; the log and the webhook joined. Undefined when there is no
 * policy or no backend (nothing is audited then). The metrics are registered either way. A log
 * file that cannot be opened is a `ConfigurationError` (exit 2).
 */
export function buildAuditor(o: AuditOptions, d: { registry: Registry; log: Logger }): Auditor | undefined {
  const metrics = new AuditMetrics(d.registry);
  const errors = pluginErrors(metrics, d.log);
  for (const w of o.policyWarnings) d.log.warn('audit policy contains errors, read leniently', { warning: w });
  const wanted = o.log.path !== undefined || o.webhook.target !== undefined;
  if (!o.policy) {
    if (wanted) d.log.info('no audit policy file given: no audit events are recorded');
    return undefined;
  }
  const backends: AuditBackend[] = [];
  if (o.log.path !== undefined) {
    const l = o.log;
    const log = new LogBackend(logWriter(o, d.log), { format: l.format, apiVersion: l.version, errors });
    backends.push(wrap(log, { batch: l.batch, truncate: l.truncate, apiVersion: l.version, errors, async: false }));
  }
  if (o.webhook.target) {
    const w = o.webhook;
    const hook = new WebhookBackend({
      target: w.target as NonNullable<typeof w.target>,
      apiVersion: w.version,
      initialBackoffMs: w.initialBackoffMs,
      errors,
    });
    backends.push(wrap(hook, { batch: w.batch, truncate: w.truncate, apiVersion: w.version, errors, async: true }));
  }
  if (backends.length === 0) return undefined;
  const backend = unionBackend(backends);
  d.log.info('audit backend', { backend: backend.name });
  return new Auditor({ policy: new PolicyEvaluator(o.policy), backend, metrics });
}

function logWriter(o: AuditOptions, log: Logger): LineWriter {
  const l = o.log;
  if (l.path === '-') return stdoutWriter();
  try {
    return new RotatingFileWriter({
      path: l.path as string,
      maxSizeMb: l.maxSizeMb,
      maxBackups: l.maxBackups,
      maxAgeDays: l.maxAgeDays,
      compress: l.compress,
      log,
    });
  } catch (e) {
    throw new ConfigurationError(`--audit-log-path: ensureLogFile: ${(e as Error).message}`);
  }
}

function wrap(
  delegate: AuditBackend,
  w: {
    batch: AuditBatchOptions;
    truncate: AuditTruncateOptions;
    apiVersion: string;
    errors: PluginErrors;
    async: boolean;
  },
): AuditBackend {
  const b = w.batch;
  let backend: AuditBackend;
  if (b.mode === 'blocking-strict') backend = delegate;
  else if (b.mode === 'blocking') backend = ignoreErrors(delegate);
  else
    backend = new BufferedBackend(
      delegate,
      {
        bufferSize: b.bufferSize,
        maxBatchSize: b.maxBatchSize,
        maxBatchWaitMs: b.maxBatchWaitMs,
        throttle: b.throttleEnable ? { qps: b.throttleQps, burst: b.throttleBurst } : undefined,
        asyncDelegate: w.async,
      },
      w.errors,
    );
  if (!w.truncate.enabled) return backend;
  return new TruncatingBackend(
    backend,
    { maxEventSize: w.truncate.maxEventSize, maxBatchSize: w.truncate.maxBatchSize, apiVersion: w.apiVersion },
    w.errors,
  );
}
