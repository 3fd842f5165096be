// ValidatingAdmissionPolicy end to end, on a real etcd over HTTPS: denials with Kubernetes'
// message, reason and code; messageExpression; params from a ConfigMap and from a custom
// resource; Warn; variables; matchConditions; a policy that does not compile (422);
// failurePolicy on a runtime error; a custom resource under a policy; stock kubectl's output;
// status.typeChecking from the status controller.
import { group } from '@svc/api';
import {
  createNamespace,
  expectCode,
  expectFailure,
  startKubectlEnv,
  uniqueName,
  waitFor,
  type HttpsClient,
  type Json,
  type KubectlEnv,
} from '@svc/testing';

let env: KubectlEnv;
let client: HttpsClient;
const AR = (): string => `/apis/${group('admissionregistration')}/v1`;
const CRDS = (): string => `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;

beforeAll(async () => {
  env = await startKubectlEnv();
  client = env.server.client;
});

afterAll(async () => {
  await env?.stop();
});

/** A namespace of its own for each test, labelled so only that test's policy selects it. */
async function labelledNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(client, prefix);
  const patch = { metadata: { labels: { 'vap-test': ns } } };
  expectCode(await client.patch(`/api/v1/namespaces/${ns}`, patch, 'application/merge-patch+json'), 200);
  return ns;
}

const configMapRules = (operations = ['CREATE', 'UPDATE']) => [
  { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations },
];

/** A policy over the ConfigMaps of namespace `ns`, and its binding; returns both names. */
async function policyFor(
  ns: string,
  o: { spec: Json; actions?: string[]; paramRef?: Json; bindingMatch?: Json },
): Promise<{ policy: string; binding: string }> {
  const policy = uniqueName('policy');
  const binding = uniqueName('binding');
  const body = {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policy },
    spec: {
      matchConstraints: { resourceRules: configMapRules(), namespaceSelector: { matchLabels: { 'vap-test': ns } } },
      ...o.spec,
    },
  };
  expectCode(await client.post(`${AR()}/validatingadmissionpolicies`, body), 201);
  const b = {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: binding },
    spec: {
      policyName: policy,
      validationActions: o.actions ?? ['Deny'],
      ...(o.paramRef ? { paramRef: o.paramRef } : {}),
      ...(o.bindingMatch ? { matchResources: o.bindingMatch } : {}),
    },
  };
  expectCode(await client.post(`${AR()}/validatingadmissionpolicybindings`, b), 201);
  return { policy, binding };
}

const configMap = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

const createCm = (ns: string, cm: Json, query = '') => client.post(`/api/v1/namespaces/${ns}/configmaps${query}`, cm);

/** Waits until the policy is enforced: creating `cm` (dry run) is refused. */
async function enforced(ns: string, cm: Json): Promise<Json> {
  return waitFor('the policy to be enforced', async () => {
    const r = await createCm(ns, cm, '?dryRun=All');
    return r.status >= 400 ? r.json<Json>() : undefined;
  });
}

const denied = (p: { policy: string; binding: string }, message: string): string =>
  `ValidatingAdmissionPolicy '${p.policy}' with binding '${p.binding}' denied request: ${message}`;

describe('validations', () => {
  let ns: string;
  let p: { policy: string; binding: string };

  beforeAll(async () => {
    ns = await labelledNamespace('vap-rules');
    p = await policyFor(ns, {
      spec: {
        validations: [
          { expression: "object.metadata.name.startsWith('cm-')", message: 'name must start with cm-' },
          {
            expression: '!has(object.data) || object.data.size() <= 2',
            messageExpression: "'too many keys: ' + string(object.data.size())",
          },
          {
            expression: "!has(object.data) || !('password' in object.data)",
            reason: 'Forbidden',
            message: 'no passwords',
          },
          { expression: "!has(object.data) || !('token' in object.data)" },
        ],
      },
    });
    await enforced(ns, configMap('x'));
  });

  it('deny with Kubernetes message: the first failed rule, reason Invalid (422) by default', async () => {
    const s = expectFailure(await createCm(ns, configMap('x')), {
      code: 422,
      reason: 'Invalid',
      message: `configmaps "x" is forbidden: ${denied(p, 'name must start with cm-')}`,
    });
    expect(s.details).toEqual({
      name: 'x',
      kind: 'configmaps',
      causes: [{ message: denied(p, 'name must start with cm-') }],
    });
  });

  it('take the message from messageExpression', async () => {
    const cm = configMap('cm-a', { a: '1', b: '2', c: '3' });
    expectFailure(await createCm(ns, cm), { code: 422, reason: 'Invalid', message: /too many keys: 3$/ });
  });

  it("answer with the rule's reason and its code", async () => {
    const cm = configMap('cm-b', { password: 'x' });
    expectFailure(await createCm(ns, cm), { code: 403, reason: 'Forbidden', message: /denied request: no passwords$/ });
  });

  it('say which expression failed when the rule has no message', async () => {
    const cm = configMap('cm-c', { token: 'x' });
    const s = expectFailure(await createCm(ns, cm), { code: 422, reason: 'Invalid' });
    expect(s.message).toContain(`denied request: failed expression: !has(object.data) || !('token' in object.data)`);
  });

  it('admit what passes every rule, and check updates too', async () => {
    expectCode(await createCm(ns, configMap('cm-ok', { a: '1' })), 201);
    const bigger = { data: { a: '1', b: '2', c: '3' } };
    const r = await client.patch(`/api/v1/namespaces/${ns}/configmaps/cm-ok`, bigger, 'application/merge-patch+json');
    expectFailure(r, { code: 422, reason: 'Invalid', message: /too many keys: 3$/ });
  });

  it('leave other namespaces alone', async () => {
    const other = await createNamespace(client, 'vap-other');
    expectCode(await createCm(other, configMap('x', { password: 'p' })), 201);
  });
});

describe('a policy that does not compile', () => {
  it('is refused with 422 and the compiler message', async () => {
    const body = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: uniqueName('bad') },
      spec: {
        matchConstraints: { resourceRules: configMapRules() },
        validations: [{ expression: 'object.data.size() >' }, { expression: 'params.max > 1' }, { expression: '1' }],
      },
    };
    const s = expectFailure(await client.post(`${AR()}/validatingadmissionpolicies`, body), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.message).toMatch(
      new RegExp(
        `^ValidatingAdmissionPolicy\\.${group('admissionregistration').replace(/\./g, '\\.')} "${body.metadata.name}" is invalid: \\[`,
      ),
    );
    const fields = (s.details?.causes ?? []).map((c) => c.field);
    expect(fields).toEqual([
      'spec.validations[0].expression',
      'spec.validations[1].expression',
      'spec.validations[2].expression',
    ]);
    expect(s.details?.causes?.[1]?.message).toContain("undeclared reference to 'params'");
    expect(s.details?.causes?.[2]?.message).toBe('Invalid value: "1": must evaluate to bool but got int');
  });

  it('and a binding needs its actions', async () => {
    const b = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: uniqueName('b') },
      spec: { policyName: 'p', validationActions: ['Deny', 'Warn'] },
    };
    const s = expectFailure(await client.post(`${AR()}/validatingadmissionpolicybindings`, b), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.message).toContain(
      'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn',
    );
  });
});

describe('defaults', () => {
  it('are Kubernetes: failurePolicy Fail, matchPolicy Equivalent, empty selectors, scope *; status empty', async () => {
    const name = uniqueName('defaults');
    const body = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: { matchConstraints: { resourceRules: configMapRules() }, validations: [{ expression: 'true' }] },
      status: { observedGeneration: 7 },
    };
    const got = expectCode(await client.post(`${AR()}/validatingadmissionpolicies`, body), 201);
    expect(got.spec.failurePolicy).toBe('Fail');
    expect(got.spec.matchConstraints).toEqual({
      resourceRules: configMapRules().map((r) => ({ ...r, scope: '*' })),
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
    expect(got.status?.observedGeneration).not.toBe(7);
  });
});

describe('params', () => {
  it('come from a ConfigMap named by the binding (Deny when it is missing)', async () => {
    const ns = await labelledNamespace('vap-params');
    const p = await policyFor(ns, {
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: configMapRules(),
          namespaceSelector: { matchLabels: { 'vap-test': ns } },
          objectSelector: { matchExpressions: [{ key: 'role', operator: 'DoesNotExist' }] },
        },
        validations: [
          {
            expression: 'object.data.size() <= int(params.data.maxKeys)',
            messageExpression: "'at most ' + params.data.maxKeys + ' keys'",
          },
        ],
      },
      paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' },
    });
    const missing = await enforced(ns, configMap('a'));
    expect(missing.message).toBe(
      `configmaps "a" is forbidden: ${denied(p, 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction')}`,
    );
    expectCode(await createCm(ns, configMap('limits', { maxKeys: '1' }, { role: 'params' })), 201);
    await waitFor('the params', async () => (await createCm(ns, configMap('one', { a: '1' }))).status === 201);
    expectFailure(await createCm(ns, configMap('two', { a: '1', b: '2' })), {
      code: 422,
      reason: 'Invalid',
      message: /denied request: at most 1 keys$/,
    });
    const raise = { data: { maxKeys: '2' } };
    expectCode(
      await client.patch(`/api/v1/namespaces/${ns}/configmaps/limits`, raise, 'application/merge-patch+json'),
      200,
    );
    await waitFor(
      'the new params',
      async () => (await createCm(ns, configMap('two', { a: '1', b: '2' }))).status === 201,
    );
  });

  it('come from custom resources, by selector, with Allow when none match', async () => {
    const ns = await labelledNamespace('vap-crparams');
    const g = `${uniqueName('limits')}.example.com`;
    const crd = {
      apiVersion: `${group('apiextensions')}/v1`,
      kind: 'CustomResourceDefinition',
      metadata: { name: `limits.${g}` },
      spec: {
        group: g,
        scope: 'Cluster',
        names: { plural: 'limits', singular: 'limit', kind: 'Limit', listKind: 'LimitList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { maxKeys: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    expectCode(await client.post(CRDS(), crd), 201);
    await waitFor('the CRD to be served', async () => (await client.get(`/apis/${g}/v1/limits`)).status === 200);
    const p = await policyFor(ns, {
      spec: {
        paramKind: { apiVersion: `${g}/v1`, kind: 'Limit' },
        validations: [
          {
            expression: 'object.data.size() <= params.spec.maxKeys',
            messageExpression: "params.metadata.name + ' allows ' + string(params.spec.maxKeys)",
          },
        ],
      },
      paramRef: { selector: { matchLabels: { tier: 'small' } }, parameterNotFoundAction: 'Allow' },
    });
    const limit = (name: string, maxKeys: number) => ({
      apiVersion: `${g}/v1`,
      kind: 'Limit',
      metadata: { name, labels: { tier: 'small' } },
      spec: { maxKeys },
    });
    // No Limit matches yet: Allow admits.
    expectCode(await createCm(ns, configMap('free', { a: '1', b: '2' })), 201);
    expectCode(await client.post(`/apis/${g}/v1/limits`, limit('one', 1)), 201);
    const s = await enforced(ns, configMap('x', { a: '1', b: '2' }));
    expect(s.message).toContain(denied(p, 'one allows 1'));
    // Every matching param is evaluated: both must pass.
    expectCode(await client.post(`/apis/${g}/v1/limits`, limit('three', 3)), 201);
    expectCode(await createCm(ns, configMap('y', { a: '1' })), 201);
  });
});

describe('validationActions', () => {
  it('Warn admits with a Warning header in Kubernetes words; Audit admits silently', async () => {
    const ns = await labelledNamespace('vap-warn');
    const p = await policyFor(ns, {
      spec: { validations: [{ expression: "object.metadata.name != 'warned'", message: 'this name is frowned upon' }] },
      actions: ['Warn', 'Audit'],
    });
    const res = await waitFor('the warning', async () => {
      const r = await createCm(ns, configMap('warned'), '?dryRun=All');
      return r.headers.warning ? r : undefined;
    });
    expect(res.status).toBe(201);
    expect(res.headers.warning).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy '${p.policy}' with binding '${p.binding}': this name is frowned upon"`,
    );
  });
});

