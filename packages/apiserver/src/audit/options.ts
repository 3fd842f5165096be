import { InvalidArgumentError, Option, type Command } from 'commander';
import { NAMINGS, type AuditPolicy, type NamingScheme } from '@svc/api';
import { boolOption, durationArg, durationOption, intArg } from '@svc/component-base';
import { loadWebhookKubeconfig, type WebhookTarget } from '../webhook/kubeconfig.js';
import { AUDIT_LOG_FORMATS, type AuditLogFormat } from './log-backend.js';
import { loadPolicyFile } from './policy.js';

export type AuditMode = 'batch' | 'blocking' | 'blocking-strict';
export const AUDIT_MODES: readonly AuditMode[] = ['batch', 'blocking', 'blocking-strict'];

export interface AuditBatchOptions {
  mode: AuditMode;
  bufferSize: number;
  maxBatchSize: number;
  maxBatchWaitMs: number;
  throttleEnable: boolean;
  throttleQps: number;
  throttleBurst: number;
}

export interface AuditTruncateOptions {
  enabled: boolean;
  maxBatchSize: number;
  maxEventSize: number;
}

export interface AuditLogOptions {
  /** Absent: no log backend; `-`: standard output. */
  path?: string;
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMb: number;
  format: AuditLogFormat;
  compress: boolean;
  batch: AuditBatchOptions;
  truncate: AuditTruncateOptions;
  /** The events' apiVersion: `audit.<suffix>/v1`. */
  version: string;
}

export interface AuditWebhookOptions {
  /** Absent: no webhook backend. */
  configFile?: string;
  /** The file's server and credentials, read at start. */
  target?: WebhookTarget;
  initialBackoffMs: number;
  batch: AuditBatchOptions;
  truncate: AuditTruncateOptions;
  version: string;
}

/** The `--audit-*` flags, validated; the policy file read and checked. */
export interface AuditOptions {
  policyFile?: string;
  policy?: AuditPolicy;
  /** What the lenient reading of the policy ignored (unknown fields), to be logged at start. */
  policyWarnings: string[];
  log: AuditLogOptions;
  webhook: AuditWebhookOptions;
}

/** Kubernetes' defaults: the webhook batches 400 events, waits up to 30 s, and sends at most 10 batches a second (15 at once). */
const WEBHOOK_BATCH = { bufferSize: 10_000, maxSize: 400, maxWaitMs: 30_000, throttle: true, qps: 10, burst: 15 };
/** The log writes events one by one, unthrottled, in batch mode. */
const LOG_BATCH = { bufferSize: 10_000, maxSize: 1, maxWaitMs: 0, throttle: false, qps: 0, burst: 0 };
const TRUNCATE = { maxBatchSize: 10 * 1024 * 1024, maxEventSize: 100 * 1024 };
const WEBHOOK_INITIAL_BACKOFF_MS = 10_000;

function floatArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || Number.isNaN(n))
    throw new InvalidArgumentError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

function auditVersion(scheme: NamingScheme): string {
  return `audit.${NAMINGS[scheme].groupSuffix}/v1`;
}

function batchFlags(cmd: Command, f: { plugin: 'log' | 'webhook'; d: typeof WEBHOOK_BATCH; mode: AuditMode }): void {
  const { plugin, d, mode } = f;
  const p = `--audit-${plugin}`;
  cmd
    .addOption(
      new Option(
        `${p}-mode <mode>`,
        `How events reach the ${plugin} backend: blocking (the request waits for each event), blocking-strict (as blocking, and a request whose first event cannot be recorded fails), or batch (events are queued and written in the background).`,
      ).default(mode),
    )
    .addOption(
      new Option(
        `${p}-batch-buffer-size <n>`,
        'Batch mode: how many events may wait to be sent; more are lost (and counted).',
      )
        .default(d.bufferSize)
        .argParser(intArg),
    )
    .addOption(
      new Option(`${p}-batch-max-size <n>`, 'Batch mode: the most events sent in one batch.')
        .default(d.maxSize)
        .argParser(intArg),
    )
    .addOption(
      durationOption(
        `${p}-batch-max-wait`,
        'Batch mode: how long a batch below the maximum size waits for more events before it is sent.',
        d.maxWaitMs,
      ),
    )
    .addOption(
      boolOption(`${p}-batch-throttle-enable`, 'Batch mode: limit how many batches are sent a second.', d.throttle),
    )
    .addOption(
      new Option(`${p}-batch-throttle-qps <qps>`, 'Batch mode: the average number of batches a second when throttled.')
        .default(d.qps)
        .argParser(floatArg),
    )
    .addOption(
      new Option(
        `${p}-batch-throttle-burst <n>`,
        'Batch mode: how many batches may go at once when throttled and idle before.',
      )
        .default(d.burst)
        .argParser(intArg),
    )
    .addOption(
      boolOption(
        `${p}-truncate-enabled`,
        'Truncate events and split batches that are larger than the limits below.',
        false,
      ),
    )
    .addOption(
      new Option(
        `${p}-truncate-max-batch-size <bytes>`,
        'The largest batch handed to the backend; larger ones are split (the request sent may be a few hundred bytes larger).',
      )
        .default(TRUNCATE.maxBatchSize)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        `${p}-truncate-max-event-size <bytes>`,
        'The largest event handed to the backend: a larger one loses its request and response objects, and is dropped (and counted) when still too large.',
      )
        .default(TRUNCATE.maxEventSize)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        `${p}-version <group/version>`,
        `The group and version the ${plugin} backend writes events in. (default: "${auditVersion('svc')}"; "${auditVersion('kubernetes')}" with --naming=kubernetes)`,
      ),
    );
}

