import { batchKey, fieldErrors, type ApiObject, type CronJob, type FieldError, type Job, type JobSpec } from '@svc/api';
import {
  isKnownTimeZone,
  labelSelectorFromObject,
  parseCronSchedule,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  type LabelSelector,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { deepEqual } from '../object-utils.js';
import { defaultPodSpec, validatePodSpec, type PodSpec } from './pod.js';

/** Kubernetes' limits on Indexed Jobs (maxParallelismForIndexedJob, maxCompletionsForIndexedJob...). */
const MAX_INDEXED = 100_000;
/** Above this many completions a Job with backoffLimitPerIndex needs maxFailedIndexes and tighter limits. */
const COMPLETIONS_SOFT_LIMIT = 100_000;
const HIGH_COMPLETIONS_LIMIT = 10_000;
/** Kubernetes' maxSuccessPolicyRule and maxJobSuccessPolicySucceededIndexesLimit. */
const MAX_SUCCESS_POLICY_RULES = 20;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;
/** A CronJob's name leaves room for the 11-character suffix of its Jobs' names. */
const MAX_CRONJOB_NAME = 52;
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

const jobOf = (o: ApiObject): Job => o as Job;
const cronJobOf = (o: ApiObject): CronJob => o as CronJob;

function nonNegative(path: string, v: number | undefined): FieldError[] {
  return v !== undefined && v < 0 ? [fieldErrors.invalid(path, v, 'must be greater than or equal to 0')] : [];
}

/** Kubernetes' SetDefaults_Job (batch/v1, 1.32): on the spec of a Job, not of a CronJob's template. */
function defaultJobSpec(s: JobSpec): void {
  if (s.completions === undefined && s.parallelism === undefined) {
    s.completions = 1;
    s.parallelism = 1;
  }
  s.parallelism ??= 1;
  s.backoffLimit ??= s.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  s.completionMode ??= 'NonIndexed';
  s.suspend ??= false;
  for (const rule of s.podFailurePolicy?.rules ?? [])
    for (const pattern of rule.onPodConditions ?? []) pattern.status ??= 'True';
  s.podReplacementPolicy ??= s.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
}

function defaultTemplate(s: JobSpec): void {
  const template = (s.template ??= {} as JobSpec['template']);
  defaultPodSpec((template.spec ??= {} as JobSpec['template']['spec']) as PodSpec);
}

function defaultJob(obj: ApiObject): void {
  const job = jobOf(obj);
  const s = (job.spec ??= {} as JobSpec);
  defaultJobSpec(s);
  defaultTemplate(s);
  const labels = s.template.metadata?.labels;
  if (labels && Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...labels };
}

/**
 * Kubernetes' generateSelector: unless `manualSelector`, the pods get `controller-uid` and `job-name`
 * labels (the prefixed and the unprefixed keys; labels already there are left for validation to
 * judge) and the selector matches the prefixed uid label.
 */
function generateSelector(job: Job): void {
  if (job.spec.manualSelector === true) return;
  const template = (job.spec.template ??= {} as JobSpec['template']);
  const meta = (template.metadata ??= {});
  const labels = (meta.labels ??= {});
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const key of ['job-name', batchKey('job-name')]) labels[key] ??= name;
  for (const key of ['controller-uid', batchKey('controller-uid')]) labels[key] ??= uid;
  const selector = (job.spec.selector ??= {});
  const matchLabels = (selector.matchLabels ??= {});
  matchLabels[batchKey('controller-uid')] ??= uid;
}

