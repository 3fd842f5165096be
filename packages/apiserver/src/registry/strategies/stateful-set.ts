import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import {
  labelSelectorFromObject,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  withoutZeroValues,
  type LabelSelector,
  type LabelSelectorObject,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { deepEqual } from '../object-utils.js';
import { nonNegative, type IntOrPercent, type WorkloadSpec } from './apps.js';
import { defaultPodSpec } from './pod.js';

interface StatefulSetSpec {
  replicas?: number;
  selector?: LabelSelectorObject;
  template?: WorkloadSpec['template'];
  volumeClaimTemplates?: Array<{ spec?: { volumeMode?: string }; status?: { phase?: string } }>;
  serviceName?: string;
  podManagementPolicy?: string;
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number; maxUnavailable?: IntOrPercent } };
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
  ordinals?: { start?: number };
}
type Counts = Record<string, number | undefined>;

const stsSpec = (o: ApiObject): StatefulSetSpec => (o.spec ?? {}) as StatefulSetSpec;
const stsStatus = (o: ApiObject): Counts => (o.status ?? {}) as Counts;

const POLICIES = ['OrderedReady', 'Parallel'];
const RETENTION = ['Delete', 'Retain'];

/**
 * Kubernetes' SetDefaults_StatefulSet (apps/v1) with StatefulSetAutoDeletePVC (GA in 1.32) and
 * MaxUnavailableStatefulSet off (alpha): the template's pod defaults and the claim templates'
 * PersistentVolumeClaim defaults too.
 */
function defaultStatefulSet(obj: ApiObject): void {
  const s = (obj.spec ??= {}) as StatefulSetSpec;
  if (!s.podManagementPolicy) s.podManagementPolicy = 'OrderedReady';
  const strategy = (s.updateStrategy ??= {});
  if (!strategy.type) {
    strategy.type = 'RollingUpdate';
    strategy.rollingUpdate ??= {};
  }
  if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate) strategy.rollingUpdate.partition ??= 0;
  const retention = (s.persistentVolumeClaimRetentionPolicy ??= {});
  if (!retention.whenDeleted) retention.whenDeleted = 'Retain';
  if (!retention.whenScaled) retention.whenScaled = 'Retain';
  s.replicas ??= 1;
  s.revisionHistoryLimit ??= 10;
  defaultPodSpec(((s.template ??= {}).spec ??= {}));
  for (const claim of s.volumeClaimTemplates ?? []) {
    (claim.spec ??= {}).volumeMode ??= 'Filesystem';
    (claim.status ??= {}).phase ??= 'Pending';
  }
}

/** Kubernetes' dropStatefulSetDisabledFields: maxUnavailable needs the (alpha, off) MaxUnavailableStatefulSet gate unless already in use. */
function dropDisabledFields(obj: ApiObject, old?: ApiObject): void {
  const ru = stsSpec(obj).updateStrategy?.rollingUpdate;
  const inUse = old !== undefined && stsSpec(old).updateStrategy?.rollingUpdate?.maxUnavailable !== undefined;
  if (ru && !inUse) delete ru.maxUnavailable;
}

/** Kubernetes' validateRollingUpdateStatefulSet (maxUnavailable only reaches it while already in use). */
function validateRollingUpdate(
  ru: NonNullable<NonNullable<StatefulSetSpec['updateStrategy']>['rollingUpdate']>,
): FieldError[] {
  const path = 'spec.updateStrategy.rollingUpdate';
  const errs = nonNegative(`${path}.partition`, ru.partition);
  const mu = ru.maxUnavailable;
  if (mu === undefined) return errs;
  if (typeof mu === 'number') errs.push(...nonNegative(`${path}.maxUnavailable`, mu));
  const value = typeof mu === 'number' ? mu : Number(/^([0-9]+)%$/.exec(mu)?.[1] ?? 0);
  if (value === 0) errs.push(fieldErrors.invalid(`${path}.maxUnavailable`, mu, 'cannot be 0'));
  if (typeof mu === 'string' && value > 100)
    errs.push(fieldErrors.invalid(`${path}.maxUnavailable`, mu, 'must not be greater than 100%'));
  return errs;
}

function validateUpdateStrategy(strategy: StatefulSetSpec['updateStrategy'] = {}): FieldError[] {
  switch (strategy.type) {
    case undefined:
    case '':
      return [fieldErrors.required('spec.updateStrategy', '')];
    case 'OnDelete':
      return strategy.rollingUpdate
        ? [
            fieldErrors.invalid(
              'spec.updateStrategy.rollingUpdate',
              strategy.rollingUpdate,
              "only allowed for updateStrategy 'RollingUpdate'",
            ),
          ]
        : [];
    case 'RollingUpdate':
      return strategy.rollingUpdate ? validateRollingUpdate(strategy.rollingUpdate) : [];
    default:
      return [fieldErrors.invalid('spec.updateStrategy', strategy, "must be 'RollingUpdate' or 'OnDelete'")];
  }
}

function validateRetention(policy: StatefulSetSpec['persistentVolumeClaimRetentionPolicy']): FieldError[] {
  if (!policy) return [];
  const path = 'spec.persistentVolumeClaimRetentionPolicy';
  return (['whenDeleted', 'whenScaled'] as const).flatMap((k) =>
    RETENTION.includes(policy[k] ?? '') ? [] : [fieldErrors.notSupported(`${path}.${k}`, policy[k] ?? '', RETENTION)],
  );
}