/** Adds the `--audit-*` flags (Kubernetes' names and defaults). */
export function withAuditFlags(cmd: Command): Command {
  cmd
    .addOption(
      new Option(
        '--audit-policy-file <file>',
        'The audit policy (YAML or JSON): which requests are recorded, and how much of them.',
      ),
    )
    .addOption(
      new Option(
        '--audit-log-path <file>',
        'Record audit events in this file (rotated by size); "-" writes them to standard output. No file: no log backend.',
      ),
    )
    .addOption(
      new Option(
        '--audit-log-maxage <days>',
        'Delete rotated audit log files older than this many days (by the time in their name); 0 keeps them.',
      )
        .default(0)
        .argParser(intArg),
    )
    .addOption(
      new Option('--audit-log-maxbackup <n>', 'Keep at most this many rotated audit log files; 0 keeps all.')
        .default(0)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--audit-log-maxsize <megabytes>',
        'Rotate the audit log file before it grows past this size (0: 100 megabytes).',
      )
        .default(0)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--audit-log-format <format>',
        `How events are written: json (one JSON event a line) or legacy (one line of text an event). Known formats: ${AUDIT_LOG_FORMATS.join(',')}.`,
      ).default('json'),
    )
    .addOption(boolOption('--audit-log-compress', 'Gzip rotated audit log files.', false));
  batchFlags(cmd, { plugin: 'log', d: LOG_BATCH, mode: 'blocking' });
  cmd
    .addOption(
      new Option(
        '--audit-webhook-config-file <file>',
        'Send audit events to the server named in this kubeconfig-format file. No file: no webhook backend.',
      ),
    )
    .addOption(
      durationOption(
        '--audit-webhook-initial-backoff',
        'How long to wait before retrying a batch the webhook did not take; each later wait is longer.',
        WEBHOOK_INITIAL_BACKOFF_MS,
      ),
    )
    .addOption(
      new Option('--audit-webhook-batch-initial-backoff <duration>', 'Deprecated: use --audit-webhook-initial-backoff.')
        .argParser(durationArg)
        .hideHelp(),
    );
  batchFlags(cmd, { plugin: 'webhook', d: WEBHOOK_BATCH, mode: 'batch' });
  return cmd;
}

