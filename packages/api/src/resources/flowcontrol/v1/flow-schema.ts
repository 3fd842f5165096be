import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';

/** A FlowSchema's or PriorityLevelConfiguration's status condition (generated.proto's numbers). */
export const flowControlCondition = s.obj({
  type: s.str({ tag: 1 }),
  status: s.str({ tag: 2 }),
  lastTransitionTime: s.time({ tag: 3 }),
  reason: s.str({ tag: 4 }),
  message: s.str({ tag: 5 }),
});

const subject = s.obj({
  kind: s.str({ tag: 1 }),
  user: s.obj({ name: s.str({ tag: 1 }) }, { tag: 2 }),
  group: s.obj({ name: s.str({ tag: 1 }) }, { tag: 3 }),
  serviceAccount: s.obj({ namespace: s.str({ tag: 1 }), name: s.str({ tag: 2 }) }, { tag: 4 }),
});

const resourcePolicyRule = s.obj({
  verbs: s.set(s.str(), { tag: 1 }),
  apiGroups: s.set(s.str(), { tag: 2 }),
  resources: s.set(s.str(), { tag: 3 }),
  clusterScope: s.bool({ tag: 4 }),
  namespaces: s.set(s.str(), { tag: 5 }),
});

const nonResourcePolicyRule = s.obj({
  verbs: s.set(s.str(), { tag: 1 }),
  nonResourceURLs: s.set(s.str(), { tag: 6 }),
});

export const flowSchemaSchema = objectSchema({
  spec: s.obj(
    {
      priorityLevelConfiguration: s.obj({ name: s.str({ tag: 1 }) }, { tag: 1 }),
      matchingPrecedence: s.int32({ tag: 2 }),
      distinguisherMethod: s.obj({ type: s.str({ tag: 1 }) }, { tag: 3 }),
      rules: s.atomic(
        s.obj({
          subjects: s.atomic(subject, { tag: 1 }),
          resourceRules: s.atomic(resourcePolicyRule, { tag: 2 }),
          nonResourceRules: s.atomic(nonResourcePolicyRule, { tag: 3 }),
        }),
        { tag: 4 },
      ),
    },
    { tag: 2 },
  ),
  status: s.obj({ conditions: s.keyed(flowControlCondition, ['type'], { tag: 1 }) }, { tag: 3 }),
});

function specOf(o: ApiObject): Record<string, unknown> {
  const spec = (o as { spec?: unknown }).spec;
  return spec && typeof spec === 'object' ? (spec as Record<string, unknown>) : {};
}

/** kubectl's MissingPL: the Dangling condition's status, `?` before the controller set one. */
function missingPriorityLevel(o: ApiObject): string {
  const conditions = (o as { status?: { conditions?: Array<{ type?: string; status?: string }> } }).status?.conditions;
  const dangling = conditions?.find((c) => c.type === 'Dangling');
  return dangling?.status ?? '?';
}

export const flowSchema = (): ResourceType =>
  defineResource({
    group: group('flowcontrol.apiserver'),
    version: 'v1',
    kind: 'FlowSchema',
    plural: 'flowschemas',
    singular: 'flowschema',
    namespaced: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      column('PriorityLevel', 'string', (o) => {
        const ref = specOf(o).priorityLevelConfiguration as { name?: string } | undefined;
        return ref?.name ?? '';
      }),
      column('MatchingPrecedence', 'string', (o) => (specOf(o).matchingPrecedence as number | undefined) ?? 0),
      column('DistinguisherMethod', 'string', (o) => {
        const dm = specOf(o).distinguisherMethod as { type?: string } | undefined;
        return dm?.type ?? '<none>';
      }),
      ageColumn,
      column('MissingPL', 'string', missingPriorityLevel),
    ],
    schema: flowSchemaSchema,
  });
