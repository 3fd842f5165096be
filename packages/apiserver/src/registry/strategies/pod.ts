import {
  fieldErrors,
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
  validate: validatePod,
  // Only `pods/binding` writes reach here (`log` is read-only): the binding handler built the whole object.
  prepareForSubresourceUpdate: (obj) => ({ ...obj }),
  validateUpdate(obj, old, ctx) {
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
