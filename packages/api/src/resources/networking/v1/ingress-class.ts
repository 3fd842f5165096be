import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { NONE } from '../../../table-format.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';

export const ingressClassSchema = objectSchema({
  spec: s.obj(
    {
      controller: s.str({ tag: 1 }),
      parameters: s.obj(
        {
          apiGroup: s.str({ tag: 1 }),
          kind: s.str({ tag: 2 }),
          name: s.str({ tag: 3 }),
          scope: s.str({ tag: 4 }),
          namespace: s.str({ tag: 5 }),
        },
        { tag: 2 },
      ),
    },
    { tag: 2 },
  ),
});

interface IngressClassView {
  spec?: { controller?: string; parameters?: { apiGroup?: string; kind?: string; name?: string } };
}

/** `Kind.apiGroup/name` of the parameters, as Kubernetes' printer shows them. */
function parametersCell(o: IngressClassView): string {
  const p = o.spec?.parameters;
  if (!p) return NONE;
  return `${p.kind ?? ''}${p.apiGroup !== undefined ? `.${p.apiGroup}` : ''}/${p.name ?? ''}`;
}

export const ingressClass = (): ResourceType =>
  defineResource({
    group: group('networking'),
    version: 'v1',
    kind: 'IngressClass',
    plural: 'ingressclasses',
    singular: 'ingressclass',
    namespaced: false,
    tableColumns: [
      nameColumn,
      column('Controller', 'string', (o) => (o as IngressClassView).spec?.controller ?? ''),
      column('Parameters', 'string', (o) => parametersCell(o as IngressClassView)),
      ageColumn,
    ],
    schema: ingressClassSchema,
  });
