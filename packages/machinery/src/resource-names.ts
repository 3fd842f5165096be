// Resource names and amounts as Kubernetes' core validation and helpers judge them: which names
// are standard (for containers, limit ranges, quotas), which are integers, which may be
// overcommitted; the checks of ResourceRequirements, quota and limit range values, and
// tolerations, with Kubernetes' paths and messages.

import { fieldErrors, naming, type FieldError, type ResourceList, type Toleration } from '@svc/api';
import { Quantity } from './quantity-math.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

const HUGE_PAGES_PREFIX = 'hugepages-';
const REQUESTS_PREFIX = 'requests.';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

/** The limit types a LimitRange item may name without a `/`. */
export const STANDARD_LIMIT_RANGE_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'] as const;

/** Quota scopes of core/v1 (1.32). */
export const RESOURCE_QUOTA_SCOPES = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
] as const;

const POD_COMPUTE_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'limits.cpu',
  'limits.memory',
  'requests.cpu',
  'requests.memory',
]);

export function isHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGE_PAGES_PREFIX);
}

function isQuotaHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGE_PAGES_PREFIX) || name.startsWith(`${REQUESTS_PREFIX}${HUGE_PAGES_PREFIX}`);
}

/** Unprefixed names and names under the naming's own prefix (the svc domain, or kubernetes.io under its naming). */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes(`${naming().labelPrefix}/`);
}

