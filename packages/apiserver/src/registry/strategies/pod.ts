import {
  fieldErrors,
  podConfigAnnotation,
  type ApiObject,
  type DeleteOptions,
  type FieldError,
  type PodSpec as WirePodSpec,
} from '@svc/api';
import {
  computePodQos,
  defaultPodSpec,
  defaultRequestsFromLimits,
  validateDnsLabel,
  validateResourceRequirements,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { privilegedAllowed } from './capabilities.js';

interface Container {
  name?: string;
  image?: string;
  imagePullPolicy?: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  ports?: Array<{ containerPort?: number; protocol?: string }>;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  securityContext?: { privileged?: boolean };
}
export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: EphemeralContainer[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  dnsPolicy?: string;
  schedulerName?: string;
  securityContext?: object;
  enableServiceLinks?: boolean;
  nodeName?: string;
  activeDeadlineSeconds?: number;
  tolerations?: unknown[];
}

const spec = (o: ApiObject): PodSpec => (o.spec ?? {}) as PodSpec;

type EphemeralContainer = Container & Record<string, unknown> & { targetContainerName?: string };

/**
 * The fields an ephemeral container may set (Kubernetes' allowedEphemeralContainerFields);
 * ports, probes, lifecycle, resources and the rest cannot be set for one.
 */
const EPHEMERAL_ALLOWED = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'envFrom',
  'env',
  'volumeMounts',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
]);

/** Go's IsZero for a decoded JSON value: absent, false, 0, '', an empty list or an object of zero values. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v).every(isZero);
  return false;
}

/** Kubernetes' validateEphemeralContainers for the fields checked here. */
function validateEphemeralContainers(s: PodSpec): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set([...(s.containers ?? []), ...(s.initContainers ?? [])].map((c) => c.name ?? ''));
  const all = new Set(others);
  (s.ephemeralContainers ?? []).forEach((c, i) => {
    const p = `spec.ephemeralContainers[${i}]`;
    if (!c.name) errs.push(fieldErrors.required(`${p}.name`, ''));
    else {
      errs.push(...validateDnsLabel(c.name, `${p}.name`));
      if (all.has(c.name)) errs.push(fieldErrors.duplicate(`${p}.name`, c.name));
      all.add(c.name);
    }
    if (!c.image || !c.image.trim()) errs.push(fieldErrors.required(`${p}.image`, ''));
    if (c.targetContainerName && !others.has(c.targetContainerName))
      errs.push({ path: `${p}.targetContainerName`, type: 'FieldValueNotFound', value: c.targetContainerName });
    for (const [k, v] of Object.entries(c))
      if (!EPHEMERAL_ALLOWED.has(k) && !isZero(v))
        errs.push(fieldErrors.forbidden(`${p}.${k}`, 'cannot be set for an Ephemeral Container'));
    ((c.volumeMounts ?? []) as Array<{ subPath?: string; subPathExpr?: string }>).forEach((m, j) => {
      if (m.subPath)
        errs.push(fieldErrors.forbidden(`${p}.volumeMounts[${j}].subPath`, 'cannot be set for an Ephemeral Container'));
      if (m.subPathExpr)
        errs.push(
          fieldErrors.forbidden(`${p}.volumeMounts[${j}].subPathExpr`, 'cannot be set for an Ephemeral Container'),
        );
    });
  });
  return errs;
}

/**
 * A write to `pods/<name>/ephemeralcontainers` (Kubernetes' ValidatePodEphemeralContainersUpdate):
 * static pods have none; existing ephemeral containers may be neither removed nor changed.
 */
function validateEphemeralContainersUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  if (old.metadata.annotations?.[podConfigAnnotation('mirror')] !== undefined)
    return [fieldErrors.forbidden('', 'static pods do not support ephemeral containers')];
  const errs = validateEphemeralContainers(spec(obj));
  const now = new Map((spec(obj).ephemeralContainers ?? []).map((c) => [c.name ?? '', c]));
  for (const was of spec(old).ephemeralContainers ?? []) {
    const name = was.name ?? '';
    const is = now.get(name);
    if (!is)
      errs.push(
        fieldErrors.forbidden(
          'spec.ephemeralContainers',
          `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`,
        ),
      );
    else if (JSON.stringify(canonical(is)) !== JSON.stringify(canonical(was)))
      errs.push(
        fieldErrors.forbidden(
          `spec.ephemeralContainers[${name}]`,
          `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n`,
        ),
      );
  }
  return errs;
}

/** A JSON value with its object keys sorted (for comparing decoded objects). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** Kubernetes' v1 defaults of an ephemeral container's fields. */
function defaultEphemeralContainers(s: PodSpec): void {
  for (const c of s.ephemeralContainers ?? []) {
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    if (!c.imagePullPolicy) {
      const last = (c.image ?? '').split('/').pop() ?? '';
      c.imagePullPolicy = !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
    }
  }
}

export { defaultPodSpec };

