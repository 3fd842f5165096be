import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { column, nameColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';
import { podTemplateSpec } from './pod.js';

interface PodTemplateView {
  template?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { containers?: Array<{ name?: string; image?: string }> };
  };
}

const containers = (o: ApiObject): Array<{ name?: string; image?: string }> =>
  (o as PodTemplateView).template?.spec?.containers ?? [];

/** Kubernetes' labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when empty. */
function podLabels(o: ApiObject): string {
  const pairs = Object.entries((o as PodTemplateView).template?.metadata?.labels ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return pairs.map(([k, v]) => `${k}=${v}`).join(',') || NONE;
}

/** core/v1 PodTemplate, with Kubernetes' Protobuf field numbers (metadata 1, template 2). */
export const podTemplateSchema = objectSchema({
  template: { ...podTemplateSpec, tag: 2 },
});

/** core/v1 PodTemplate: namespaced, no subresources; kubectl's columns Name, Containers, Images, Pod Labels (no age). */
export const podTemplate = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'PodTemplate',
    plural: 'podtemplates',
    singular: 'podtemplate',
    namespaced: true,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      {
        ...column('Containers', 'string', (o) =>
          containers(o)
            .map((c) => c.name ?? '')
            .join(','),
        ),
        description: 'Names of each container in the template.',
      },
      {
        ...column('Images', 'string', (o) =>
          containers(o)
            .map((c) => c.image ?? '')
            .join(','),
        ),
        description: 'Images referenced by each container in the template.',
      },
      { ...column('Pod Labels', 'string', podLabels), description: 'The labels for the pod template.' },
    ],
    schema: podTemplateSchema,
  });