/** Kubernetes' validateJobSpec: what a Job and a CronJob's Job template share. */
function validateJobSpec(s: JobSpec, path: string): FieldError[] {
  const errs = [
    ...nonNegative(`${path}.parallelism`, s.parallelism),
    ...nonNegative(`${path}.completions`, s.completions),
    ...nonNegative(`${path}.activeDeadlineSeconds`, s.activeDeadlineSeconds),
    ...nonNegative(`${path}.backoffLimit`, s.backoffLimit),
    ...nonNegative(`${path}.ttlSecondsAfterFinished`, s.ttlSecondsAfterFinished),
    ...nonNegative(`${path}.backoffLimitPerIndex`, s.backoffLimitPerIndex),
    ...nonNegative(`${path}.maxFailedIndexes`, s.maxFailedIndexes),
  ];
  if (s.maxFailedIndexes !== undefined && s.backoffLimitPerIndex === undefined)
    errs.push(fieldErrors.required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  if (s.activeDeadlineSeconds === 0)
    errs.push(fieldErrors.invalid(`${path}.activeDeadlineSeconds`, 0, 'must be greater than 0'));
  const mode = s.completionMode;
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed')
    errs.push(fieldErrors.notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed') {
    if (s.completions === undefined)
      errs.push(fieldErrors.required(`${path}.completions`, 'when completion mode is Indexed'));
    else if (s.completions > MAX_INDEXED)
      errs.push(
        fieldErrors.invalid(`${path}.completions`, s.completions, `must be less than or equal to ${MAX_INDEXED}`),
      );
    if ((s.parallelism ?? 0) > MAX_INDEXED)
      errs.push(
        fieldErrors.invalid(
          `${path}.parallelism`,
          s.parallelism,
          `must be less than or equal to ${MAX_INDEXED} when completion mode is Indexed`,
        ),
      );
    errs.push(...validateFailedIndexLimits(s, path));
  } else {
    for (const field of ['backoffLimitPerIndex', 'maxFailedIndexes'] as const)
      if (s[field] !== undefined)
        errs.push(fieldErrors.invalid(`${path}.${field}`, s[field], 'requires indexed completion mode'));
  }
  if (s.successPolicy) {
    if (mode !== 'Indexed')
      errs.push(fieldErrors.invalid(`${path}.successPolicy`, s.successPolicy, 'requires indexed completion mode'));
    else errs.push(...validateSuccessPolicy(s, `${path}.successPolicy`));
  }
  const replacement = s.podReplacementPolicy;
  if (replacement !== undefined && replacement !== 'TerminatingOrFailed' && replacement !== 'Failed')
    errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, replacement, ['Failed', 'TerminatingOrFailed']));
  if (s.podFailurePolicy) {
    errs.push(...validatePodFailurePolicy(s, `${path}.podFailurePolicy`));
    if (replacement !== undefined && replacement !== 'Failed')
      errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, replacement, ['Failed']));
  }
  const t = s.template ?? {};
  errs.push(
    ...validateLabels(t.metadata?.labels ?? {}, `${path}.template.metadata.labels`),
    ...validateAnnotations(t.metadata?.annotations ?? {}, `${path}.template.metadata.annotations`),
  );
  const pod = (t.spec ?? {}) as PodSpec;
  errs.push(...validatePodSpec(pod, `${path}.template.spec`));
  const restart = pod.restartPolicy ?? '';
  if (restart !== 'OnFailure' && restart !== 'Never')
    errs.push(fieldErrors.notSupported(`${path}.template.spec.restartPolicy`, restart, ['OnFailure', 'Never']));
  else if (s.podFailurePolicy && restart !== 'Never')
    errs.push(
      fieldErrors.invalid(
        `${path}.template.spec.restartPolicy`,
        restart,
        'only "Never" is supported when podFailurePolicy is specified',
      ),
    );
  return errs;
}