describe('variables and matchConditions', () => {
  it('compose variables, and skip requests a matchCondition rules out', async () => {
    const ns = await labelledNamespace('vap-vars');
    await policyFor(ns, {
      spec: {
        variables: [
          { name: 'keys', expression: 'has(object.data) ? object.data.size() : 0' },
          { name: 'tooMany', expression: 'variables.keys > 1' },
        ],
        matchConditions: [
          { name: 'not-skipped', expression: "!has(object.metadata.labels) || object.metadata.labels.skip != 'true'" },
          {
            name: 'admins-exempt',
            expression: "!('system:masters' in request.userInfo.groups) || request.name != 'by-admin'",
          },
        ],
        validations: [{ expression: '!variables.tooMany', messageExpression: "string(variables.keys) + ' keys'" }],
      },
    });
    await enforced(ns, configMap('two', { a: '1', b: '2' }));
    expectFailure(await createCm(ns, configMap('two', { a: '1', b: '2' })), {
      code: 422,
      reason: 'Invalid',
      message: /denied request: 2 keys$/,
    });
    expectCode(await createCm(ns, configMap('skipped', { a: '1', b: '2' }, { skip: 'true' })), 201);
    expectCode(await createCm(ns, configMap('by-admin', { a: '1', b: '2' })), 201);
  });
});