/** The parsed `--audit-*` flags, checked as Kubernetes checks them (only for a backend that is on); `fail` ends parsing with one line. */
export function auditOptions(a: {
  o: Record<string, unknown>;
  scheme: NamingScheme;
  fail: (msg: string) => never;
}): AuditOptions {
  const { o, fail } = a;
  const version = auditVersion(a.scheme);
  const batch = (p: 'Log' | 'Webhook'): AuditBatchOptions => ({
    mode: o[`audit${p}Mode`] as AuditMode,
    bufferSize: o[`audit${p}BatchBufferSize`] as number,
    maxBatchSize: o[`audit${p}BatchMaxSize`] as number,
    maxBatchWaitMs: o[`audit${p}BatchMaxWait`] as number,
    throttleEnable: o[`audit${p}BatchThrottleEnable`] as boolean,
    throttleQps: o[`audit${p}BatchThrottleQps`] as number,
    throttleBurst: o[`audit${p}BatchThrottleBurst`] as number,
  });
  const truncate = (p: 'Log' | 'Webhook'): AuditTruncateOptions => ({
    enabled: o[`audit${p}TruncateEnabled`] as boolean,
    maxBatchSize: o[`audit${p}TruncateMaxBatchSize`] as number,
    maxEventSize: o[`audit${p}TruncateMaxEventSize`] as number,
  });
  const log: AuditLogOptions = {
    path: (o.auditLogPath as string | undefined) || undefined,
    maxAgeDays: o.auditLogMaxage as number,
    maxBackups: o.auditLogMaxbackup as number,
    maxSizeMb: o.auditLogMaxsize as number,
    format: o.auditLogFormat as AuditLogFormat,
    compress: o.auditLogCompress as boolean,
    batch: batch('Log'),
    truncate: truncate('Log'),
    version: (o.auditLogVersion as string | undefined) ?? version,
  };
  const webhook: AuditWebhookOptions = {
    configFile: (o.auditWebhookConfigFile as string | undefined) || undefined,
    initialBackoffMs:
      (o.auditWebhookBatchInitialBackoff as number | undefined) ?? (o.auditWebhookInitialBackoff as number),
    batch: batch('Webhook'),
    truncate: truncate('Webhook'),
    version: (o.auditWebhookVersion as string | undefined) ?? version,
  };
  if (log.path !== undefined) {
    checkBackend({
      plugin: 'log',
      batch: log.batch,
      truncate: log.truncate,
      version: log.version,
      known: version,
      fail,
    });
    if (!AUDIT_LOG_FORMATS.includes(log.format))
      fail(
        `invalid audit log format ${log.format}, allowed formats are ${JSON.stringify(AUDIT_LOG_FORMATS.join(','))}`,
      );
    if (log.maxAgeDays < 0) fail(`--audit-log-maxage ${log.maxAgeDays} can't be a negative number`);
    if (log.maxBackups < 0) fail(`--audit-log-maxbackup ${log.maxBackups} can't be a negative number`);
    if (log.maxSizeMb < 0) fail(`--audit-log-maxsize ${log.maxSizeMb} can't be a negative number`);
  }
  if (webhook.configFile !== undefined) {
    const w = webhook;
    checkBackend({ plugin: 'webhook', batch: w.batch, truncate: w.truncate, version: w.version, known: version, fail });
    if (w.initialBackoffMs < 0) fail('--audit-webhook-initial-backoff must not be negative');
    try {
      w.target = loadWebhookKubeconfig(w.configFile as string);
    } catch (e) {
      fail(`--audit-webhook-config-file: initializing audit webhook: ${(e as Error).message.split('\n')[0] ?? ''}`);
    }
  }
  const policyFile = (o.auditPolicyFile as string | undefined) || undefined;
  let policy: AuditPolicy | undefined;
  let policyWarnings: string[] = [];
  if (policyFile !== undefined) {
    try {
      ({ policy, warnings: policyWarnings } = loadPolicyFile(policyFile, { apiVersions: policyVersions(a.scheme) }));
    } catch (e) {
      fail(`--audit-policy-file: loading audit policy file: ${(e as Error).message.split('\n')[0] ?? ''}`);
    }
  }
  return { policyFile, policy, policyWarnings, log, webhook };
}

/** Policy files may be written for this naming, or (under the default naming) for Kubernetes as stock tools write them. */
function policyVersions(scheme: NamingScheme): string[] {
  return scheme === 'svc' ? [auditVersion('svc'), auditVersion('kubernetes')] : [auditVersion(scheme)];
}

function checkBackend(c: {
  plugin: 'log' | 'webhook';
  batch: AuditBatchOptions;
  truncate: AuditTruncateOptions;
  version: string;
  known: string;
  fail: (msg: string) => never;
}): void {
  const { plugin, batch: b, truncate: t, fail } = c;
  if (!AUDIT_MODES.includes(b.mode))
    fail(`invalid audit ${plugin} mode ${b.mode}, allowed modes are ${JSON.stringify(AUDIT_MODES.join(','))}`);
  if (b.mode === 'batch') {
    if (b.bufferSize <= 0) fail(`invalid audit batch ${plugin} buffer size ${b.bufferSize}, must be a positive number`);
    if (b.maxBatchSize <= 0)
      fail(`invalid audit batch ${plugin} max batch size ${b.maxBatchSize}, must be a positive number`);
    if (b.maxBatchWaitMs < 0) fail(`invalid audit batch ${plugin} max wait, must not be negative`);
    if (b.throttleEnable && b.throttleQps <= 0)
      fail(`invalid audit batch ${plugin} throttle QPS ${b.throttleQps}, must be a positive number`);
    if (b.throttleEnable && b.throttleBurst <= 0)
      fail(`invalid audit batch ${plugin} throttle burst ${b.throttleBurst}, must be a positive number`);
  }
  if (t.maxEventSize <= 0)
    fail(`invalid audit truncate ${plugin} max event size ${t.maxEventSize}, must be a positive number`);
  if (t.maxBatchSize < t.maxEventSize)
    fail(
      `invalid audit truncate ${plugin} max batch size ${t.maxBatchSize}, must be greater than max event size (${t.maxEventSize})`,
    );
  if (c.version !== c.known)
    fail(`--audit-${plugin}-version: invalid group version, allowed versions are ${JSON.stringify([c.known])}`);
}
