import { compactRuleString, nonResourceUrlMatches, ruleAllows, uncoveredRules } from './rules.js';

const attrs = (o: Partial<Parameters<typeof ruleAllows>[0]>): Parameters<typeof ruleAllows>[0] => ({
  isResourceRequest: true,
  verb: 'get',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  name: '',
  path: '',
  ...o,
});

describe('ruleAllows', () => {
  it('matches verbs, groups and resources, with * wildcards', () => {
    expect(ruleAllows(attrs({}), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).toBe(true);
    expect(ruleAllows(attrs({ verb: 'list' }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).toBe(false);
    expect(ruleAllows(attrs({ apiGroup: 'apps' }), { verbs: ['*'], apiGroups: [''], resources: ['*'] })).toBe(false);
    expect(
      ruleAllows(attrs({ apiGroup: 'apps', resource: 'deployments' }), {
        verbs: ['*'],
        apiGroups: ['*'],
        resources: ['*'],
      }),
    ).toBe(true);
  });

  it('subresources are <resource>/<subresource>; */<sub> matches any resource', () => {
    expect(ruleAllows(attrs({ subresource: 'log' }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] })).toBe(
      false,
    );
    expect(
      ruleAllows(attrs({ subresource: 'log' }), { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }),
    ).toBe(true);
    expect(
      ruleAllows(attrs({ subresource: 'status' }), { verbs: ['get'], apiGroups: [''], resources: ['*/status'] }),
    ).toBe(true);
    expect(ruleAllows(attrs({}), { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })).toBe(false);
  });

  it('resourceNames restrict to the named objects', () => {
    const r = { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] };
    expect(ruleAllows(attrs({ name: 'a' }), r)).toBe(true);
    expect(ruleAllows(attrs({ name: 'b' }), r)).toBe(false);
    expect(ruleAllows(attrs({ verb: 'list' }), { ...r, verbs: ['list'] })).toBe(false);
  });

  it('non-resource URLs: exact, trailing * prefix, or *', () => {
    expect(nonResourceUrlMatches('/healthz', '/healthz')).toBe(true);
    expect(nonResourceUrlMatches('/healthz', '/healthz/ping')).toBe(false);
    expect(nonResourceUrlMatches('/healthz/*', '/healthz/ping')).toBe(true);
    expect(nonResourceUrlMatches('*', '/anything')).toBe(true);
    expect(
      ruleAllows(attrs({ isResourceRequest: false, path: '/metrics' }), {
        verbs: ['get'],
        nonResourceURLs: ['/metrics'],
      }),
    ).toBe(true);
    expect(
      ruleAllows(attrs({ isResourceRequest: false, path: '/metrics' }), {
        verbs: ['get'],
        apiGroups: ['*'],
        resources: ['*'],
      }),
    ).toBe(false);
  });
});

describe('uncoveredRules (escalation)', () => {
  it('breaks servant rules down and reports what the owner lacks', () => {
    const owner = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }];
    expect(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])).toEqual([]);
    expect(
      uncoveredRules(owner, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]),
    ).toEqual([
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'] },
      { verbs: ['delete'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['delete'], apiGroups: [''], resources: ['secrets'] },
    ]);
  });

  it('resourceNames: owner without names covers named servants, not the reverse', () => {
    const named = [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }];
    expect(uncoveredRules([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], named)).toEqual([]);
    expect(uncoveredRules(named, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])).toHaveLength(1);
  });

  it('wildcards and non-resource URLs', () => {
    const admin = [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ];
    expect(
      uncoveredRules(admin, [
        { verbs: ['escalate'], apiGroups: ['x'], resources: ['y/z'] },
        { verbs: ['get'], nonResourceURLs: ['/a'] },
      ]),
    ).toEqual([]);
    expect(
      uncoveredRules(
        [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }],
        [{ verbs: ['get'], nonResourceURLs: ['/logs/a', '/metrics'] }],
      ),
    ).toEqual([{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
  });

  it('prints rules as Kubernetes does in escalation errors', () => {
    expect(compactRuleString({ verbs: ['get'], apiGroups: [''], resources: ['secrets'] })).toBe(
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
  });
});
