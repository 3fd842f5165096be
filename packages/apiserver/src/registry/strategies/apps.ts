import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import {
  type LabelSelector,
  labelSelectorFromObject,
  regexError,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  type LabelSelectorObject,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { deepEqual } from '../object-utils.js';
import { defaultPodSpec, validatePodSpec, type PodSpec } from './pod.js';

export type IntOrPercent = number | string;
export interface WorkloadSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: LabelSelectorObject;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: PodSpec };
  strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: IntOrPercent; maxSurge?: IntOrPercent } };
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
}
type Counts = Record<string, number | undefined>;

const spec = (o: ApiObject): WorkloadSpec => (o.spec ?? {}) as WorkloadSpec;
const status = (o: ApiObject): Counts => (o.status ?? {}) as Counts;

export function nonNegative(path: string, v: number | undefined): FieldError[] {
  return v !== undefined && v < 0 ? [fieldErrors.invalid(path, v, 'must be greater than or equal to 0')] : [];
}

/** apps/v1 defaults of every pod-template workload: one replica, the template's pod defaults. */
function defaultWorkload(obj: ApiObject): WorkloadSpec {
  const s = (obj.spec ??= {}) as WorkloadSpec;
  s.replicas ??= 1;
  const template = (s.template ??= {});
  defaultPodSpec((template.spec ??= {}));
  return s;
}

/** Kubernetes' SetDefaults_Deployment (apps/v1). */
function defaultDeployment(obj: ApiObject): void {
  const s = defaultWorkload(obj);
  const strategy = (s.strategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const rollingUpdate = (strategy.rollingUpdate ??= {});
    rollingUpdate.maxUnavailable ??= '25%';
    rollingUpdate.maxSurge ??= '25%';
  }
  s.revisionHistoryLimit ??= 10;
  s.progressDeadlineSeconds ??= 600;
}

/** Kubernetes' ValidateReplicaSetSpec: replicas, selector, and a template the selector matches. */
function validateWorkloadSpec(s: WorkloadSpec): FieldError[] {
  const errs = [...nonNegative('spec.replicas', s.replicas), ...nonNegative('spec.minReadySeconds', s.minReadySeconds)];
  const sel = s.selector;
  if (!sel) errs.push(fieldErrors.required('spec.selector', ''));
  else {
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    if (Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
      errs.push(fieldErrors.invalid('spec.selector', sel, 'empty selector is invalid for deployment'));
    }
  }
  let selector: LabelSelector;
  try {
    selector = labelSelectorFromObject(sel);
  } catch {
    return [...errs, fieldErrors.invalid('spec.selector', sel, 'invalid label selector')];
  }
  const t = s.template ?? {};
  const labels = t.metadata?.labels ?? {};
  if (!selector.isEmpty() && !selector.matches(labels)) {
    errs.push(
      fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  }
  return [...errs, ...validateWorkloadTemplate(t, 'ReplicaSet')];
}

/**
 * Kubernetes' ValidatePodTemplateSpec of `spec.template` plus the rules of long-running
 * workloads: `restartPolicy` Always and no `activeDeadlineSeconds` (named after `kind`).
 */
export function validateWorkloadTemplate(t: NonNullable<WorkloadSpec['template']>, kind: string): FieldError[] {
  const errs = [
    ...validateLabels(t.metadata?.labels ?? {}, 'spec.template.metadata.labels'),
    ...validateAnnotations(t.metadata?.annotations ?? {}, 'spec.template.metadata.annotations'),
  ];
  const pod = t.spec ?? {};
  errs.push(...validatePodSpec(pod, 'spec.template.spec'));
  if (pod.restartPolicy !== 'Always')
    errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', pod.restartPolicy ?? '', ['Always']));
  if (pod.activeDeadlineSeconds !== undefined) {
    errs.push(
      fieldErrors.forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        `activeDeadlineSeconds in ${kind} is not Supported`,
      ),
    );
  }
  return errs;
}

/** A percent string's number, or undefined when `v` is not one (Kubernetes' getPercentValue). */
export function percentOf(v: IntOrPercent | undefined): number | undefined {
  return typeof v === 'string' && /^[0-9]+%$/.test(v) ? Number(v.slice(0, -1)) : undefined;
}

/** Kubernetes' getIntOrPercentValue: a non-numeric string counts as 0. */
export function intOrPercentValue(v: IntOrPercent | undefined): number {
  if (typeof v === 'number') return v;
  return percentOf(v) ?? (/^[+-]?[0-9]+$/.test(v ?? '') ? Number(v) : 0);
}

export function validateIntOrPercent(v: IntOrPercent | undefined, path: string): FieldError[] {
  if (typeof v === 'number') return nonNegative(path, v);
  if (v === undefined || percentOf(v) !== undefined) return [];
  return [
    fieldErrors.invalid(
      path,
      v,
      regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%'),
    ),
  ];
}