describe('failurePolicy on a runtime error', () => {
  it('Fail denies with the error; Ignore admits', async () => {
    const ns = await labelledNamespace('vap-fail');
    const expression = "object.data.missing == 'x'";
    const p = await policyFor(ns, { spec: { failurePolicy: 'Fail', validations: [{ expression }] } });
    const s = await enforced(ns, configMap('a', { b: '1' }));
    expect(s.code).toBe(422);
    expect(s.message).toBe(
      `configmaps "a" is forbidden: ${denied(p, `expression '${expression}' resulted in error: no such key: missing`)}`,
    );
    const ns2 = await labelledNamespace('vap-ignore');
    await policyFor(ns2, {
      spec: {
        failurePolicy: 'Ignore',
        validations: [{ expression }, { expression: "object.metadata.name != 'no'", message: 'not no' }],
      },
    });
    await enforced(ns2, configMap('no', { b: '1' }));
    expectCode(await createCm(ns2, configMap('a', { b: '1' })), 201);
  });
});

describe('a custom resource', () => {
  it('is governed by a policy over its group and resource', async () => {
    const g = `${uniqueName('widgets')}.example.com`;
    const crd = {
      apiVersion: `${group('apiextensions')}/v1`,
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${g}` },
      spec: {
        group: g,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    expectCode(await client.post(CRDS(), crd), 201);
    const ns = await labelledNamespace('vap-cr');
    await waitFor('the CRD to be served', async () => (await client.get(`/apis/${g}/v1/widgets`)).status === 200);
    await policyFor(ns, {
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: [g], apiVersions: ['*'], resources: ['widgets'], operations: ['*'] }],
          namespaceSelector: { matchLabels: { 'vap-test': ns } },
        },
        validations: [
          {
            expression: 'object.spec.size <= 10',
            messageExpression: "'size ' + string(object.spec.size) + ' is over 10'",
            reason: 'RequestEntityTooLarge',
          },
        ],
      },
    });
    const widget = (name: string, size: number) => ({
      apiVersion: `${g}/v1`,
      kind: 'Widget',
      metadata: { name },
      spec: { size },
    });
    const res = await waitFor('the policy', async () => {
      const r = await client.post(`/apis/${g}/v1/namespaces/${ns}/widgets`, widget('big', 11));
      return r.status >= 400 ? r : undefined;
    });
    expectFailure(res, {
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: new RegExp(`^widgets\\.${g.replace(/\./g, '\\.')} "big" is forbidden: .*size 11 is over 10$`),
    });
    expectCode(await client.post(`/apis/${g}/v1/namespaces/${ns}/widgets`, widget('small', 3)), 201);
  });
});

describe('stock kubectl', () => {
  it('prints the denial and the Warning lines', async () => {
    const ns = await labelledNamespace('vap-kubectl');
    const deny = await policyFor(ns, {
      spec: { validations: [{ expression: "object.metadata.name != 'denied'", message: 'denied by policy' }] },
    });
    const warn = await policyFor(ns, {
      spec: { validations: [{ expression: "object.metadata.name != 'warned'", message: 'please rename' }] },
      actions: ['Warn'],
    });
    await enforced(ns, configMap('denied'));
    await waitFor('the warning', async () => (await createCm(ns, configMap('warned'), '?dryRun=All')).headers.warning);
    const bad = await env.run(['create', 'configmap', 'denied', '-n', ns, '--from-literal=a=b']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toBe(
      `error: failed to create configmap: configmaps "denied" is forbidden: ${denied(deny, 'denied by policy')}\n`,
    );
    const deniedFile = await env.manifest({ ...configMap('denied'), metadata: { name: 'denied', namespace: ns } });
    const bad2 = await env.run(['create', '-f', deniedFile]);
    expect(bad2.code).not.toBe(0);
    expect(bad2.stderr).toContain(`The configmaps "denied" is invalid: : ${denied(deny, 'denied by policy')}`);
    const file = await env.manifest({
      ...configMap('warned', { a: 'b' }),
      metadata: { name: 'warned', namespace: ns },
    });
    const ok = await env.ok(['apply', '-f', file]);
    expect(ok.stdout).toContain('configmap/warned created');
    expect(ok.stderr).toContain(
      `Warning: Validation failed for ValidatingAdmissionPolicy '${warn.policy}' with binding '${warn.binding}': please rename`,
    );
    const table = await env.ok(['get', `validatingadmissionpolicies.${group('admissionregistration')}`, deny.policy]);
    expect(table.stdout).toMatch(
      new RegExp(`^NAME\\s+VALIDATIONS\\s+PARAMKIND\\s+AGE\\n${deny.policy}\\s+1\\s+<unset>\\s+`),
    );
  });
});

describe('the status controller', () => {
  it('writes status.typeChecking and observedGeneration', async () => {
    const name = uniqueName('typed');
    const body = {
      apiVersion: `${group('admissionregistration')}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        matchConstraints: { resourceRules: configMapRules(['CREATE']) },
        validations: [
          { expression: 'object.spec.replicas > 1' },
          { expression: "object.data.all(k, k != '')", messageExpression: "'in ' + object.metadata.name" },
        ],
      },
    };
    expectCode(await client.post(`${AR()}/validatingadmissionpolicies`, body), 201);
    const path = `${AR()}/validatingadmissionpolicies/${name}`;
    const got = await waitFor('the status', async () => {
      const p = expectCode(await client.get(path), 200);
      return p.status?.observedGeneration === 1 ? p : undefined;
    });
    expect(got.status.typeChecking).toEqual({
      expressionWarnings: [
        {
          fieldRef: 'spec.validations[0].expression',
          warning:
            "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'spec'\n | object.spec.replicas > 1\n | ......^\n",
        },
      ],
    });
    const fixed = { spec: { validations: [{ expression: 'object.data.size() > 1' }] } };
    expectCode(await client.patch(path, fixed, 'application/merge-patch+json'), 200);
    const again = await waitFor('the new status', async () => {
      const p = expectCode(await client.get(path), 200);
      return p.status?.observedGeneration === 2 ? p : undefined;
    });
    expect(again.status.typeChecking).toEqual({});
  });
});

