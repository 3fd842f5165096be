import { AbacAuthorizer, parseAbacPolicies } from './abac.js';
import type { AuthorizationAttributes } from './authorizer.js';

const policy = (spec: object): string =>
  JSON.stringify({ apiVersion: 'abac.authorization.svc.io/v1beta1', kind: 'Policy', spec });
const res = (user: string, groups: string[], o: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { name: user, groups },
  isResourceRequest: true,
  path: '',
  verb: 'get',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'ns',
  resource: 'pods',
  subresource: '',
  name: 'p',
  ...o,
});
const path = (user: string, p: string, verb = 'get'): AuthorizationAttributes =>
  res(user, [], { isResourceRequest: false, path: p, verb, namespace: '', resource: '', name: '' });

describe('ABAC', () => {
  const z = new AbacAuthorizer(
    parseAbacPolicies(
      [
        '# comment',
        policy({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
        policy({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
        policy({ group: 'system:authenticated', nonResourcePath: '/api*', readonly: true }),
        policy({ user: '*', nonResourcePath: '/version' }),
        policy({ group: 'ops', namespace: '', resource: 'nodes', apiGroup: '' }),
      ].join('\n'),
    ),
  );
  const decide = async (a: AuthorizationAttributes): Promise<string> => (await z.authorize(a)).decision;

  it('matches user, group, readonly, namespace, resource and group as Kubernetes', async () => {
    expect(await decide(res('alice', [], { verb: 'delete', apiGroup: 'apps', resource: 'deployments' }))).toBe('allow');
    expect(await decide(res('bob', [], { namespace: 'projectCaribou' }))).toBe('allow');
    expect(await decide(res('bob', [], { namespace: 'projectCaribou', verb: 'create' }))).toBe('noOpinion');
    expect(await decide(res('bob', [], { namespace: 'other' }))).toBe('noOpinion');
    expect(await decide(res('carol', ['ops'], { namespace: '', resource: 'nodes', verb: 'update' }))).toBe('allow');
    expect(await decide(res('carol', ['ops'], { namespace: 'ns', resource: 'nodes' }))).toBe('noOpinion');
  });

  it('matches non-resource paths exactly or by trailing *', async () => {
    expect(
      await decide({ ...path('dave', '/apis/apps'), user: { name: 'dave', groups: ['system:authenticated'] } }),
    ).toBe('allow');
    expect(
      await decide({ ...path('dave', '/apis/apps', 'post'), user: { name: 'dave', groups: ['system:authenticated'] } }),
    ).toBe('noOpinion');
    expect(await decide(path('anyone', '/version'))).toBe('allow');
    expect(await decide(path('anyone', '/version/x'))).toBe('noOpinion');
    expect(await decide(path('anyone', '/healthz'))).toBe('noOpinion');
  });

  it('refuses lines of another apiVersion or that do not parse, naming the line', () => {
    expect(() =>
      parseAbacPolicies('\n{"apiVersion":"abac.authorization.kubernetes.io/v1","kind":"Policy","spec":{}}', 'p.jsonl'),
    ).toThrow(/p\.jsonl:2: expected apiVersion abac\.authorization\.svc\.io\/v1beta1/);
    expect(() => parseAbacPolicies('{nope', 'p.jsonl')).toThrow(/p\.jsonl:1: /);
  });
});
