import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import { labelSelectorFromObject, validateLabelSelector, type LabelSelectorObject } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { deepEqual } from '../object-utils.js';
import {
  intOrPercentValue,
  nonNegative,
  percentOf,
  validateIntOrPercent,
  validateWorkloadTemplate,
  workloadStrategy,
  type IntOrPercent,
  type WorkloadSpec,
} from './apps.js';
import { defaultPodSpec } from './pod.js';

interface DaemonSetSpec {
  selector?: LabelSelectorObject;
  template?: WorkloadSpec['template'];
  updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: IntOrPercent; maxSurge?: IntOrPercent } };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

/** The apps/v1 spelling of the internal `spec.templateGeneration` (Kubernetes' DeprecatedTemplateGeneration). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const dsSpec = (o: ApiObject): DaemonSetSpec => (o.spec ?? {}) as DaemonSetSpec;

/** Kubernetes' SetDefaults_DaemonSet (apps/v1) and the template's pod defaults. */
function defaultDaemonSet(obj: ApiObject): void {
  const s = (obj.spec ??= {}) as DaemonSetSpec;
  const strategy = (s.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  s.revisionHistoryLimit ??= 10;
  defaultPodSpec(((s.template ??= {}).spec ??= {}));
}

/** Kubernetes' ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and maxSurge is non-zero. */
function validateRollingUpdate(ru: NonNullable<DaemonSetSpec['updateStrategy']>['rollingUpdate'] = {}): FieldError[] {
  const path = 'spec.updateStrategy.rollingUpdate';
  const errs = [
    ...validateIntOrPercent(ru.maxUnavailable, `${path}.maxUnavailable`),
    ...validateIntOrPercent(ru.maxSurge, `${path}.maxSurge`),
  ];
  for (const [name, v] of [
    ['maxUnavailable', ru.maxUnavailable],
    ['maxSurge', ru.maxSurge],
  ] as const) {
    if ((percentOf(v) ?? 0) > 100)
      errs.push(fieldErrors.invalid(`${path}.${name}`, v, 'must not be greater than 100%'));
  }
  const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
  if (hasUnavailable && hasSurge)
    errs.push(fieldErrors.invalid(`${path}.maxSurge`, ru.maxSurge, 'may not be set when maxUnavailable is non-zero'));
  if (!hasUnavailable && !hasSurge)
    errs.push(fieldErrors.required(`${path}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return errs;
}

/** Kubernetes' ValidateDaemonSetUpdateStrategy. */
function validateUpdateStrategy(strategy: DaemonSetSpec['updateStrategy'] = {}): FieldError[] {
  switch (strategy.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate':
      return strategy.rollingUpdate
        ? validateRollingUpdate(strategy.rollingUpdate)
        : [fieldErrors.required('spec.updateStrategy.rollingUpdate', '')];
    default:
      return [fieldErrors.notSupported('spec.updateStrategy', strategy, ['RollingUpdate', 'OnDelete'])];
  }
}

/**
 * Kubernetes' ValidateDaemonSetSpec: a valid selector that matches the template's labels (an
 * absent selector matches nothing), not empty, the template as for every long-running workload,
 * the update strategy, non-negative minReadySeconds and revisionHistoryLimit.
 */
function validateDaemonSetSpec(s: DaemonSetSpec): FieldError[] {
  const errs: FieldError[] = [];
  const sel = s.selector;
  if (sel) errs.push(...validateLabelSelector(sel, 'spec.selector'));
  const labels = s.template?.metadata?.labels ?? {};
  try {
    if (!sel || !labelSelectorFromObject(sel).matches(labels))
      errs.push(
        fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
      );
  } catch {
    // An unparsable selector was reported by validateLabelSelector (Kubernetes skips the match then).
  }
  if (sel && Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0)
    errs.push(fieldErrors.invalid('spec.selector', sel, 'empty selector is invalid for daemonset'));
  errs.push(
    ...validateWorkloadTemplate(s.template ?? {}, 'DaemonSet'),
    ...nonNegative('spec.minReadySeconds', s.minReadySeconds),
    ...validateUpdateStrategy(s.updateStrategy),
    ...nonNegative('spec.revisionHistoryLimit', s.revisionHistoryLimit),
  );
  return errs;
}

const STATUS_COUNTS = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
] as const;

/** Kubernetes' validateDaemonSetStatus and the collisionCount rule of ValidateDaemonSetStatusUpdate. */
function validateDaemonSetStatus(obj: ApiObject, old: ApiObject): FieldError[] {
  const st = (obj.status ?? {}) as Record<string, number | undefined>;
  const errs = STATUS_COUNTS.flatMap((c) => nonNegative(`status.${c}`, st[c]));
  const before = (old.status as { collisionCount?: number } | undefined)?.collisionCount;
  if (before !== undefined && (st.collisionCount ?? -1) < before)
    errs.push(fieldErrors.invalid('status.collisionCount', st.collisionCount ?? 0, 'cannot be decremented'));
  return errs;
}

function templateGeneration(o: ApiObject): number {
  const v = Number(o.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : 0;
}

function setTemplateGeneration(o: ApiObject, generation: number): void {
  (o.metadata.annotations ??= {})[TEMPLATE_GENERATION_ANNOTATION] = String(generation);
}

const base = workloadStrategy({
  defaults: defaultDaemonSet,
  validateSpec: (s) => validateDaemonSetSpec(s as DaemonSetSpec),
  validateStatus: validateDaemonSetStatus,
});

/**
 * apps/v1 DaemonSet: the workload rules (status only through `/status`, immutable selector)
 * with DaemonSet defaults and validation. The template generation (Kubernetes' internal
 * `spec.templateGeneration`, the `deprecated.daemonset.template.generation` annotation in
 * apps/v1) starts at 1 and moves with every template change; the server owns it (Kubernetes
 * takes a client's value and refuses a wrong one; here the stored value wins).
 */
export const daemonSetStrategy: Strategy = {
  ...base,
  prepareForCreate(obj, ctx) {
    base.prepareForCreate?.(obj, ctx);
    setTemplateGeneration(obj, Math.max(1, templateGeneration(obj)));
  },
  prepareForUpdate(obj, old, ctx) {
    base.prepareForUpdate?.(obj, old, ctx);
    const changed = !deepEqual(dsSpec(obj).template, dsSpec(old).template);
    setTemplateGeneration(obj, Math.max(1, templateGeneration(old)) + (changed ? 1 : 0));
  },
};

/** Kubernetes' ValidateControllerRevision: `data` is mandatory, `revision` non-negative; `data` never changes. */
export const controllerRevisionStrategy: Strategy = {
  validate: (obj) => validateControllerRevision(obj),
  validateUpdate(obj, old) {
    const errs = validateControllerRevision(obj);
    const data = (o: ApiObject): unknown => (o as { data?: unknown }).data;
    if (!deepEqual(data(obj), data(old)))
      errs.push(fieldErrors.invalid('data', data(obj) ?? null, 'field is immutable'));
    return errs;
  },
};

function validateControllerRevision(obj: ApiObject): FieldError[] {
  const r = obj as { data?: unknown; revision?: number };
  const errs = nonNegative('revision', r.revision ?? 0);
  if (r.data === undefined || r.data === null) errs.unshift(fieldErrors.required('data', 'data is mandatory'));
  return errs;
}