describe('under --naming=kubernetes', () => {
  let k8s: KubectlEnv;

  beforeAll(async () => {
    k8s = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });

  afterAll(async () => {
    await k8s?.stop();
  });

  it('stock kubectl applies a policy and its binding from YAML, lists them, and shows the denial', async () => {
    const manifest = [
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'demo-policy.example.com' },
        spec: {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: configMapRules(['CREATE']) },
          validations: [
            {
              expression: '!has(object.data) || size(object.data) <= int(params.data.maxKeys)',
              messageExpression: "'a ConfigMap may hold at most ' + params.data.maxKeys + ' keys'",
            },
          ],
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'demo-binding.example.com' },
        spec: {
          policyName: 'demo-policy.example.com',
          validationActions: ['Deny'],
          paramRef: { name: 'demo-params', namespace: 'kube-public', parameterNotFoundAction: 'Allow' },
          matchResources: { objectSelector: { matchExpressions: [{ key: 'exempt', operator: 'DoesNotExist' }] } },
        },
      },
    ];
    const file = await k8s.manifest(manifest[0]);
    const file2 = await k8s.manifest(manifest[1]);
    await k8s.ok(['apply', '-f', file]);
    await k8s.ok(['apply', '-f', file2]);
    await k8s.ok(['create', 'configmap', 'demo-params', '-n', 'kube-public', '--from-literal=maxKeys=1']);
    const policies = await k8s.ok(['get', 'validatingadmissionpolicies']);
    expect(policies.stdout).toMatch(
      /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\ndemo-policy\.example\.com\s+1\s+v1\/ConfigMap\s+/,
    );
    const bindings = await k8s.ok(['get', 'validatingadmissionpolicybindings']);
    expect(bindings.stdout).toMatch(
      /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\ndemo-binding\.example\.com\s+demo-policy\.example\.com\s+kube-public\/demo-params\s+/,
    );
    const res = await waitFor('the denial', async () => {
      const r = await k8s.run([
        'create',
        'configmap',
        'two',
        '--from-literal=a=1',
        '--from-literal=b=2',
        '--dry-run=server',
      ]);
      return r.code !== 0 ? r : undefined;
    });
    expect(res.stderr).toBe(
      "error: failed to create configmap: configmaps \"two\" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding.example.com' denied request: a ConfigMap may hold at most 1 keys\n",
    );
    await k8s.ok(['create', 'configmap', 'one', '--from-literal=a=1']);
    const exempt = await k8s.manifest({ ...configMap('exempt', { a: '1', b: '2' }, { exempt: 'here' }) });
    await k8s.ok(['create', '-f', exempt]);
  });
});