/** A prefixed, non-native name that is still a qualified name once `requests.` is put in front. */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`).length === 0;
}

export function isStandardContainerResourceName(name: string): boolean {
  return STANDARD_CONTAINER_RESOURCES.has(name) || isHugePageResourceName(name);
}

export function isStandardResourceName(name: string): boolean {
  return STANDARD_RESOURCES.has(name) || isQuotaHugePageResourceName(name);
}

export function isStandardQuotaResourceName(name: string): boolean {
  return STANDARD_QUOTA_RESOURCES.has(name) || isQuotaHugePageResourceName(name);
}

/** Counted in whole units (object counts and extended resources). */
export function isIntegerResourceName(name: string): boolean {
  return INTEGER_RESOURCES.has(name) || isExtendedResourceName(name);
}

/** Requests may be lower than limits: native resources other than huge pages. */
export function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResourceName(name);
}

export function isStandardResourceQuotaScope(scope: string): boolean {
  return (RESOURCE_QUOTA_SCOPES as readonly string[]).includes(scope);
}

/** Which quota resources a scope may limit (Kubernetes' IsResourceQuotaScopeValidForResource). */
export function isResourceQuotaScopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || POD_COMPUTE_QUOTA_RESOURCES.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    default:
      return true;
  }
}

/** `path[key]`, Kubernetes' field path for a map entry. */
export function keyPath(path: string, key: string): string {
  return `${path}[${key}]`;
}

function invalidEach(path: string, value: string, msgs: string[]): FieldError[] {
  return msgs.map((m) => fieldErrors.invalid(path, value, m));
}

/** A qualified name, and standard unless it has a `/`. */
export function validateResourceName(value: string, path: string): FieldError[] {
  const errs = invalidEach(path, value, isQualifiedName(value));
  if (errs.length > 0) return errs;
  if (!value.includes('/') && !isStandardResourceName(value)) {
    errs.push(fieldErrors.invalid(path, value, 'must be a standard resource type or fully qualified'));
  }
  return errs;
}

/** A container may use cpu, memory, ephemeral-storage, huge pages, and extended resources. */
export function validateContainerResourceName(value: string, path: string): FieldError[] {
  const errs = validateResourceName(value, path);
  if (!value.includes('/')) {
    if (!isStandardContainerResourceName(value))
      errs.push(fieldErrors.invalid(path, value, 'must be a standard resource for containers'));
  } else if (!isNativeResource(value) && !isExtendedResourceName(value)) {
    errs.push(fieldErrors.invalid(path, value, "doesn't follow extended resource name standard"));
  }
  return errs;
}

export function validateResourceQuotaResourceName(value: string, path: string): FieldError[] {
  const errs = validateResourceName(value, path);
  if (!value.includes('/') && !isStandardQuotaResourceName(value)) {
    errs.push(fieldErrors.invalid(path, value, 'must be a standard resource for quota'));
  }
  return errs;
}

/** The quantity, or a field error when the text is not one. */
export function quantityAt(text: unknown, path: string): Quantity | FieldError {
  const q = typeof text === 'string' || typeof text === 'number' ? Quantity.tryParse(text) : undefined;
  return (
    q ??
    fieldErrors.invalid(
      path,
      text,
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )
  );
}

/** Not negative, and whole for integer resources. */
export function validateResourceQuantityValue(resource: string, value: Quantity, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (value.sign() < 0) errs.push(fieldErrors.invalid(path, value.toString(), 'must be greater than or equal to 0'));
  if (isIntegerResourceName(resource) && value.milliValue() % 1000n !== 0n) {
    errs.push(fieldErrors.invalid(path, value.toString(), 'must be an integer'));
  }
  return errs;
}

/**
 * Kubernetes' ValidateResourceRequirements (at `path`: `.limits[<name>]`, `.requests[<name>]`):
 * names for containers, values, requests at most their limit, and equal to it for resources
 * that may not be overcommitted (which then need a limit).
 */
export function validateResourceRequirements(
  r: { limits?: ResourceList; requests?: ResourceList } | undefined,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const limits = new Map<string, Quantity>();
  for (const [name, text] of Object.entries(r?.limits ?? {})) {
    const p = keyPath(`${path}.limits`, name);
    errs.push(...validateContainerResourceName(name, p));
    const q = quantityAt(text, p);
    if (!(q instanceof Quantity)) {
      errs.push(q);
      continue;
    }
    limits.set(name, q);
    errs.push(...validateResourceQuantityValue(name, q, p));
  }
  for (const [name, text] of Object.entries(r?.requests ?? {})) {
    const p = keyPath(`${path}.requests`, name);
    errs.push(...validateContainerResourceName(name, p));
    const q = quantityAt(text, p);
    if (!(q instanceof Quantity)) {
      errs.push(q);
      continue;
    }
    errs.push(...validateResourceQuantityValue(name, q, p));
    const limit = limits.get(name);
    if (limit) {
      if (q.cmp(limit) !== 0 && !isOvercommitAllowed(name)) {
        errs.push(
          fieldErrors.invalid(
            `${path}.requests`,
            q.toString(),
            `must be equal to ${name} limit of ${limit.toString()}`,
          ),
        );
      } else if (q.cmp(limit) > 0) {
        errs.push(
          fieldErrors.invalid(
            `${path}.requests`,
            q.toString(),
            `must be less than or equal to ${name} limit of ${limit.toString()}`,
          ),
        );
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(fieldErrors.required(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
    }
  }
  return errs;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Kubernetes' ValidateTolerations: keys, operators and values, effects, tolerationSeconds only with NoExecute. */
export function validateTolerations(tolerations: readonly Toleration[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((t, i) => {
    const p = `${path}[${i}]`;
    const key = t.key ?? '';
    const operator = t.operator ?? '';
    const value = t.value ?? '';
    const effect = t.effect ?? '';
    if (key) errs.push(...invalidEach(`${p}.key`, key, isQualifiedName(key)));
    if (!key && operator !== 'Exists') {
      errs.push(
        fieldErrors.invalid(
          `${p}.operator`,
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && effect !== 'NoExecute') {
      errs.push(
        fieldErrors.invalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
      );
    }
    if (operator === 'Equal' || operator === '') {
      const msgs = isValidLabelValue(value);
      if (msgs.length > 0) errs.push(fieldErrors.invalid(`${p}.operator`, value, msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value)
        errs.push(fieldErrors.invalid(`${p}.operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(fieldErrors.notSupported(`${p}.operator`, operator, ['Equal', 'Exists']));
    }
    if (effect && !TAINT_EFFECTS.includes(effect))
      errs.push(fieldErrors.notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
  });
  return errs;
}