/** Kubernetes' limits on maxFailedIndexes (and on parallelism for very many completions with backoffLimitPerIndex). */
function validateFailedIndexLimits(s: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const max = s.maxFailedIndexes;
  if (s.completions !== undefined && max !== undefined && max > s.completions)
    errs.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, max, 'must be less than or equal to completions'));
  if (max !== undefined && max > MAX_INDEXED)
    errs.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, max, `must be less than or equal to ${MAX_INDEXED}`));
  if ((s.completions ?? 0) > COMPLETIONS_SOFT_LIMIT && s.backoffLimitPerIndex !== undefined) {
    const high = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
    if (max === undefined)
      errs.push(
        fieldErrors.required(
          `${path}.maxFailedIndexes`,
          `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`,
        ),
      );
    if ((s.parallelism ?? 0) > HIGH_COMPLETIONS_LIMIT)
      errs.push(
        fieldErrors.invalid(
          `${path}.parallelism`,
          s.parallelism,
          `must be less than or equal to ${HIGH_COMPLETIONS_LIMIT} ${high}`,
        ),
      );
    if (max !== undefined && max > HIGH_COMPLETIONS_LIMIT)
      errs.push(
        fieldErrors.invalid(
          `${path}.maxFailedIndexes`,
          max,
          `must be less than or equal to ${HIGH_COMPLETIONS_LIMIT} ${high}`,
        ),
      );
  }
  return errs;
}

/** Kubernetes' parseIndexInterval: `x` or `x-y` (x < y), each below `completions`; throws with Kubernetes' message. */
function parseIndexInterval(text: string, completions: number): [number, number] {
  const parts = text.split('-');
  if (parts.length > 2)
    throw new Error(
      `the fragment ${JSON.stringify(text)} violates the requirement that an index interval can have at most two parts separated by '-'`,
    );
  const [x, y] = parts.map((part) => {
    if (!/^[+-]?\d+$/.test(part))
      throw new Error(`cannot convert string to integer for index: ${JSON.stringify(part)}`);
    const n = Number(part);
    if (n >= completions) throw new Error(`too large index: ${JSON.stringify(part)}`);
    return n;
  }) as [number, number | undefined];
  if (y === undefined) return [x, x];
  if (x >= y) throw new Error(`non-increasing order, previous: ${x}, current: ${y}`);
  return [x, y];
}

/** Kubernetes' validateIndexesFormat: the number of indexes of a compressed list (`1,3-5`), or a message. */
function countIndexes(text: string, completions: number): number {
  if (text === '') return 0;
  let last: number | undefined;
  let total = 0;
  for (const part of text.split(',')) {
    const [x, y] = parseIndexInterval(part, completions);
    if (last !== undefined && last >= x) throw new Error(`non-increasing order, previous: ${last}, current: ${x}`);
    total += y - x + 1;
    last = y;
  }
  return total;
}

