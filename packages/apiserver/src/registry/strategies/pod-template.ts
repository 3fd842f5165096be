import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import { validateAnnotations, validateLabels } from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { defaultPodSpec, validatePodSpec, type PodSpec } from './pod.js';

interface Template {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: PodSpec;
}

const templateOf = (o: ApiObject): Template | undefined => o.template as Template | undefined;

function defaults(obj: ApiObject): void {
  const t = (obj.template ??= {}) as Template;
  defaultPodSpec((t.spec ??= {} as PodSpec));
}

/** Kubernetes' ValidatePodTemplate: the template's labels, annotations and pod spec (any restart policy). */
function validate(obj: ApiObject): FieldError[] {
  const t = templateOf(obj);
  if (!t) return [fieldErrors.required('template', '')];
  return [
    ...validateLabels(t.metadata?.labels ?? {}, 'template.metadata.labels'),
    ...validateAnnotations(t.metadata?.annotations ?? {}, 'template.metadata.annotations'),
    ...validatePodSpec(t.spec ?? ({} as PodSpec), 'template.spec'),
  ];
}

/**
 * core/v1 PodTemplate (Kubernetes' podTemplateStrategy): the pod defaults in the template,
 * generation 1 on create and one more on each update that changes the template.
 */
export const podTemplateStrategy: Strategy = {
  prepareForCreate(obj) {
    defaults(obj);
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    defaults(obj);
    const was = old.metadata.generation ?? 1;
    obj.metadata.generation = deepEqual(obj.template, old.template) ? was : was + 1;
  },
  validate,
  validateUpdate: (obj) => validate(obj),
};
