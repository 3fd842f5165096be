// ClusterTrustBundleAttest: inert while the API is not served; the attest check on a type that would be.
import { builtinCatalog, defineResource, type ApiObject } from '@svc/api';
import type { AuthorizationAttributes, Authorizer } from '../authz/authorizer.js';
import { ClusterTrustBundleAttest, onlyGcFieldsChange } from './cluster-trust-bundle-attest.js';
import { attributes, failure } from './admission-testing.js';

const asked: AuthorizationAttributes[] = [];
const attestOnly = (allowed: string): Authorizer => ({
  authorize: async (a) => {
    asked.push(a);
    return { decision: a.verb === 'attest' && a.name === allowed ? 'allow' : 'noOpinion' };
  },
});

const bundles = defineResource({
  group: 'certificates.svc.io',
  version: 'v1beta1',
  kind: 'ClusterTrustBundle',
  plural: 'clustertrustbundles',
  singular: 'clustertrustbundle',
  namespaced: false,
  schema: { type: 'object' } as never,
});

const bundle = (signerName?: string, extra: Partial<ApiObject['metadata']> = {}): ApiObject => ({
  metadata: { name: 'b', ...extra },
  spec: { signerName, trustBundle: 'pem' },
});
const user = { name: 'alice', groups: ['system:authenticated'] };

beforeEach(() => {
  asked.length = 0;
});

it('is never asked about anything this server serves', () => {
  expect(
    builtinCatalog()
      .all()
      .some((r) => r.plural === 'clustertrustbundles'),
  ).toBe(false);
});

it('admits every served resource without asking the authorizer', async () => {
  const plugin = new ClusterTrustBundleAttest(attestOnly('none'));
  await plugin.validate(attributes({ resource: 'configmaps', object: { metadata: { name: 'x' } }, user }));
  expect(asked).toEqual([]);
});

it('needs attest on the signer (or its domain) for bundles that name one', async () => {
  const plugin = new ClusterTrustBundleAttest(attestOnly('example.com/*'));
  await plugin.validate(attributes({ resource: bundles, object: bundle('example.com/a'), user }));
  expect(asked.map((a) => [a.verb, a.resource, a.name])).toEqual([
    ['attest', 'signers', 'example.com/a'],
    ['attest', 'signers', 'example.com/*'],
  ]);
  await plugin.validate(attributes({ resource: bundles, object: bundle(), user }));
  const s = await failure(plugin.validate(attributes({ resource: bundles, object: bundle('other.io/x'), user })));
  expect(s.message).toBe(
    'clustertrustbundles.certificates.svc.io "b" is forbidden: user not permitted to attest for signerName "other.io/x"',
  );
});

it('lets updates through that change only what the garbage collector changes', async () => {
  const plugin = new ClusterTrustBundleAttest(attestOnly('none'));
  const old = bundle('other.io/x');
  const now = bundle('other.io/x', { finalizers: ['f'], ownerReferences: [] });
  expect(onlyGcFieldsChange(now, old)).toBe(true);
  await plugin.validate(attributes({ resource: bundles, operation: 'UPDATE', object: now, oldObject: old, user }));
  const changed = { ...now, spec: { signerName: 'other.io/x', trustBundle: 'other' } };
  await failure(
    plugin.validate(attributes({ resource: bundles, operation: 'UPDATE', object: changed, oldObject: old, user })),
  );
});