/** Kubernetes' validateSuccessPolicy (1.32): 1-20 rules, each succeededIndexes and/or succeededCount within completions. */
function validateSuccessPolicy(s: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = s.successPolicy?.rules ?? [];
  const completions = s.completions ?? 0;
  if (rules.length === 0)
    errs.push(
      fieldErrors.required(`${path}.rules`, 'at least one rules must be specified when the successPolicy is specified'),
    );
  if (rules.length > MAX_SUCCESS_POLICY_RULES)
    errs.push({
      path: `${path}.rules`,
      type: 'FieldValueTooMany',
      value: rules.length,
      detail: `must have at most ${MAX_SUCCESS_POLICY_RULES} items`,
    });
  rules.forEach((rule, i) => {
    const at = `${path}.rules[${i}]`;
    if (rule.succeededCount === undefined && rule.succeededIndexes === undefined)
      errs.push(fieldErrors.required(at, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (rule.succeededIndexes !== undefined) {
      const ip = `${at}.succeededIndexes`;
      if (rule.succeededIndexes.length > MAX_SUCCEEDED_INDEXES_LENGTH)
        errs.push(fieldErrors.tooLong(ip, rule.succeededIndexes, MAX_SUCCEEDED_INDEXES_LENGTH));
      try {
        total = countIndexes(rule.succeededIndexes, completions);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        errs.push(fieldErrors.invalid(ip, rule.succeededIndexes, `error parsing succeededIndexes: ${why}`));
      }
    }
    const count = rule.succeededCount;
    if (count !== undefined) {
      const cp = `${at}.succeededCount`;
      errs.push(...nonNegative(cp, count));
      if (count > completions)
        errs.push(
          fieldErrors.invalid(
            cp,
            count,
            `must be less than or equal to ${completions} (the number of specified completions)`,
          ),
        );
      if (rule.succeededIndexes !== undefined && count > total)
        errs.push(
          fieldErrors.invalid(
            cp,
            count,
            `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`,
          ),
        );
    }
  });
  return errs;
}

/** Kubernetes' validatePodFailurePolicy: each rule an action and exactly one of onExitCodes and onPodConditions. */
function validatePodFailurePolicy(s: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const containers = new Set(
    [
      ...((s.template?.spec as PodSpec | undefined)?.containers ?? []),
      ...((s.template?.spec as PodSpec | undefined)?.initContainers ?? []),
    ].map((c) => c.name ?? ''),
  );
  const actions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
  (s.podFailurePolicy?.rules ?? []).forEach((rule, i) => {
    const at = `${path}.rules[${i}]`;
    if (!actions.includes(rule.action)) errs.push(fieldErrors.notSupported(`${at}.action`, rule.action, actions));
    if (rule.action === 'FailIndex' && s.backoffLimitPerIndex === undefined)
      errs.push(fieldErrors.invalid(`${at}.action`, rule.action, 'requires the backoffLimitPerIndex to be set'));
    if (rule.onExitCodes && rule.onPodConditions)
      errs.push(fieldErrors.invalid(at, '', 'specifying both OnExitCodes and OnPodConditions is not supported'));
    else if (!rule.onExitCodes && !rule.onPodConditions)
      errs.push(fieldErrors.invalid(at, '', 'specifying one of OnExitCodes and OnPodConditions is required'));
    const codes = rule.onExitCodes;
    if (codes) {
      const cp = `${at}.onExitCodes`;
      if (codes.operator !== 'In' && codes.operator !== 'NotIn')
        errs.push(fieldErrors.notSupported(`${cp}.operator`, codes.operator, ['In', 'NotIn']));
      if (codes.containerName !== undefined && !containers.has(codes.containerName))
        errs.push(
          fieldErrors.invalid(
            `${cp}.containerName`,
            codes.containerName,
            'must be one of the container or initContainer names in the pod template',
          ),
        );
      const values = codes.values ?? [];
      if (values.length === 0) errs.push(fieldErrors.invalid(`${cp}.values`, values, 'at least one value is required'));
      if (values.length > 255)
        errs.push(fieldErrors.invalid(`${cp}.values`, values.length, 'must have at most 255 items'));
      values.forEach((v, j) => {
        if (codes.operator === 'In' && v === 0)
          errs.push(fieldErrors.invalid(`${cp}.values[${j}]`, v, 'must not be 0 for the In operator'));
        const prev = values[j - 1];
        if (prev !== undefined && prev === v) errs.push(fieldErrors.duplicate(`${cp}.values[${j}]`, v));
        else if (prev !== undefined && prev > v)
          errs.push(fieldErrors.invalid(`${cp}.values[${j}]`, v, 'must be ordered'));
      });
    }
    (rule.onPodConditions ?? []).forEach((p, j) => {
      const pp = `${at}.onPodConditions[${j}]`;
      if (!p.type) errs.push(fieldErrors.required(`${pp}.type`, ''));
      if (p.status !== undefined && !['True', 'False', 'Unknown'].includes(p.status))
        errs.push(fieldErrors.notSupported(`${pp}.status`, p.status, ['True', 'False', 'Unknown']));
    });
  });
  return errs;
}

/** Kubernetes' ValidateJobSpec on a Job: a selector that matches the template, and (unless manual) the generated one. */
function validateJob(job: Job): FieldError[] {
  const s = job.spec;
  const errs = validateJobSpec(s, 'spec');
  const sel = s.selector;
  if (!sel) return [...errs, fieldErrors.required('spec.selector', '')];
  errs.push(...validateLabelSelector(sel, 'spec.selector'));
  let selector: LabelSelector;
  try {
    selector = labelSelectorFromObject(sel);
  } catch {
    return errs;
  }
  const labels = s.template?.metadata?.labels ?? {};
  if (!selector.matches(labels))
    errs.push(
      fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  if (s.manualSelector !== true) {
    const uid = job.metadata.uid ?? '';
    const name = job.metadata.name ?? '';
    const expected = {
      'controller-uid': uid,
      [batchKey('controller-uid')]: uid,
      'job-name': name,
      [batchKey('job-name')]: name,
    };
    if (!selector.matches(expected))
      errs.push(fieldErrors.invalid('spec.selector', sel, '`selector` not auto-generated'));
  }
  return errs;
}

function immutable(path: string, now: unknown, before: unknown): FieldError[] {
  return deepEqual(now, before) ? [] : [fieldErrors.invalid(path, now ?? null, 'field is immutable')];
}

/** Kubernetes' ValidateJobSpecUpdate (1.32): what may not change once a Job exists. */
function validateJobSpecUpdate(job: Job, old: Job): FieldError[] {
  const s = job.spec;
  const o = old.spec;
  const errs = [
    ...immutable('spec.selector', s.selector, o.selector),
    ...immutable('spec.completionMode', s.completionMode, o.completionMode),
    ...immutable('spec.podFailurePolicy', s.podFailurePolicy, o.podFailurePolicy),
    ...immutable('spec.successPolicy', s.successPolicy, o.successPolicy),
    ...immutable('spec.backoffLimitPerIndex', s.backoffLimitPerIndex, o.backoffLimitPerIndex),
    ...immutable('spec.managedBy', s.managedBy, o.managedBy),
  ];
  // Elastic Indexed Jobs: completions may follow parallelism when both stay equal.
  const elastic = s.completionMode === 'Indexed' && s.completions === s.parallelism && o.completions === o.parallelism;
  if (!elastic) errs.push(...immutable('spec.completions', s.completions, o.completions));
  // The template may change only while the Job is suspended and has never started (its scheduling directives).
  const neverStarted = o.suspend === true && !old.status?.startTime;
  if (!neverStarted) errs.push(...immutable('spec.template', s.template, o.template));
  return errs;
}

function validateJobStatus(job: Job): FieldError[] {
  const st = job.status ?? {};
  return (['active', 'succeeded', 'failed', 'ready', 'terminating'] as const).flatMap((k) =>
    nonNegative(`status.${k}`, st[k]),
  );
}

export const jobStrategy: Strategy = {
  prepareForCreate(obj) {
    defaultJob(obj);
    obj.status = {};
  },
  prepareForUpdate(obj) {
    defaultJob(obj);
  },
  validate(obj) {
    // The generated name is known only now (as Kubernetes, which generates the selector in Validate).
    const job = jobOf(obj);
    generateSelector(job);
    // Kubernetes' defaulting copies the template's labels to an unlabelled Job; it runs again on
    // every read there, so the generated labels end up on the Job too.
    const labels = job.spec.template?.metadata?.labels;
    if (labels && Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...labels };
    return validateJob(job);
  },
  validateUpdate(obj, old, ctx) {
    const job = jobOf(obj);
    if (ctx.subresource === 'status') return validateJobStatus(job);
    return [...validateJob(job), ...validateJobSpecUpdate(job, jobOf(old)), ...validateJobStatus(job)];
  },
};

/** Kubernetes' validateTimeZone: an explicit IANA zone name this server knows. */
function validateTimeZone(tz: string | undefined): FieldError[] {
  if (tz === undefined) return [];
  const path = 'spec.timeZone';
  if (tz === '') return [fieldErrors.invalid(path, tz, 'timeZone must be nil or non-empty string')];
  if (tz.toLowerCase() === 'local')
    return [
      fieldErrors.invalid(
        path,
        tz,
        'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
      ),
    ];
  if (!tz.split('/').every((part) => TIME_ZONE_PART.test(part)) || !isKnownTimeZone(tz))
    return [fieldErrors.invalid(path, tz, `unknown time zone ${tz}`)];
  return [];
}

/** Kubernetes' validateScheduleFormat: parseable, and no TZ prefix (that is `timeZone`'s job). */
function validateSchedule(schedule: string | undefined, timeZone: string | undefined): FieldError[] {
  const path = 'spec.schedule';
  if (!schedule) return [fieldErrors.required(path, '')];
  const errs: FieldError[] = [];
  try {
    parseCronSchedule(schedule);
  } catch (e) {
    errs.push(fieldErrors.invalid(path, schedule, e instanceof Error ? e.message : String(e)));
  }
  if (schedule.includes('TZ')) {
    errs.push(
      fieldErrors.invalid(
        path,
        schedule,
        timeZone !== undefined
          ? 'cannot use both timeZone field and TZ or CRON_TZ in schedule'
          : 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
      ),
    );
  }
  return errs;
}

function validateCronJob(cj: CronJob): FieldError[] {
  const s = cj.spec;
  const errs = [
    ...validateSchedule(s.schedule, s.timeZone),
    ...validateTimeZone(s.timeZone),
    ...nonNegative('spec.startingDeadlineSeconds', s.startingDeadlineSeconds),
    ...nonNegative('spec.successfulJobsHistoryLimit', s.successfulJobsHistoryLimit),
    ...nonNegative('spec.failedJobsHistoryLimit', s.failedJobsHistoryLimit),
  ];
  const name = cj.metadata.name ?? '';
  if (name.length > MAX_CRONJOB_NAME)
    errs.push(fieldErrors.invalid('metadata.name', name, `must be no more than ${MAX_CRONJOB_NAME} characters`));
  const policies = ['Allow', 'Forbid', 'Replace'];
  if (!s.concurrencyPolicy) errs.push(fieldErrors.required('spec.concurrencyPolicy', ''));
  else if (!policies.includes(s.concurrencyPolicy))
    errs.push(fieldErrors.notSupported('spec.concurrencyPolicy', s.concurrencyPolicy, policies));
  const template = s.jobTemplate ?? { spec: {} as JobSpec };
  errs.push(...validateLabels(template.metadata?.labels ?? {}, 'spec.jobTemplate.metadata.labels'));
  errs.push(...validateJobSpec(template.spec ?? ({} as JobSpec), 'spec.jobTemplate.spec'));
  if (template.spec?.selector)
    errs.push(
      fieldErrors.invalid(
        'spec.jobTemplate.spec.selector',
        template.spec.selector,
        '`selector` will be auto-generated',
      ),
    );
  return errs;
}

/** Kubernetes' SetDefaults_CronJob; the Job template's pod spec gets the pod defaults. */
function defaultCronJob(obj: ApiObject): void {
  const s = (cronJobOf(obj).spec ??= {} as CronJob['spec']);
  s.concurrencyPolicy ||= 'Allow';
  s.suspend ??= false;
  s.successfulJobsHistoryLimit ??= 3;
  s.failedJobsHistoryLimit ??= 1;
  const template = (s.jobTemplate ??= { spec: {} as JobSpec });
  defaultTemplate((template.spec ??= {} as JobSpec));
}

export const cronJobStrategy: Strategy = {
  prepareForCreate(obj) {
    defaultCronJob(obj);
    obj.status = {};
  },
  prepareForUpdate(obj) {
    defaultCronJob(obj);
  },
  validate: (obj) => validateCronJob(cronJobOf(obj)),
  validateUpdate(obj, _old, ctx) {
    if (ctx.subresource === 'status') return [];
    return validateCronJob(cronJobOf(obj));
  },
};
