import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';

/** ComponentCondition, with Kubernetes' Protobuf numbers (type 1, status 2, message 3, error 4). */
const componentCondition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    message: s.str({ tag: 3 }),
    error: s.str({ tag: 4 }),
  },
  { required: ['type', 'status'] },
);

/** core/v1 ComponentStatus: metadata 1, conditions 2 (a list keyed by type). */
export const componentStatusSchema = objectSchema({
  conditions: s.keyed(componentCondition, ['type'], { tag: 2 }),
});

interface ComponentCondition {
  type?: string;
  status?: string;
  message?: string;
  error?: string;
}

/** The `Healthy` condition, as kubectl's printer reads it (the first of that type). */
function healthy(o: ApiObject): ComponentCondition | undefined {
  return ((o as { conditions?: ComponentCondition[] }).conditions ?? []).find((c) => c.type === 'Healthy');
}

/**
 * core/v1 ComponentStatus (deprecated in v1.19+): the health of the control plane's
 * components as the API server sees it. Never stored: each get or list probes the
 * controller manager, the scheduler and the store (`registry/component-status.ts`).
 * Cluster-scoped, short name `cs`, only `get` and `list`; kubectl's columns Name, Status
 * (Healthy when the condition is True, else Unhealthy; Unknown without one), Message, Error.
 */
export const componentStatus = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'ComponentStatus',
    plural: 'componentstatuses',
    singular: 'componentstatus',
    shortNames: ['cs'],
    namespaced: false,
    hasSpec: false,
    strategicMerge: false,
    verbs: ['get', 'list'],
    virtual: true,
    tableColumns: [
      nameColumn,
      {
        ...column('Status', 'string', (o) => {
          const c = healthy(o);
          return c === undefined ? 'Unknown' : c.status === 'True' ? 'Healthy' : 'Unhealthy';
        }),
        description: 'Status of the component conditions',
      },
      {
        ...column('Message', 'string', (o) => healthy(o)?.message ?? ''),
        description: 'Message of the component conditions',
      },
      {
        ...column('Error', 'string', (o) => healthy(o)?.error ?? ''),
        description: 'Error of the component conditions',
      },
    ],
    schema: componentStatusSchema,
  });
