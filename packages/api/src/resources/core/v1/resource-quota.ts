import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { quantityMap } from './common.js';

const scopedResourceSelectorRequirement = s.obj({
  scopeName: s.str({ tag: 1 }),
  operator: s.str({ tag: 2 }),
  values: s.atomic(s.str(), { tag: 3 }),
});

export const resourceQuotaSchema = objectSchema({
  spec: s.obj(
    {
      hard: { ...quantityMap, tag: 1 },
      scopes: s.atomic(s.str(), { tag: 2 }),
      scopeSelector: s.obj(
        { matchExpressions: s.atomic(scopedResourceSelectorRequirement, { tag: 1 }) },
        { tag: 3, structType: 'atomic' },
      ),
    },
    { tag: 2 },
  ),
  status: s.obj({ hard: { ...quantityMap, tag: 1 }, used: { ...quantityMap, tag: 2 } }, { tag: 3 }),
});

type Status = { hard?: Record<string, unknown>; used?: Record<string, unknown> };

/**
 * Kubernetes' quota printer: `<resource>: <used>/<hard>` for each enforced resource, sorted, the
 * `limits.*` ones in the Limit column and the others in the Request column.
 */
function usage(o: ApiObject, limits: boolean): string {
  const status = (o.status ?? {}) as Status;
  const names = Object.keys(status.hard ?? {}).sort();
  return names
    .filter((n) => (n.split('.').length > 1 && n.split('.')[0] === 'limits') === limits)
    .map((n) => `${n}: ${String(status.used?.[n] ?? '0')}/${String(status.hard?.[n] ?? '0')}`)
    .join(', ');
}

export const resourceQuota = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'ResourceQuota',
    plural: 'resourcequotas',
    singular: 'resourcequota',
    shortNames: ['quota'],
    namespaced: true,
    hasSpec: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      ageColumn,
      {
        ...column('Request', 'string', (o) => usage(o, false)),
        description: 'Request represents a minimum amount of cpu/memory that a container may consume.',
      },
      {
        ...column('Limit', 'string', (o) => usage(o, true)),
        description:
          'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
      },
    ],
    schema: resourceQuotaSchema,
  });