/**
 * Kubernetes 1.32's ValidateStatefulSetSpec, in its order. As Kubernetes, the template's pod
 * spec is not validated beyond restartPolicy and activeDeadlineSeconds (only its labels and
 * annotations), and an absent selector matches nothing, so it also fails the template match.
 */
function validateStatefulSetSpec(s: StatefulSetSpec): FieldError[] {
  const errs: FieldError[] = [];
  const policy = s.podManagementPolicy ?? '';
  if (policy === '') errs.push(fieldErrors.required('spec.podManagementPolicy', ''));
  else if (!POLICIES.includes(policy))
    errs.push(fieldErrors.invalid('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"));
  errs.push(
    ...validateUpdateStrategy(s.updateStrategy),
    ...validateRetention(s.persistentVolumeClaimRetentionPolicy),
    ...nonNegative('spec.replicas', s.replicas),
    ...nonNegative('spec.minReadySeconds', s.minReadySeconds),
  );
  if (s.ordinals) errs.push(...nonNegative('spec.ordinals.start', s.ordinals.start ?? 0));
  const sel = s.selector;
  if (!sel) errs.push(fieldErrors.required('spec.selector', ''));
  else {
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    if (Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0)
      errs.push(fieldErrors.invalid('spec.selector', sel, 'empty selector is invalid for statefulset'));
  }
  let selector: LabelSelector | undefined;
  try {
    selector = sel ? labelSelectorFromObject(sel) : undefined;
  } catch {
    errs.push(fieldErrors.invalid('spec.selector', sel, ''));
  }
  const t = s.template ?? {};
  if (!sel || (selector && !selector.isEmpty())) {
    const labels = t.metadata?.labels ?? {};
    if (!selector?.matches(labels))
      errs.push(
        fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
      );
  }
  errs.push(
    ...validateLabels(t.metadata?.labels ?? {}, 'spec.template.labels'),
    ...validateAnnotations(t.metadata?.annotations ?? {}, 'spec.template.annotations'),
  );
  const pod = t.spec ?? {};
  if (pod.restartPolicy !== 'Always')
    errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', pod.restartPolicy ?? '', ['Always']));
  if (pod.activeDeadlineSeconds !== undefined)
    errs.push(
      fieldErrors.forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in StatefulSet is not Supported',
      ),
    );
  return errs;
}

/** The fields ValidateStatefulSetUpdate lets change. */
const MUTABLE = [
  'replicas',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'ordinals',
  'persistentVolumeClaimRetentionPolicy',
] as const;

/** Kubernetes' ValidateStatefulSetUpdate: the spec revalidated, and nothing but the mutable fields changed. */
function validateSpecUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  const errs = validateStatefulSetSpec(stsSpec(obj));
  const rest = (o: ApiObject): unknown => {
    const copy: Record<string, unknown> = { ...(o.spec ?? {}) };
    for (const k of MUTABLE) delete copy[k];
    // Go's zero values and absent fields compare alike (Kubernetes compares typed specs).
    return withoutZeroValues(copy);
  };
  if (!deepEqual(rest(obj), rest(old)))
    errs.push(
      fieldErrors.forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  return errs;
}

/** Kubernetes' ValidateStatefulSetStatusUpdate. */
function validateStatus(obj: ApiObject, old: ApiObject): FieldError[] {
  const st = stsStatus(obj);
  const errs = [
    'replicas',
    'readyReplicas',
    'currentReplicas',
    'updatedReplicas',
    'availableReplicas',
    'observedGeneration',
    'collisionCount',
  ].flatMap((c) => nonNegative(`status.${c}`, st[c]));
  const replicas = st.replicas ?? 0;
  for (const c of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    if ((st[c] ?? 0) > replicas)
      errs.push(fieldErrors.invalid(`status.${c}`, st[c], 'cannot be greater than status.replicas'));
  }
  if ((st.availableReplicas ?? 0) > (st.readyReplicas ?? 0))
    errs.push(
      fieldErrors.invalid(
        'status.availableReplicas',
        st.availableReplicas,
        'cannot be greater than status.readyReplicas',
      ),
    );
  const before = stsStatus(old).collisionCount;
  if (before !== undefined && (st.collisionCount ?? -1) < before)
    errs.push(fieldErrors.invalid('status.collisionCount', st.collisionCount ?? 0, 'cannot be decremented'));
  return errs;
}

/**
 * apps/v1 StatefulSet as Kubernetes 1.32's statefulSetStrategy: defaults on every write, status
 * starts empty and changes only through `/status`, and on update everything in `spec` but
 * replicas, template, updateStrategy, minReadySeconds, ordinals and
 * persistentVolumeClaimRetentionPolicy is frozen (one `spec` Forbidden cause, no separate
 * selector rule).
 */
export const statefulSetStrategy: Strategy = {
  prepareForCreate(obj) {
    dropDisabledFields(obj);
    defaultStatefulSet(obj);
    obj.status = { replicas: 0 };
  },
  prepareForUpdate(obj, old) {
    dropDisabledFields(obj, old);
    defaultStatefulSet(obj);
  },
  validate: (obj) => validateStatefulSetSpec(stsSpec(obj)),
  validateUpdate: (obj, old, ctx) =>
    ctx.subresource === 'status' ? validateStatus(obj, old) : validateSpecUpdate(obj, old),
};
