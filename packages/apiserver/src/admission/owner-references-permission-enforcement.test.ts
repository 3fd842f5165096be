// OwnerReferencesPermissionEnforcement over a fake authorizer: delete to change references,
// update on the owner's finalizers to block its deletion.
import { builtinCatalog, type ApiObject, type OwnerReference } from '@svc/api';
import type { AuthorizationAttributes, Authorizer } from '../authz/authorizer.js';
import { OwnerReferencesPermissionEnforcement } from './owner-references-permission-enforcement.js';
import { attributes, failure } from './admission-testing.js';

const asked: string[] = [];
const show = (a: AuthorizationAttributes): string =>
  `${a.verb} ${a.apiGroup}/${a.resource}${a.subresource ? '/' + a.subresource : ''} ${a.namespace}/${a.name}`;

/** Allows exactly the questions listed (as `show` prints them). */
function authorizer(allowed: string[]): Authorizer {
  return {
    authorize: async (a) => {
      asked.push(show(a));
      return allowed.includes(show(a)) ? { decision: 'allow' } : { decision: 'noOpinion', reason: 'RBAC: nope' };
    },
  };
}

const plugin = (allowed: string[]): OwnerReferencesPermissionEnforcement =>
  new OwnerReferencesPermissionEnforcement({ authorizer: authorizer(allowed), catalog: builtinCatalog() });

const ref = (o: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: 'rs',
  uid: 'u1',
  ...o,
});
const pod = (ownerReferences?: OwnerReference[]): ApiObject => ({
  metadata: { name: 'p', namespace: 'ns', ...(ownerReferences ? { ownerReferences } : {}) },
  spec: {},
});
const user = { name: 'alice', groups: [] };

const write = (
  p: OwnerReferencesPermissionEnforcement,
  object: ApiObject,
  o: { oldObject?: ApiObject; subresource?: string } = {},
): Promise<void> =>
  p.validate(attributes({ resource: 'pods', operation: o.oldObject ? 'UPDATE' : 'CREATE', object, user, ...o }));

beforeEach(() => {
  asked.length = 0;
});

it('lets a create set references without delete, and a write that keeps them through unasked', async () => {
  await write(plugin([]), pod([ref()]));
  await write(plugin([]), pod([ref()]), { oldObject: pod([ref()]) });
  await write(plugin([]), pod(), { oldObject: pod() });
  expect(asked).toEqual([]);
});

it('needs delete on the object to change its references', async () => {
  const s = await failure(write(plugin([]), pod([ref()]), { oldObject: pod() }));
  expect([s.code, s.message]).toEqual([
    403,
    `pods "p" is forbidden: cannot set an ownerRef on a resource you can't delete: RBAC: nope, <nil>`,
  ]);
  expect(asked).toEqual(['delete /pods ns/p']);
  await write(plugin(['delete /pods ns/p']), pod(), { oldObject: pod([ref()]) });
});

it('needs update on the owner finalizers to block its deletion, after asking for all at once', async () => {
  const blocking = ref({ blockOwnerDeletion: true });
  const s = await failure(write(plugin([]), pod([blocking])));
  expect(s.message).toBe(
    `pods "p" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: RBAC: nope, <nil>`,
  );
  expect(asked).toEqual(['update */*/finalizers /*', 'update apps/replicasets/finalizers ns/rs']);
  await write(plugin(['update apps/replicasets/finalizers ns/rs']), pod([blocking]));
  await write(plugin(['update */*/finalizers /*']), pod([blocking]));
  // A cluster-scoped owner is asked about without a namespace.
  asked.length = 0;
  await failure(write(plugin([]), pod([ref({ apiVersion: 'v1', kind: 'Node', name: 'n', blockOwnerDeletion: true })])));
  expect(asked.at(-1)).toBe('update /nodes/finalizers /n');
});

it('asks only about references that start blocking', async () => {
  const p = plugin(['delete /pods ns/p']);
  await write(p, pod([ref({ blockOwnerDeletion: true })]), {
    oldObject: pod([ref({ blockOwnerDeletion: true, controller: true })]),
  });
  await write(p, pod([ref({ blockOwnerDeletion: false })]), { oldObject: pod([ref({ blockOwnerDeletion: true })]) });
  await failure(
    write(p, pod([ref({ blockOwnerDeletion: true })]), { oldObject: pod([ref({ blockOwnerDeletion: false })]) }),
  );
});

it('refuses to block the deletion of a kind the server does not serve', async () => {
  const s = await failure(
    write(plugin([]), pod([ref({ apiVersion: 'example.com/v1', kind: 'Widget', blockOwnerDeletion: true })])),
  );
  expect(s.message).toBe(
    'pods "p" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"',
  );
});

it('leaves pods/status and writes without a user alone', async () => {
  await write(plugin([]), pod([ref()]), { oldObject: pod(), subresource: 'status' });
  await plugin([]).validate(
    attributes({ resource: 'pods', operation: 'UPDATE', object: pod([ref()]), oldObject: pod() }),
  );
  expect(asked).toEqual([]);
});
