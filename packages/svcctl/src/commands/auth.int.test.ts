import { expectSameAsKubectl, startSvcctlEnv, type SvcctlEnv } from '../svcctl-testing.js';

describe.each([['kubernetes'], ['svc']])('svcctl auth can-i, whoami, reconcile (--naming=%s)', (naming) => {
  let env: SvcctlEnv;
  const rbac = naming === 'kubernetes' ? 'rbac.authorization.k8s.io' : 'rbac.authorization.svc.io';
  const rbacV1 = `${rbac}/v1`;

  beforeAll(async () => {
    env = await startSvcctlEnv({
      args: ['--authorization-mode=RBAC', ...(naming === 'kubernetes' ? ['--naming=kubernetes'] : [])],
      tokens: ['viewer-token,viewer,viewer-uid,"readers,team-x"'],
    });
    await env.ok(['create', 'namespace', 'team-a']);
    await env.ok(['create', 'role', 'cm-reader', '-n', 'team-a', '--verb=get,list', '--resource=configmaps']);
    await env.ok(['create', 'rolebinding', 'viewer-reads', '-n', 'team-a', '--role=cm-reader', '--user=viewer']);
    await env.ok([
      'create',
      'clusterrole',
      'secret-one',
      '--verb=get',
      '--resource=secrets',
      '--resource-name=alpha',
      '--resource-name=beta',
    ]);
    await env.ok(['create', 'clusterrolebinding', 'viewer-secret', '--clusterrole=secret-one', '--group=readers']);
  });
  afterAll(() => env.stop());

  /** Same output as kubectl under Kubernetes' names; under ours kubectl cannot, so svcctl's output is returned. */
  const same = async (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    naming === 'kubernetes' ? expectSameAsKubectl(env, args) : env.run(args);

  it('auth whoami prints the SelfSubjectReview of its naming', async () => {
    const r = await same(['auth', 'whoami']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^ATTRIBUTE {2,}VALUE\nUsername {3,}admin\nUID {3,}admin-uid\nGroups {3,}\[system:masters system:authenticated\]\n$/,
    );
    const asViewer = await same(['auth', 'whoami', '--as', 'viewer', '--as-group', 'team-y']);
    expect(asViewer.stdout).toMatch(/Username +viewer\nGroups +\[team-y system:authenticated\]/);
    const json = await same(['auth', 'whoami', '-o', 'json']);
    const review = JSON.parse(json.stdout) as {
      apiVersion: string;
      kind: string;
      status: { userInfo: { username: string } };
    };
    expect(review.kind).toBe('SelfSubjectReview');
    expect(review.apiVersion).toBe(naming === 'kubernetes' ? 'authentication.k8s.io/v1' : 'authentication.svc.io/v1');
    expect(review.status.userInfo.username).toBe('admin');
    await same(['auth', 'whoami', '-o', 'yaml']);
    const bad = await same(['auth', 'whoami', '-o', 'wide']);
    expect(bad.code).toBe(1);
  });

  it('auth can-i answers yes or no, also impersonating with --as', async () => {
    expect((await same(['auth', 'can-i', 'create', 'pods'])).stdout).toBe('yes\n');
    const no = await same(['auth', 'can-i', 'create', 'pods', '--as', 'viewer']);
    expect(no).toMatchObject({ code: 1, stdout: 'no\n' });
    expect((await same(['auth', 'can-i', 'get', 'configmaps', '-n', 'team-a', '--as', 'viewer'])).stdout).toBe('yes\n');
    expect((await same(['auth', 'can-i', 'list', 'cm', '-n', 'default', '--as', 'viewer'])).code).toBe(1);
    // --as alone carries no groups: the group binding needs --as-group.
    expect((await same(['auth', 'can-i', 'get', 'secrets/alpha', '--as', 'viewer'])).code).toBe(1);
    expect(
      (await same(['auth', 'can-i', 'get', 'secrets/alpha', '--as', 'viewer', '--as-group', 'readers'])).stdout,
    ).toBe('yes\n');
    expect(
      (await same(['auth', 'can-i', 'get', 'secrets/gamma', '--as', 'viewer', '--as-group', 'readers'])).code,
    ).toBe(1);
    expect(
      (await same(['auth', 'can-i', 'get', 'secrets/alpha', '--as', 'nobody', '--as-group', 'readers'])).code,
    ).toBe(0);
    expect(await same(['auth', 'can-i', 'get', 'configmaps', '-n', 'team-a', '--as', 'viewer', '-q'])).toMatchObject({
      code: 0,
      stdout: '',
    });
    expect((await same(['auth', 'can-i', 'get', '/healthz', '--as', 'viewer'])).stdout).toBe('yes\n');
    expect((await same(['auth', 'can-i', 'post', '/healthz', '--as', 'viewer'])).code).toBe(1);
    expect((await same(['auth', 'can-i', 'get', 'deployments.apps', '--subresource', 'scale'])).stdout).toBe('yes\n');
    const rbacAnswer = await same(['auth', 'can-i', 'create', `clusterroles.${rbac}`, '--as', 'viewer']);
    expect(rbacAnswer.code).toBe(1);
    expect(rbacAnswer.stderr).toContain("Warning: resource 'clusterroles' is not namespace scoped");
    expect((await same(['auth', 'can-i', 'get', 'nodes', '-A'])).stdout).toBe('yes\n');
  });

  it('auth can-i warns and fails on bad input as kubectl does', async () => {
    const unknown = await same(['auth', 'can-i', 'get', 'widgets']);
    expect(unknown.stderr).toContain("Warning: the server doesn't have a resource type 'widgets'");
    const verb = await same(['auth', 'can-i', 'frob', 'pods']);
    expect(verb.stderr).toContain("Warning: verb 'frob' is not a known verb");
    expect((await same(['auth', 'can-i', 'get'])).code).toBe(1);
    expect((await same(['auth', 'can-i', 'get', 'pods', 'extra'])).code).toBe(1);
    expect((await same(['auth', 'can-i', '--list', 'pods'])).code).toBe(1);
    expect((await same(['auth', 'can-i', '--list', '-q'])).code).toBe(1);
    expect((await same(['auth', 'can-i', 'get', 'pods', '--no-headers'])).code).toBe(1);
    expect((await same(['auth', 'can-i', 'get', '/logs', '--subresource', 'x'])).code).toBe(1);
  });

  it('auth can-i --list prints the SelfSubjectRulesReview', async () => {
    const r = await same(['auth', 'can-i', '--list', '-n', 'team-a', '--as', 'viewer', '--as-group', 'readers']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Resources +Non-Resource URLs +Resource Names +Verbs\n/);
    expect(r.stdout).toMatch(/\nconfigmaps +\[\] +\[\] +\[get list\]\n/);
    expect(r.stdout).toMatch(/\nsecrets +\[\] +\[alpha\] +\[get\]\nsecrets +\[\] +\[beta\] +\[get\]\n/);
    expect(r.stdout).toContain(`selfsubjectaccessreviews.authorization.${naming === 'kubernetes' ? 'k8s' : 'svc'}.io`);
    await same(['auth', 'can-i', '--list', '-n', 'team-a', '--as', 'viewer', '--no-headers']);
    await same(['auth', 'can-i', '--list']);
  });

  /**
   * The reconcile story for names starting with `p`, run by `cli` (svcctl or kubectl): each
   * step's output, and what the server holds after it.
   */
  async function reconcileStory(cli: 'svcctl' | 'kubectl', p: string): Promise<string[]> {
    const run = async (args: string[]): Promise<string> => {
      const r = cli === 'svcctl' ? await env.run(args) : await env.kubectl(args);
      return `${r.code}\n${r.stdout}${r.stderr.replace(/svcctl/g, 'kubectl')}`;
    };
    const rulesOf = async (name: string): Promise<string> =>
      (await env.ok(['get', 'clusterrole', name, '-o', 'jsonpath={.rules[*].resources}'])).stdout;
    const role = {
      apiVersion: rbacV1,
      kind: 'ClusterRole',
      metadata: { name: p },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    };
    const binding = {
      apiVersion: rbacV1,
      kind: 'RoleBinding',
      metadata: { name: p, namespace: 'team-a' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: p },
      subjects: [{ apiGroup: rbac, kind: 'User', name: `${p}-user` }],
    };
    const out: string[] = [];
    const first = await env.manifest(role, binding);
    out.push(await run(['auth', 'reconcile', '-f', first]));
    out.push((await env.run(['auth', 'can-i', 'list', 'pods', '-n', 'team-a', '--as', `${p}-user`])).stdout);
    out.push(await run(['auth', 'reconcile', '-f', first]));
    // A new rule is added, the old kept; a changed roleRef recreates the binding.
    const services = [{ apiGroups: [''], resources: ['services'], verbs: ['get'] }];
    const second = await env.manifest(
      { ...role, metadata: { name: `${p}-2` }, rules: services },
      { ...role, rules: services },
      { ...binding, roleRef: { ...binding.roleRef, name: `${p}-2` } },
    );
    out.push(await run(['auth', 'reconcile', '-f', second, '-o', 'name']));
    out.push((await env.ok(['get', 'rolebinding', p, '-n', 'team-a', '-o', 'jsonpath={.roleRef.name}'])).stdout);
    out.push(await rulesOf(p));
    // --remove-extra-permissions drops what the file no longer names; --dry-run=client writes nothing.
    const third = await env.manifest({ ...role, rules: services });
    out.push(await run(['auth', 'reconcile', '-f', third, '--remove-extra-permissions', '--dry-run=client']));
    out.push(await rulesOf(p));
    out.push(await run(['auth', 'reconcile', '-f', third, '--remove-extra-permissions']));
    out.push(await rulesOf(p));
    return out.map((x) => x.replaceAll(p, 'P'));
  }

  it('auth reconcile creates, updates and recreates RBAC objects', async () => {
    const story = await reconcileStory('svcctl', 'rc-ours');
    // As kubectl: the objects on standard output, what was reconciled on standard error.
    expect(story).toEqual([
      `0\nclusterrole.${rbac}/P reconciled\nrolebinding.${rbac}/P reconciled\n` +
        `\treconciliation required create\n\tmissing rules added:\n` +
        `\t\t{Verbs:[get list] APIGroups:[] Resources:[pods] ResourceNames:[] NonResourceURLs:[]}\n` +
        `\treconciliation required create\n\tmissing subjects added:\n` +
        `\t\t{Kind:User APIGroup:${rbac} Name:P-user Namespace:}\n`,
      'yes\n',
      `0\nclusterrole.${rbac}/P reconciled\nrolebinding.${rbac}/P reconciled\n`,
      `0\nclusterrole.${rbac}/P-2\nclusterrole.${rbac}/P\nrolebinding.${rbac}/P\n` +
        `\treconciliation required create\n\tmissing rules added:\n` +
        `\t\t{Verbs:[get] APIGroups:[] Resources:[services] ResourceNames:[] NonResourceURLs:[]}\n` +
        `\treconciliation required update\n\tmissing rules added:\n` +
        `\t\t{Verbs:[get] APIGroups:[] Resources:[services] ResourceNames:[] NonResourceURLs:[]}\n` +
        `\treconciliation required recreate\n`,
      'P-2',
      '["pods"] ["services"]',
      expect.stringContaining('reconciliation required update\n\textra rules removed:'),
      '["pods"] ["services"]',
      expect.stringContaining('reconciliation required update\n\textra rules removed:'),
      '["services"]',
    ]);
    if (naming === 'kubernetes') expect(await reconcileStory('kubectl', 'rc-theirs')).toEqual(story);
  });

  it('auth reconcile refuses what is not RBAC and bad files', async () => {
    const cm = await env.manifest({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    const r = await same(['auth', 'reconcile', '-f', cm]);
    expect(r.code).toBe(0);
    expect((await same(['auth', 'reconcile'])).code).toBe(1);
    expect((await same(['auth', 'reconcile', '-f', '/nonexistent.yaml'])).code).toBe(1);
  });
});
