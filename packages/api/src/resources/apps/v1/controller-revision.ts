import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';

/** Field numbers follow Kubernetes' apps/v1 generated.proto; `data` is a RawExtension. */
export const controllerRevisionSchema = objectSchema({
  data: s.any({ tag: 2, format: 'json-bytes' }),
  revision: s.int64({ tag: 3 }),
});

/** Kubernetes' printControllerRevision: `<kind>.<group>/<name>` of the controller (lower-case), else `<none>`. */
function controllerCell(o: ApiObject): string {
  const ref = o.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!ref) return NONE;
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  return `${(group ? `${ref.kind}.${group}` : ref.kind).toLowerCase()}/${ref.name}`;
}

export const controllerRevision = (): ResourceType =>
  defineResource({
    group: 'apps',
    version: 'v1',
    kind: 'ControllerRevision',
    plural: 'controllerrevisions',
    singular: 'controllerrevision',
    namespaced: true,
    tableColumns: [
      nameColumn,
      { ...column('Controller', 'string', controllerCell), description: 'Controller of the object' },
      {
        ...column('Revision', 'string', (o) => String((o as { revision?: number }).revision ?? 0)),
        description: 'Revision indicates the revision of the state represented by Data.',
      },
      ageColumn,
    ],
    schema: controllerRevisionSchema,
  });