/** `names`: the container names seen so far in the pod (shared by containers and init containers). */
function validateContainers(
  list: Container[] | undefined,
  path: string,
  o: { required: boolean; names: Set<string> },
): FieldError[] {
  const { required, names } = o;
  const errs: FieldError[] = [];
  if (required && (!list || list.length === 0)) errs.push(fieldErrors.required(path, ''));
  (list ?? []).forEach((c, i) => {
    const p = `${path}[${i}]`;
    if (!c.name) errs.push(fieldErrors.required(`${p}.name`, ''));
    else {
      errs.push(...validateDnsLabel(c.name, `${p}.name`));
      if (names.has(c.name)) errs.push(fieldErrors.duplicate(`${p}.name`, c.name));
      names.add(c.name);
    }
    if (!c.image || !c.image.trim()) errs.push(fieldErrors.required(`${p}.image`, ''));
    errs.push(...validateResourceRequirements(c.resources, `${p}.resources`));
    if (c.securityContext?.privileged === true && !privilegedAllowed())
      errs.push(fieldErrors.forbidden(`${p}.securityContext.privileged`, 'disallowed by cluster policy'));
    (c.ports ?? []).forEach((port, j) => {
      const n = port.containerPort;
      if (typeof n !== 'number' || n < 1 || n > 65535) {
        errs.push(
          fieldErrors.invalid(`${p}.ports[${j}].containerPort`, n ?? 0, 'must be between 1 and 65535, inclusive'),
        );
      }
    });
  });
  return errs;
}

/** Kubernetes' ValidatePodSpec for the fields checked here; `path` is where the spec sits (`spec`, `spec.template.spec`). */
export function validatePodSpec(s: PodSpec, path: string): FieldError[] {
  const names = new Set<string>();
  const errs = [
    ...validateContainers(s.containers, `${path}.containers`, { required: true, names }),
    ...validateContainers(s.initContainers, `${path}.initContainers`, { required: false, names }),
  ];
  if (s.terminationGracePeriodSeconds !== undefined && s.terminationGracePeriodSeconds < 0) {
    errs.push(
      fieldErrors.invalid(
        `${path}.terminationGracePeriodSeconds`,
        s.terminationGracePeriodSeconds,
        'must be greater than or equal to 0',
      ),
    );
  }
  if (s.activeDeadlineSeconds !== undefined && s.activeDeadlineSeconds <= 0) {
    errs.push(
      fieldErrors.invalid(
        `${path}.activeDeadlineSeconds`,
        s.activeDeadlineSeconds,
        'must be between 1 and 2147483647, inclusive',
      ),
    );
  }
  return errs;
}

const validatePod = (obj: ApiObject): FieldError[] => validatePodSpec(spec(obj), 'spec');

/** The spec with the fields a pod update may change blanked out (images, deadline, tolerations). */
function mutableFieldsCleared(s: PodSpec): PodSpec {
  const c = structuredClone(s);
  // Pods stored before requests were defaulted from limits compare as Kubernetes reads them back.
  defaultRequestsFromLimits(c as WirePodSpec);
  for (const k of [...(c.containers ?? []), ...(c.initContainers ?? [])]) delete k.image;
  delete c.activeDeadlineSeconds;
  delete c.tolerations;
  delete c.terminationGracePeriodSeconds;
  return c;
}

export const podStrategy: Strategy = {
  prepareForCreate(obj) {
    defaultPodSpec(spec(obj));
    defaultRequestsFromLimits(spec(obj) as WirePodSpec);
    obj.spec = spec(obj);
    obj.status = { phase: 'Pending', qosClass: computePodQos(spec(obj) as WirePodSpec) };
  },
  prepareForUpdate(obj) {
    defaultPodSpec(spec(obj));
    defaultRequestsFromLimits(spec(obj) as WirePodSpec);
  },
  validate(obj) {
    const errs = validatePod(obj);
    if ((spec(obj).ephemeralContainers ?? []).length > 0)
      errs.push(fieldErrors.forbidden('spec.ephemeralContainers', 'cannot be set on create'));
    return errs;
  },
  // `pods/binding` writes (the binding handler built the whole object) and
  // `pods/ephemeralcontainers` writes, which change only `spec.ephemeralContainers`.
  prepareForSubresourceUpdate(obj, old, ctx) {
    if (ctx.subresource !== 'ephemeralcontainers') return { ...obj };
    const next = structuredClone(old);
    const s = spec(next);
    const asked = spec(obj).ephemeralContainers;
    if (asked === undefined) delete s.ephemeralContainers;
    else s.ephemeralContainers = structuredClone(asked);
    defaultEphemeralContainers(s);
    return next;
  },
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'ephemeralcontainers')
      return [...validatePod(obj), ...validateEphemeralContainersUpdate(obj, old)];
    const errs = validatePod(obj);
    if (ctx.subresource === 'binding') return errs;
    if (JSON.stringify(mutableFieldsCleared(spec(obj))) !== JSON.stringify(mutableFieldsCleared(spec(old)))) {
      errs.push(
        fieldErrors.forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        ),
      );
    }
    return errs;
  },
  gracePeriodSeconds(obj: ApiObject, options: DeleteOptions) {
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (!spec(obj).nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const g = options.gracePeriodSeconds ?? spec(obj).terminationGracePeriodSeconds ?? 30;
    return g < 0 ? 1 : g;
  },
  returnDeletedObject: true,
};
