import {
  fieldErrors,
  hpaV1ToV2,
  type ApiObject,
  type CrossVersionObjectReference,
  type FieldError,
  type HorizontalPodAutoscaler,
  type HPAScalingRules,
  type MetricIdentifier,
  type MetricSpec,
  type MetricTarget,
} from '@svc/api';
import { isValidPathSegmentName, quantityMilliValue } from '@svc/machinery';
import type { Strategy } from '../strategy.js';

/** Kubernetes 1.32's bounds (pkg/apis/autoscaling/validation). */
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const MAX_PERIOD_SECONDS = 1800;
const METRIC_TYPES = ['Object', 'Pods', 'Resource', 'ContainerResource', 'External'] as const;
const SOURCE_FIELD: Record<string, keyof MetricSpec> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  ContainerResource: 'containerResource',
  External: 'external',
};

const isV1 = (o: ApiObject): boolean => o.apiVersion === 'autoscaling/v1';
/** The object as Kubernetes' internal (v2-shaped) type sees it. */
const asV2 = (o: ApiObject): HorizontalPodAutoscaler => (isV1(o) ? hpaV1ToV2(o) : o) as HorizontalPodAutoscaler;

function pathSegment(path: string, value: string): FieldError[] {
  return isValidPathSegmentName(value).map((m) => fieldErrors.invalid(path, value, m));
}

function validateReference(ref: CrossVersionObjectReference | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!ref?.kind) errs.push(fieldErrors.required(`${path}.kind`, ''));
  else errs.push(...pathSegment(`${path}.kind`, ref.kind));
  if (!ref?.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  else errs.push(...pathSegment(`${path}.name`, ref.name));
  return errs;
}

function sign(q: string | number): number {
  try {
    return Math.sign(quantityMilliValue(String(q)));
  } catch {
    return 0;
  }
}

