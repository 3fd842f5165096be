import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy } from '../strategy.js';
import { nonNegative, validateCounts, validateWorkloadTemplate, type WorkloadSpec } from './apps.js';
import { defaultPodSpec } from './pod.js';

interface ReplicationControllerSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: Record<string, string>;
  template?: WorkloadSpec['template'];
}

const rcSpec = (o: ApiObject): ReplicationControllerSpec => (o.spec ?? {}) as ReplicationControllerSpec;

/**
 * Kubernetes' SetDefaults_ReplicationController (core/v1): an empty selector and empty object
 * labels become the template's labels, one replica; the template's pod defaults.
 */
function defaultReplicationController(obj: ApiObject): void {
  const s = (obj.spec ??= {}) as ReplicationControllerSpec;
  const labels = s.template?.metadata?.labels;
  if (labels) {
    if (Object.keys(s.selector ?? {}).length === 0) s.selector = { ...labels };
    if (Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...labels };
  }
  s.replicas ??= 1;
  if (s.template) defaultPodSpec((s.template.spec ??= {}));
}

const matchesAll = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Kubernetes' ValidateReplicationControllerSpec with ValidatePodTemplateSpecForRC. */
function validateSpec(s: ReplicationControllerSpec): FieldError[] {
  const selector = s.selector ?? {};
  const errs = [...nonNegative('spec.minReadySeconds', s.minReadySeconds)];
  if (Object.keys(selector).length === 0) errs.push(fieldErrors.required('spec.selector', ''));
  errs.push(...nonNegative('spec.replicas', s.replicas));
  const t = s.template;
  if (!t) return [...errs, fieldErrors.required('spec.template', '')];
  const labels = t.metadata?.labels ?? {};
  if (Object.keys(selector).length > 0 && !matchesAll(selector, labels)) {
    errs.push(
      fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  }
  return [...errs, ...validateWorkloadTemplate(t, 'ReplicationController')];
}

/** Kubernetes' ValidateReplicationControllerStatus: counts non-negative and within `replicas`. */
function validateStatus(obj: ApiObject): FieldError[] {
  return validateCounts(
    (obj.status ?? {}) as Record<string, number | undefined>,
    ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'],
    ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'],
  );
}

/**
 * core/v1 ReplicationController (Kubernetes' rcStrategy): defaults on every write, status
 * starts empty and changes only through `/status`; unlike apps/v1 workloads the selector may
 * change.
 */
export const replicationControllerStrategy: Strategy = {
  prepareForCreate(obj) {
    defaultReplicationController(obj);
    obj.status = {};
  },
  prepareForUpdate(obj) {
    defaultReplicationController(obj);
  },
  validate: (obj) => validateSpec(rcSpec(obj)),
  validateUpdate: (obj) => [...validateSpec(rcSpec(obj)), ...validateStatus(obj)],
};
