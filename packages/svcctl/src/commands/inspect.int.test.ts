import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crdManifest } from '@svc/testing';
import YAML from 'yaml';
import { expectSameAsKubectl, startSvcctlEnv, type RunResult, type SvcctlEnv } from '../svcctl-testing.js';

describe.each([['kubernetes'], ['svc']])('svcctl explain, convert, diff, edit (--naming=%s)', (naming) => {
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

  /** `diff -u -N` of kubectl's temporary directories, with their random names and file times taken out. */
  const diffText = (s: string): string =>
    s.replace(/\/[^ \t\n]*\/(LIVE|MERGED)-[^/]+\//g, '$1/').replace(/\t\d{4}-\d\d-\d\d [\d:.]+ [+-]\d{4}/g, '');

  it('diff -f shows what applying would change, as kubectl does', async () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dcm', labels: { a: 'b' } },
      data: { k: 'v1', other: 'x' },
    };
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dweb' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'dweb' } },
        template: { metadata: { labels: { app: 'dweb' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } },
      },
    };
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dsec' }, stringData: { password: 'pw1' } };
    await env.ok(['apply', '-f', await env.manifest(cm, deploy, secret)]);
    const unchanged = await env.manifest(cm, deploy);
    expect(await env.run(['diff', '-f', unchanged])).toEqual({ code: 0, stdout: '', stderr: '' });
    const changed = await env.manifest(
      { ...cm, data: { k: 'v2', other: 'x' } },
      { ...deploy, spec: { ...deploy.spec, replicas: 3 } },
      { ...secret, stringData: { password: 'pw2', user: 'u1' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dnew' }, data: { num: '1' } },
    );
    const ours = await env.run(['diff', '-f', changed]);
    expect(ours.code).toBe(1);
    const text = diffText(ours.stdout);
    expect(text).toContain('diff -u -N LIVE/apps.v1.Deployment.default.dweb MERGED/apps.v1.Deployment.default.dweb\n');
    expect(text).toContain('-  replicas: 1\n+  replicas: 3\n');
    expect(text).toContain('-  k: v1\n+  k: v2\n');
    expect(text).toContain("-  password: '*** (before)'\n+  password: '*** (after)'\n+  user: '***'\n");
    expect(text).toContain(
      '--- LIVE/v1.ConfigMap.default.dnew\n+++ MERGED/v1.ConfigMap.default.dnew\n@@ -0,0 +1,9 @@\n',
    );
    // Nothing was changed on the server.
    expect((await env.ok(['get', 'cm', 'dcm', '-o', 'jsonpath={.data.k}'])).stdout).toBe('v1');
    expect((await env.run(['get', 'cm', 'dnew'])).code).toBe(1);
    if (naming === 'kubernetes') {
      // uids and creation times of objects the dry run makes up differ from run to run (the
      // time by a tick when the two clients straddle a second).
      const t = (s: string): string =>
        diffText(s)
          .replace(/uid: [0-9a-f-]+/g, 'uid: U')
          .replace(/creationTimestamp: "[0-9T:-]+Z"/g, 'creationTimestamp: T');
      await expectSameAsKubectl(env, ['diff', '-f', changed], { transform: t });
      await expectSameAsKubectl(env, ['diff', '-f', unchanged]);
      await expectSameAsKubectl(env, ['diff', '-f', changed, '--server-side', '--force-conflicts'], { transform: t });
    }
    const external = await env.run(['diff', '-f', changed], { env: { SVCCTL_EXTERNAL_DIFF: 'ls' } });
    expect(external.stdout).toMatch(
      /LIVE-\S+:\napps\.v1\.Deployment\.default\.dweb\nv1\.ConfigMap\.default\.dcm\nv1\.Secret/,
    );
    expect((await env.run(['diff'])).code).toBe(1);
    expect((await env.run(['diff', '-f', '/nonexistent.yaml'])).code).toBeGreaterThan(0);
  });

  /** Edits a ConfigMap `name` with `cli` and an editor script: each step's output, and the data after it. */
  async function editStory(cli: 'svcctl' | 'kubectl', name: string): Promise<string[]> {
    await env.ok(['create', 'configmap', name, '--from-literal=k=v1']);
    const editor = async (script: string): Promise<string> => {
      const file = join(env.home, `editor-${name}-${Math.random().toString(36).slice(2)}.sh`);
      await writeFile(file, `#!/bin/sh\n${script}\n`);
      await chmod(file, 0o755);
      return file;
    };
    const run = async (args: string[], editorScript: string): Promise<string> => {
      const EDITOR = await editor(editorScript);
      let r: RunResult;
      if (cli === 'svcctl') r = await env.run(args, { env: { EDITOR } });
      else {
        process.env.EDITOR = EDITOR;
        try {
          r = await env.kubectl(args);
        } finally {
          delete process.env.EDITOR;
        }
      }
      const printed = r.stdout.replace(/"(creationTimestamp|resourceVersion|uid)": "[^"]+"/g, '"$1": "X"');
      return `${r.code}\n${printed}${r.stderr.replace(/svcctl/g, 'kubectl').replace(/\/tmp\/\S+/g, 'FILE')}`;
    };
    const data = async (): Promise<string> => (await env.ok(['get', 'cm', name, '-o', 'jsonpath={.data}'])).stdout;
    const out: string[] = [];
    out.push(await run(['edit', 'cm', name], `sed -i -e 's/^  k: v1$/  k: v2/' "$1"`));
    out.push(await data());
    out.push(
      await run(['edit', `configmap/${name}`, '-o', 'json'], `sed -i -e 's/"k": "v2"/"k": "v3", "n": "1"/' "$1"`),
    );
    out.push(await data());
    out.push(await run(['edit', 'cm', name], 'true'));
    out.push(await run(['edit', 'cm', name], ': > "$1"'));
    out.push(await run(['edit', 'cm', name], 'exit 3'));
    out.push(await data());
    out.push(await run(['edit', 'cm', 'missing-one'], 'true'));
    return out.map((x) => x.replaceAll(name, 'C'));
  }

  it('edit opens the object in $EDITOR and patches what changed, as kubectl does', async () => {
    const story = await editStory('svcctl', 'edit-ours');
    expect(story.slice(0, 4)).toEqual([
      '0\nconfigmap/C edited\n',
      '{"k":"v2"}',
      // -o json: edited as JSON, and the result printed so.
      expect.stringMatching(/^0\n\{\n {4}"apiVersion": "v1",\n {4}"data": \{\n {8}"k": "v3",\n {8}"n": "1"\n {4}\},/),
      '{"k":"v3","n":"1"}',
    ]);
    expect(story[4]).toBe('0\nEdit cancelled, no changes made.\n');
    expect(story[5]).toMatch(
      /^1\nerror: configmaps "C" is invalid\nA copy of your changes has been stored to "FILE\nerror: Edit cancelled, no valid changes were saved\.\n$/,
    );
    expect(story[6]).toMatch(/^1\nerror: there was a problem with the editor "FILE\n$/);
    expect(story[7]).toBe('{"k":"v3","n":"1"}');
    expect(story[8]).toMatch(/^1\nError from server \(NotFound\): configmaps "missing-one" not found\n$/);
    if (naming === 'kubernetes') expect(await editStory('kubectl', 'edit-theirs')).toEqual(story);
  });
});