function validateTarget(t: MetricTarget | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = t?.type;
  if (!type) errs.push(fieldErrors.required(`${path}.type`, 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue')
    errs.push(fieldErrors.invalid(`${path}.type`, type ?? '', 'must be either Utilization, Value, or AverageValue'));
  if (t?.value !== undefined && sign(t.value) !== 1)
    errs.push(fieldErrors.invalid(`${path}.value`, t.value, 'must be positive'));
  if (t?.averageValue !== undefined && sign(t.averageValue) !== 1)
    errs.push(fieldErrors.invalid(`${path}.averageValue`, t.averageValue, 'must be positive'));
  if (t?.averageUtilization !== undefined && t.averageUtilization < 1)
    errs.push(fieldErrors.invalid(`${path}.averageUtilization`, t.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateIdentifier(m: MetricIdentifier | undefined, path: string): FieldError[] {
  if (!m?.name) return [fieldErrors.required(`${path}.name`, 'must specify a metric name')];
  return pathSegment(`${path}.name`, m.name);
}

function validateResourceSource(
  src: { name?: string; target?: MetricTarget; container?: string },
  opts: { path: string; container: boolean },
): FieldError[] {
  const { path } = opts;
  const errs: FieldError[] = [];
  if (!src.name) errs.push(fieldErrors.required(`${path}.name`, 'must specify a resource name'));
  if (opts.container && !src.container)
    errs.push(fieldErrors.required(`${path}.container`, 'must specify a container'));
  errs.push(...validateTarget(src.target, `${path}.target`));
  if (src.target?.averageUtilization === undefined && src.target?.averageValue === undefined)
    errs.push(
      fieldErrors.required(
        `${path}.target.averageUtilization`,
        'must set either a target raw value or a target utilization',
      ),
    );
  if (src.target?.averageUtilization !== undefined && src.target.averageValue !== undefined)
    errs.push(
      fieldErrors.forbidden(
        `${path}.target.averageValue`,
        'may not set both a target raw value and a target utilization',
      ),
    );
  return errs;
}

function validateValueTarget(
  t: MetricTarget | undefined,
  opts: { path: string; both: string; none: string },
): FieldError[] {
  const errs = validateTarget(t, `${opts.path}.target`);
  if (t?.value === undefined && t?.averageValue === undefined)
    errs.push(fieldErrors.required(`${opts.path}.target.value`, opts.none));
  if (t?.value !== undefined && t.averageValue !== undefined)
    errs.push(fieldErrors.forbidden(`${opts.path}.target.value`, opts.both));
  return errs;
}

function validateSource(m: MetricSpec, path: string): FieldError[] {
  if (m.resource) return validateResourceSource(m.resource, { path: `${path}.resource`, container: false });
  if (m.containerResource)
    return validateResourceSource(m.containerResource, { path: `${path}.containerResource`, container: true });
  if (m.pods) {
    const p = `${path}.pods`;
    const errs = [...validateIdentifier(m.pods.metric, `${p}.metric`), ...validateTarget(m.pods.target, `${p}.target`)];
    if (m.pods.target?.averageValue === undefined)
      errs.push(fieldErrors.required(`${p}.target.averageValue`, 'must specify a positive target averageValue'));
    return errs;
  }
  if (m.object) {
    const p = `${path}.object`;
    return [
      ...validateReference(m.object.describedObject, `${p}.describedObject`),
      ...validateIdentifier(m.object.metric, `${p}.metric`),
      ...validateValueTarget(m.object.target, {
        path: p,
        none: 'must set either a target value or averageValue',
        both: 'may not set both a target value and averageValue',
      }),
    ];
  }
  if (m.external) {
    const p = `${path}.external`;
    return [
      ...validateIdentifier(m.external.metric, `${p}.metric`),
      ...validateValueTarget(m.external.target, {
        path: p,
        none: 'must set either a target value for metric or a per-pod target',
        both: 'may not set both a target value for metric and a per-pod target',
      }),
    ];
  }
  return [];
}

/** Kubernetes' validateMetricSpec. */
function validateMetric(m: MetricSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!m.type) errs.push(fieldErrors.required(`${path}.type`, 'must specify a metric source type'));
  else if (!(METRIC_TYPES as readonly string[]).includes(m.type))
    errs.push(fieldErrors.notSupported(`${path}.type`, m.type, [...METRIC_TYPES]));
  const present = Object.values(SOURCE_FIELD).filter((f) => m[f] !== undefined);
  const expected = SOURCE_FIELD[m.type];
  for (const f of present)
    if (f !== expected)
      errs.push(
        fieldErrors.forbidden(
          `${path}.${f}`,
          `must populate information for the given metric source (only allowed when type is ${Object.keys(SOURCE_FIELD).find((k) => SOURCE_FIELD[k] === f) ?? ''})`,
        ),
      );
  if (expected && m[expected] === undefined)
    errs.push(fieldErrors.required(`${path}.${expected}`, 'must populate information for the given metric source'));
  if (present.length === 0 && !expected) errs.push(fieldErrors.required(path, 'must populate the given metric source'));
  return [...errs, ...validateSource(m, path)];
}

/** Kubernetes' validateScalingRules. */
function validateRules(r: HPAScalingRules | undefined, path: string): FieldError[] {
  if (!r) return [];
  const errs: FieldError[] = [];
  const w = r.stabilizationWindowSeconds;
  if (w !== undefined && w < 0)
    errs.push(fieldErrors.invalid(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (w !== undefined && w > MAX_STABILIZATION_WINDOW_SECONDS)
    errs.push(
      fieldErrors.invalid(
        `${path}.stabilizationWindowSeconds`,
        w,
        `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`,
      ),
    );
  const select = r.selectPolicy;
  if (select !== undefined && select !== 'Max' && select !== 'Min' && select !== 'Disabled')
    errs.push(fieldErrors.notSupported(`${path}.selectPolicy`, select, ['Disabled', 'Max', 'Min']));
  const policies = r.policies ?? [];
  if (policies.length === 0) errs.push(fieldErrors.required(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const pp = `${path}.policies[${i}]`;
    if (p.type !== 'Pods' && p.type !== 'Percent')
      errs.push(fieldErrors.notSupported(`${pp}.type`, p.type, ['Percent', 'Pods']));
    if (!(p.value > 0)) errs.push(fieldErrors.invalid(`${pp}.value`, p.value, 'must be greater than zero'));
    if (!(p.periodSeconds > 0))
      errs.push(fieldErrors.invalid(`${pp}.periodSeconds`, p.periodSeconds, 'must be greater than zero'));
    else if (p.periodSeconds > MAX_PERIOD_SECONDS)
      errs.push(
        fieldErrors.invalid(
          `${pp}.periodSeconds`,
          p.periodSeconds,
          `must be less than or equal to ${MAX_PERIOD_SECONDS}`,
        ),
      );
  });
  return errs;
}

/** Kubernetes' validateHorizontalPodAutoscalerSpec (minReplicas lower bound 1: HPAScaleToZero is alpha, off). */
export function validateHpaSpec(hpa: HorizontalPodAutoscaler): FieldError[] {
  const s = hpa.spec ?? ({} as HorizontalPodAutoscaler['spec']);
  const errs: FieldError[] = [];
  const min = s.minReplicas;
  const max = s.maxReplicas ?? 0;
  if (min !== undefined && min < 1)
    errs.push(fieldErrors.invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min)
    errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateReference(s.scaleTargetRef, 'spec.scaleTargetRef'));
  (s.metrics ?? []).forEach((m, i) => errs.push(...validateMetric(m, `spec.metrics[${i}]`)));
  errs.push(
    ...validateRules(s.behavior?.scaleUp, 'spec.behavior.scaleUp'),
    ...validateRules(s.behavior?.scaleDown, 'spec.behavior.scaleDown'),
  );
  return errs;
}

function validateStatus(hpa: HorizontalPodAutoscaler): FieldError[] {
  const st = hpa.status;
  if (!st) return [];
  return (['currentReplicas', 'desiredReplicas'] as const).flatMap((k) =>
    (st[k] ?? 0) < 0 ? [fieldErrors.invalid(`status.${k}`, st[k], 'must be greater than or equal to 0')] : [],
  );
}

/** 1.32's scaleUp defaults: no stabilization, 100 %/15 s and 4 pods/15 s, the larger wins. */
function defaultScaleUp(r: HPAScalingRules | undefined): HPAScalingRules {
  return {
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? 0,
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies: r?.policies ?? [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

/**
 * 1.32's scaleDown defaults: 100 %/15 s, selectPolicy Max; stabilizationWindowSeconds stays
 * unset (the controller then uses --horizontal-pod-autoscaler-downscale-stabilization).
 */
function defaultScaleDown(r: HPAScalingRules | undefined): HPAScalingRules {
  const out: HPAScalingRules = {
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies: r?.policies ?? [{ type: 'Percent', value: 100, periodSeconds: 15 }],
  };
  if (r?.stabilizationWindowSeconds !== undefined) out.stabilizationWindowSeconds = r.stabilizationWindowSeconds;
  return out;
}

/** The defaults of the object's own version: v1 minReplicas; v2 also the CPU 80 % metric and behavior's rules. */
export function defaultHpa(obj: ApiObject): void {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  obj.spec = spec;
  if (spec.minReplicas === undefined) spec.minReplicas = 1;
  if (isV1(obj)) return;
  const hpa = obj as HorizontalPodAutoscaler;
  if (!hpa.spec.metrics?.length)
    hpa.spec.metrics = [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
    ];
  const b = hpa.spec.behavior;
  if (b) hpa.spec.behavior = { scaleUp: defaultScaleUp(b.scaleUp), scaleDown: defaultScaleDown(b.scaleDown) };
}

/**
 * autoscaling HorizontalPodAutoscaler (v1 and v2, one strategy): validated as Kubernetes'
 * internal type, so a v1 object is checked in its v2 form (its CPU target is
 * `spec.metrics[0].resource.target`). Status starts empty on create.
 */
export const horizontalPodAutoscalerStrategy: Strategy = {
  prepareForCreate(obj) {
    defaultHpa(obj);
    obj.status = isV1(obj) ? { currentReplicas: 0, desiredReplicas: 0 } : { desiredReplicas: 0 };
  },
  prepareForUpdate(obj) {
    defaultHpa(obj);
  },
  validate: (obj) => validateHpaSpec(asV2(obj)),
  validateUpdate(obj, _old, ctx) {
    const hpa = asV2(obj);
    if (ctx.subresource === 'status') return validateStatus(hpa);
    return [...validateHpaSpec(hpa), ...validateStatus(hpa)];
  },
};
