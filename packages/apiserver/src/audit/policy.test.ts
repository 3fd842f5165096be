import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditPolicy, AuditPolicyRule } from '@svc/api';
import { loadPolicyFile, parsePolicy, PolicyEvaluator, type PolicyAttributes } from './policy.js';

const V = { apiVersions: ['audit.svc.io/v1', 'audit.k8s.io/v1'] };

function evaluator(rules: AuditPolicyRule[], extra: Partial<AuditPolicy> = {}): PolicyEvaluator {
  return new PolicyEvaluator({ apiVersion: 'audit.svc.io/v1', kind: 'Policy', rules, ...extra });
}

const pods = (o: Partial<PolicyAttributes> = {}): PolicyAttributes => ({
  user: { name: 'alice', groups: ['dev', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns1/pods/p1',
  apiGroup: '',
  namespace: 'ns1',
  resource: 'pods',
  subresource: '',
  name: 'p1',
  ...o,
});

const nonResource = (path: string, o: Partial<PolicyAttributes> = {}): PolicyAttributes => ({
  ...pods(),
  isResourceRequest: false,
  path,
  apiGroup: '',
  namespace: '',
  resource: '',
  name: '',
  ...o,
});

describe('PolicyEvaluator', () => {
  it('takes the first matching rule; no match is None', () => {
    const e = evaluator([
      { level: 'RequestResponse', users: ['bob'] },
      { level: 'Request', userGroups: ['dev'] },
      { level: 'Metadata' },
    ]);
    expect(e.evaluate(pods()).level).toBe('Request');
    expect(e.evaluate(pods({ user: { name: 'bob', groups: [] } })).level).toBe('RequestResponse');
    expect(e.evaluate(pods({ user: { name: 'carol', groups: [] } })).level).toBe('Metadata');
    expect(evaluator([{ level: 'Metadata', users: ['bob'] }]).evaluate(pods()).level).toBe('None');
  });

  it('rules with users or groups never match a request without a user (failed authentication)', () => {
    const e = evaluator([
      { level: 'Request', users: ['alice'] },
      { level: 'Request', userGroups: ['dev'] },
    ]);
    expect(e.evaluate(pods({ user: undefined })).level).toBe('None');
  });

  it('matches verbs, namespaces (cluster scope is the empty namespace) and groups', () => {
    const e = evaluator([
      { level: 'RequestResponse', verbs: ['create'], namespaces: ['ns1'] },
      { level: 'Request', namespaces: [''] },
      { level: 'Metadata', resources: [{ group: 'apps', resources: ['deployments'] }] },
    ]);
    expect(e.evaluate(pods({ verb: 'create' })).level).toBe('RequestResponse');
    expect(e.evaluate(pods({ verb: 'get' })).level).toBe('None');
    expect(e.evaluate(pods({ namespace: '', resource: 'nodes' })).level).toBe('Request');
    expect(e.evaluate(pods({ apiGroup: 'apps', resource: 'deployments' })).level).toBe('Metadata');
    expect(e.evaluate(pods({ apiGroup: '', resource: 'deployments' })).level).toBe('None');
  });

  it('matches resources: names, `*`, `pods/log`, `*/log`, `pods/*`, resourceNames; a group without resources matches all', () => {
    const level = (gr: AuditPolicyRule['resources'], a: Partial<PolicyAttributes>): string =>
      evaluator([{ level: 'Metadata', resources: gr }]).evaluate(pods(a)).level;
    expect(level([{ resources: ['pods'] }], {})).toBe('Metadata');
    expect(level([{ resources: ['pods'] }], { subresource: 'log' })).toBe('None');
    expect(level([{ resources: ['pods/log'] }], { subresource: 'log' })).toBe('Metadata');
    expect(level([{ resources: ['pods/log'] }], {})).toBe('None');
    expect(level([{ resources: ['*'] }], { subresource: 'status' })).toBe('Metadata');
    expect(level([{ resources: ['*/log'] }], { resource: 'widgets', subresource: 'log' })).toBe('Metadata');
    expect(level([{ resources: ['*/log'] }], {})).toBe('None');
    expect(level([{ resources: ['pods/*'] }], { subresource: 'exec' })).toBe('Metadata');
    expect(level([{ resources: ['pods/*'] }], {})).toBe('Metadata');
    expect(level([{ resources: ['pods'], resourceNames: ['p1'] }], {})).toBe('Metadata');
    expect(level([{ resources: ['pods'], resourceNames: ['p2'] }], {})).toBe('None');
    expect(level([{ group: '' }], { resource: 'anything' })).toBe('Metadata');
    expect(level([{ group: 'apps' }], {})).toBe('None');
  });

  it('resource rules never match non-resource requests, and the other way round', () => {
    const e = evaluator([
      { level: 'Request', nonResourceURLs: ['/healthz*', '/version'] },
      { level: 'Metadata', resources: [{ resources: ['*'] }] },
    ]);
    expect(e.evaluate(nonResource('/healthz/etcd')).level).toBe('Request');
    expect(e.evaluate(nonResource('/version')).level).toBe('Request');
    expect(e.evaluate(nonResource('/versions')).level).toBe('None');
    expect(e.evaluate(pods()).level).toBe('Metadata');
    expect(evaluator([{ level: 'Request', nonResourceURLs: ['*'] }]).evaluate(pods()).level).toBe('None');
    expect(evaluator([{ level: 'Request', namespaces: ['ns1'] }]).evaluate(nonResource('/api')).level).toBe('None');
  });

  it('omits the policy-wide stages and the rule’s own; omitManagedFields of a rule overrides the policy’s', () => {
    const e = evaluator(
      [
        { level: 'Metadata', users: ['alice'], omitStages: ['ResponseStarted'], omitManagedFields: false },
        { level: 'Metadata' },
      ],
      { omitStages: ['RequestReceived'], omitManagedFields: true },
    );
    const alice = e.evaluate(pods());
    expect([...alice.omitStages].sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect(alice.omitManagedFields).toBe(false);
    const other = e.evaluate(pods({ user: { name: 'bob', groups: [] } }));
    expect([...other.omitStages]).toEqual(['RequestReceived']);
    expect(other.omitManagedFields).toBe(true);
  });
});

describe('parsePolicy', () => {
  it('reads YAML and JSON of either spelling of the group under the default naming', () => {
    const yaml =
      'apiVersion: audit.svc.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n';
    expect(parsePolicy(yaml, V).policy.rules).toEqual([{ level: 'Metadata' }]);
    const json = JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'None' }] });
    expect(parsePolicy(json, V).policy.rules).toEqual([{ level: 'None' }]);
  });

  it('warns about unknown fields (Kubernetes’ lenient fallback)', () => {
    const { warnings } = parsePolicy(
      'apiVersion: audit.svc.io/v1\nkind: Policy\nfoo: 1\nrules:\n- level: Metadata\n  bar: 2\n  resources: [{baz: 3}]\n',
      V,
    );
    expect(warnings).toEqual([
      'unknown field "foo"',
      'unknown field "rules[0].bar"',
      'unknown field "rules[0].resources[0].baz"',
    ]);
  });

  it.each([
    ['kind: Policy\nrules: [{level: Metadata}]', "Object 'Kind' is missing or 'apiVersion' is missing"],
    [
      'apiVersion: audit.svc.io/v2\nkind: Policy\nrules: [{level: Metadata}]',
      'unknown group version field audit.svc.io/v2',
    ],
    ['apiVersion: audit.svc.io/v1\nkind: Policy\nrules: []', 'loaded illegal policy with 0 rules'],
    ['apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: Loud}]', 'rules[0].level: Unsupported value: "Loud"'],
    ['apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{users: [a]}]', 'rules[0].level: Required value'],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, users: a}]',
      'rules[0].users: expected a list of strings',
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nomitStages: [Never]\nrules: [{level: None}]',
      'omitStages[0]: Invalid value: "Never": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz]}]',
      "non-resource URL rules must begin with a '/' character",
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/a*b"]}]',
      "non-resource URL wildcards '*' must be the final character of the rule",
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/a"], namespaces: [x]}]',
      'rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: "apps/v1"}]}]',
      'rules[0].resources.group: Invalid value: "apps/v1"',
    ],
    [
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resourceNames: [x]}]}]',
      'using resourceNames requires at least one resource',
    ],
    ['{not yaml', 'failed decoding'],
  ])('refuses %j', (text, message) => {
    expect(() => parsePolicy(text, V)).toThrow(message);
  });

  it('reports every validation error at once', () => {
    expect(() => parsePolicy('apiVersion: audit.svc.io/v1\nkind: Policy\nrules: [{level: A}, {level: B}]', V)).toThrow(
      /^\[rules\[0\]\.level: .*, rules\[1\]\.level: .*\]$/,
    );
  });

  it('names the file in a load error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-audit-policy-'));
    try {
      await writeFile(join(dir, 'p.yaml'), 'apiVersion: audit.svc.io/v1\nkind: Policy\nrules: []\n');
      expect(() => loadPolicyFile(join(dir, 'p.yaml'), V)).toThrow(
        `loaded illegal policy with 0 rules: from file ${dir}/p.yaml`,
      );
      expect(() => loadPolicyFile(join(dir, 'missing.yaml'), V)).toThrow('failed to read file path');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