/** Kubernetes' ValidateDeploymentStrategy. */
function validateDeploymentStrategy(strategy: WorkloadSpec['strategy'] = {}): FieldError[] {
  const path = 'spec.strategy';
  if (strategy.type === 'Recreate') {
    return strategy.rollingUpdate
      ? [fieldErrors.forbidden(`${path}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")]
      : [];
  }
  if (strategy.type !== 'RollingUpdate')
    return [fieldErrors.notSupported(path, strategy, ['Recreate', 'RollingUpdate'])];
  const ru = strategy.rollingUpdate;
  if (!ru) return [fieldErrors.required(`${path}.rollingUpdate`, 'this should be defaulted and never be nil')];
  const unavailablePath = `${path}.rollingUpdate.maxUnavailable`;
  const errs = [
    ...validateIntOrPercent(ru.maxUnavailable, unavailablePath),
    ...validateIntOrPercent(ru.maxSurge, `${path}.rollingUpdate.maxSurge`),
  ];
  if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
    errs.push(fieldErrors.invalid(unavailablePath, ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  if ((percentOf(ru.maxUnavailable) ?? 0) > 100)
    errs.push(fieldErrors.invalid(unavailablePath, ru.maxUnavailable, 'must not be greater than 100%'));
  return errs;
}

/** Kubernetes' ValidateDeploymentSpec. */
function validateDeploymentSpec(s: WorkloadSpec): FieldError[] {
  const errs = [
    ...validateWorkloadSpec(s),
    ...validateDeploymentStrategy(s.strategy),
    ...nonNegative('spec.revisionHistoryLimit', s.revisionHistoryLimit),
  ];
  const deadline = s.progressDeadlineSeconds;
  if (deadline !== undefined) {
    errs.push(...nonNegative('spec.progressDeadlineSeconds', deadline));
    if (deadline <= (s.minReadySeconds ?? 0))
      errs.push(fieldErrors.invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  return errs;
}

/** Kubernetes' status rules: counts non-negative, the listed ones at most `replicas`, available at most ready. */
export function validateCounts(st: Counts, counts: readonly string[], atMostReplicas: readonly string[]): FieldError[] {
  const errs = counts.flatMap((c) => nonNegative(`status.${c}`, st[c]));
  for (const c of atMostReplicas) {
    if ((st[c] ?? 0) > (st.replicas ?? 0))
      errs.push(fieldErrors.invalid(`status.${c}`, st[c], 'cannot be greater than status.replicas'));
  }
  if ((st.availableReplicas ?? 0) > (st.readyReplicas ?? 0)) {
    errs.push(
      fieldErrors.invalid('status.availableReplicas', st.availableReplicas, 'cannot be greater than readyReplicas'),
    );
  }
  return errs;
}

export interface WorkloadRules {
  defaults(obj: ApiObject): void;
  validateSpec(s: WorkloadSpec): FieldError[];
  validateStatus(obj: ApiObject, old: ApiObject): FieldError[];
}

/**
 * An apps/v1 workload: defaults on every write, status starts empty and changes only through
 * `/status` (the generic store keeps it on main-resource writes and bumps the generation on
 * spec changes), `spec.selector` is immutable (apps/v1 rule).
 */
export function workloadStrategy(rules: WorkloadRules): Strategy {
  return {
    prepareForCreate(obj) {
      rules.defaults(obj);
      obj.status = {};
    },
    prepareForUpdate(obj) {
      rules.defaults(obj);
    },
    validate: (obj) => rules.validateSpec(spec(obj)),
    validateUpdate(obj, old) {
      const errs = [...rules.validateSpec(spec(obj)), ...rules.validateStatus(obj, old)];
      if (!deepEqual(spec(obj).selector, spec(old).selector))
        errs.push(fieldErrors.invalid('spec.selector', spec(obj).selector ?? null, 'field is immutable'));
      return errs;
    },
  };
}

export const deploymentStrategy = workloadStrategy({
  defaults: defaultDeployment,
  validateSpec: validateDeploymentSpec,
  validateStatus(obj, old) {
    const st = status(obj);
    const errs = validateCounts(
      st,
      [
        'observedGeneration',
        'replicas',
        'updatedReplicas',
        'readyReplicas',
        'availableReplicas',
        'unavailableReplicas',
        'collisionCount',
      ],
      ['updatedReplicas', 'readyReplicas', 'availableReplicas'],
    );
    const before = status(old).collisionCount;
    if (before !== undefined && (st.collisionCount ?? -1) < before)
      errs.push(fieldErrors.invalid('status.collisionCount', st.collisionCount ?? 0, 'cannot be decremented'));
    return errs;
  },
});

export const replicaSetStrategy = workloadStrategy({
  defaults: defaultWorkload,
  validateSpec: validateWorkloadSpec,
  validateStatus: (obj) =>
    validateCounts(
      status(obj),
      ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'],
      ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'],
    ),
});
