import { builtinCatalog, group, isStatusError, type ApiObject } from '@svc/api';
import type { AdmissionAttributes } from '../admission.js';
import type { AuthorizationAttributes } from '../../authz/authorizer.js';
import { PolicyParamAuthorization } from './param-authorization.js';

const catalog = builtinCatalog();
const ar = group('admissionregistration');
const asked: AuthorizationAttributes[] = [];
const check = new PolicyParamAuthorization({
  catalog,
  authorizer: {
    authorize: async (a) => {
      asked.push(a);
      return { decision: a.namespace === 'params' ? 'allow' : 'noOpinion' };
    },
  },
  policy: async (name) =>
    name === 'p'
      ? {
          apiVersion: `${ar}/v1`,
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name },
          spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } },
        }
      : undefined,
});

const alice = { name: 'alice', uid: '42', groups: ['devs', 'system:authenticated'] };

function write(plural: string, object: ApiObject, o: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  const resource = catalog.lookup(ar, 'v1', plural);
  if (!resource) throw new Error(plural);
  return {
    operation: 'CREATE',
    resource,
    subresource: '',
    namespace: '',
    name: object.metadata.name ?? '',
    object,
    dryRun: false,
    user: alice,
    warnings: [],
    annotations: {},
    ...o,
  };
}

async function refusal(a: AdmissionAttributes): Promise<string | undefined> {
  try {
    await check.validate(a);
    return undefined;
  } catch (e) {
    if (!isStatusError(e)) throw e;
    return e.status.message;
  }
}

const policy = (paramKind?: object): ApiObject => ({
  apiVersion: `${ar}/v1`,
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'p' },
  spec: paramKind ? { paramKind } : {},
});

const binding = (paramRef?: object): ApiObject => ({
  apiVersion: `${ar}/v1`,
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'b' },
  spec: { policyName: 'p', validationActions: ['Deny'], ...(paramRef ? { paramRef } : {}) },
});

describe('the param read check on policy writes', () => {
  it('needs get on every object of the paramKind', async () => {
    asked.length = 0;
    expect(await refusal(write('validatingadmissionpolicies', policy({ apiVersion: 'v1', kind: 'ConfigMap' })))).toBe(
      `ValidatingAdmissionPolicy.${ar} "p" is invalid: spec.paramKind: Forbidden: user &{alice 42 [devs system:authenticated] map[]} must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)`,
    );
    expect(asked[0]).toMatchObject({
      verb: 'get',
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'configmaps',
      namespace: '*',
      name: '*',
    });
  });

  it('is not made for system:masters, policies without params, or an unchanged paramKind', async () => {
    const pk = { apiVersion: 'v1', kind: 'ConfigMap' };
    const masters = { name: 'admin', groups: ['system:masters'] };
    expect(await refusal(write('validatingadmissionpolicies', policy(pk), { user: masters }))).toBeUndefined();
    expect(await refusal(write('validatingadmissionpolicies', policy()))).toBeUndefined();
    const update = { operation: 'UPDATE' as const, oldObject: policy(pk) };
    expect(await refusal(write('validatingadmissionpolicies', policy(pk), update))).toBeUndefined();
  });

  it("needs get on a binding's paramRef, resolved through its policy's paramKind", async () => {
    asked.length = 0;
    const ref = { name: 'limits', namespace: 'other', parameterNotFoundAction: 'Deny' };
    expect(await refusal(write('validatingadmissionpolicybindings', binding(ref)))).toBe(
      `ValidatingAdmissionPolicyBinding.${ar} "b" is invalid: spec.paramRef: Forbidden: user &{alice 42 [devs system:authenticated] map[]} does not have "get" permission on the object referenced by paramRef`,
    );
    expect(asked[0]).toMatchObject({ resource: 'configmaps', namespace: 'other', name: 'limits' });
    expect(
      await refusal(write('validatingadmissionpolicybindings', binding({ ...ref, namespace: 'params' }))),
    ).toBeUndefined();
  });
});
