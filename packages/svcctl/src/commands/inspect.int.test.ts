import { crdManifest } from '@svc/testing';
import YAML from 'yaml';
import { expectSameAsKubectl, startSvcctlEnv, type SvcctlEnv } from '../svcctl-testing.js';

describe.each([['kubernetes'], ['svc']])('svcctl explain, convert (--naming=%s)', (naming) => {
  let env: SvcctlEnv;
  const suffix = naming === 'kubernetes' ? 'k8s.io' : 'svc.io';

  beforeAll(async () => {
    env = await startSvcctlEnv({ args: naming === 'kubernetes' ? ['--naming=kubernetes'] : [] });
    const crd = crdManifest({
      group: 'example.com',
      plural: 'widgets',
      kind: 'Widget',
      naming: naming === 'kubernetes' ? 'kubernetes' : 'svc',
      versions: ['v1', 'v2'].map((name) => ({
        name,
        storage: name === 'v1',
        schema: {
          type: 'object',
          description: `A widget (${name}).`,
          properties: {
            spec: {
              type: 'object',
              description: 'What the widget should be.',
              required: ['size'],
              properties: {
                size: { type: 'integer', description: 'How big.' },
                colour: { type: 'string', enum: ['red', 'green'] },
                parts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
              },
            },
          },
        },
      })),
    });
    await env.ok(['create', '-f', await env.manifest(crd)]);
    const deadline = Date.now() + 20_000;
    while ((await env.run(['explain', 'widgets.spec'])).code !== 0) {
      if (Date.now() > deadline) throw new Error('widgets never appeared in OpenAPI');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => env.stop());

  // kubectl's explain reads OpenAPI v3 and works under either naming.
  const same = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    expectSameAsKubectl(env, args);

  it('explains built-in types and field paths from OpenAPI v3', async () => {
    const pods = await same(['explain', 'pods']);
    expect(pods.code).toBe(0);
    expect(pods.stdout).toMatch(/^KIND: {7}Pod\nVERSION: {4}v1\n\nDESCRIPTION:\n/);
    expect(pods.stdout).toMatch(/\nFIELDS:\n {2}apiVersion\t<string>\n/);
    const containers = await same(['explain', 'pods.spec.containers']);
    expect(containers.stdout).toMatch(/\nFIELD: containers <\[\]Object>\n/);
    await same(['explain', 'pod.spec.containers.resources.limits']);
    await same(['explain', 'deployment.spec.strategy.type']);
    const deploy = await same(['explain', 'deploy']);
    expect(deploy.stdout).toMatch(/^GROUP: {6}apps\nKIND: {7}Deployment\nVERSION: {4}v1\n/);
    await same(['explain', 'deployments.spec', '--recursive']);
    await same(['explain', 'configmaps', '--recursive']);
    await same(['explain', 'deploy', '--api-version=apps/v1']);
    const rbac = await same(['explain', 'clusterroles.rules']);
    expect(rbac.stdout).toMatch(new RegExp(`^GROUP: +rbac\\.authorization\\.${suffix.replace('.', '\\.')}\\n`));
    await same(['explain', 'crd.spec.names']);
  });

  it('explains custom resources', async () => {
    // v2 sorts before v1, so it is the preferred version.
    const w = await same(['explain', 'widgets']);
    expect(w.stdout).toMatch(
      /^GROUP: {6}example\.com\nKIND: {7}Widget\nVERSION: {4}v2\n\nDESCRIPTION:\n {4}A widget \(v2\)\./,
    );
    const spec = await same(['explain', 'widgets.spec', '--api-version=example.com/v1']);
    expect(spec.stdout).toMatch(/\n {2}size\t<integer> -required-\n {4}How big\.\n/);
    expect(spec.stdout).toMatch(/\n {2}colour\t<string>\n {2}enum: red, green\n/);
    await same(['explain', 'widgets', '--recursive', '--api-version=example.com/v1']);
    await same(['explain', 'widgets.spec.parts', '--api-version=example.com/v1']);
    const v1 = await same(['explain', 'widgets', '--api-version=example.com/v1']);
    expect(v1.stdout).toContain('A widget (v1).');
  });

  it('refuses bad explain requests as kubectl does', async () => {
    const none = await env.run(['explain']);
    expect(none).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('You must specify the type of resource to explain'),
    });
    expect((await same(['explain', 'no-such-type'])).code).toBe(1);
    expect((await same(['explain', 'pods.spec.nofield'])).code).toBe(1);
    expect((await same(['explain', 'pods', 'services'])).code).toBe(1);
    expect((await same(['explain', 'widgets', '--api-version=example.com/v9'])).code).toBe(1);
    expect((await same(['explain', 'widgets', '--api-version=v2'])).code).toBe(1);
    expect((await same(['explain', 'pods', '-o', 'xml'])).code).toBe(1);
  });

  it('convert -f --output-version converts through the server', async () => {
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } };
    const file = await env.manifest(widget);
    const v2 = await env.ok(['convert', '-f', file, '--output-version', 'example.com/v2']);
    const obj = YAML.parse(v2.stdout) as { apiVersion: string; metadata: Record<string, unknown>; spec: unknown };
    expect(obj).toMatchObject({ apiVersion: 'example.com/v2', kind: 'Widget', spec: { size: 3 } });
    expect(obj.metadata).toEqual({ name: 'w1', namespace: 'default' });
    // The temporary object is gone again.
    expect((await env.ok(['get', 'widgets', '-A', '-o', 'name'])).stdout).toBe('');
    const json = await env.ok(['convert', '-f', file, '--output-version', 'example.com/v2', '-o', 'json']);
    expect(JSON.parse(json.stdout)).toEqual(obj);
    const version = await env.ok(['convert', '-f', file, '--output-version', 'v2', '-o', 'jsonpath={.apiVersion}']);
    expect(version.stdout).toBe('example.com/v2');
    // Several objects: a List; objects already in the version are only rewritten.
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
    const both = await env.manifest(widget, cm);
    const list = YAML.parse((await env.ok(['convert', '-f', both, '--output-version', 'example.com/v2'])).stdout) as {
      kind: string;
      items: Array<{ apiVersion: string }>;
    };
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => i.apiVersion)).toEqual(['example.com/v2', 'v1']);
    const local = await env.ok([
      'convert',
      '-f',
      file,
      '--output-version',
      'v2',
      '--local',
      '-o',
      'jsonpath={.apiVersion}',
    ]);
    expect(local.stdout).toBe('example.com/v2');
  });

  it('convert refuses bad input', async () => {
    expect(await env.run(['convert'])).toMatchObject({ code: 1, stderr: 'error: must specify one of -f and -k\n' });
    const file = await env.manifest({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    const bad = await env.run(['convert', '-f', file, '--output-version', 'v9']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('ConfigMap in version "v9" cannot be handled');
    expect((await env.run(['convert', '-f', file, '-o', 'wide'])).code).toBe(1);
    expect((await env.run(['convert', '-f', '/nonexistent.yaml'])).code).toBe(1);
  });
});
