import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expectSameAsKubectl, startSvcctlEnv, type SvcctlEnv } from '../svcctl-testing.js';

describe.each([['kubernetes'], ['svc']])('svcctl get, api-resources, api-versions (--naming=%s)', (naming) => {
  let env: SvcctlEnv;

  beforeAll(async () => {
    env = await startSvcctlEnv({ args: naming === 'kubernetes' ? ['--naming=kubernetes'] : [] });
    await env.kube.ok(['create', 'namespace', 'team-a']);
    await env.kube.ok(['create', 'configmap', 'alpha', '--from-literal=a=1', '--from-literal=b=<2>']);
    await env.kube.ok(['create', 'configmap', 'beta', '-n', 'team-a', '--from-literal=multi=line1\nline2']);
    await env.kube.ok(['label', 'configmap', 'alpha', 'app=web', 'tier=front']);
    await env.kube.ok(['create', 'secret', 'generic', 'creds', '--from-literal=password=s3cret']);
    await env.kube.ok(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2']);
  });
  afterAll(() => env.stop());

  const same = (args: string[]): Promise<unknown> => expectSameAsKubectl(env, args);

  it('prints server-side tables as kubectl does', async () => {
    await same(['get', 'configmaps']);
    await same(['get', 'cm', '-A']);
    await same(['get', 'cm', '-A', '--show-labels', '-L', 'app,tier']);
    await same(['get', 'cm', '--no-headers']);
    await same(['get', 'deploy', '-o', 'wide']);
    await same(['get', 'cm,secrets']);
    await same(['get', 'cm/alpha', 'deployment/web']);
    await same(['get', 'cm', 'alpha', '--show-kind']);
    await same(['get', 'ns', 'team-a', 'default']);
    await same(['get', 'cm', '-l', 'app=web']);
    await same(['get', 'cm', '--field-selector', 'metadata.name=alpha', '-A']);
    await same(['get', 'cm', '--chunk-size', '1', '-A']);
  });

  it('prints objects as json, yaml, name, jsonpath and custom columns', async () => {
    await same(['get', 'cm', 'alpha', '-o', 'yaml']);
    await same(['get', 'deploy', 'web', '-o', 'yaml']);
    await same(['get', 'ns', '-o', 'yaml']);
    await same(['get', 'cm', 'alpha', '-o', 'json']);
    await same(['get', 'cm', '-n', 'team-a', 'beta', '-o', 'yaml']);
    await same(['get', 'cm', '-o', 'yaml']);
    await same(['get', 'cm,secrets', '-o', 'json']);
    await same(['get', 'cm,deploy', '-o', 'name']);
    await same(['get', 'cm', '-o', 'jsonpath={.items[*].metadata.name}']);
    await same(['get', 'cm', 'alpha', '-o', 'jsonpath={.metadata.labels}{"\\n"}{.data.b}']);
    await same([
      'get',
      'cm',
      '-A',
      '-o',
      'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
    ]);
    await same([
      'get',
      'cm',
      '-A',
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name,DATA:.data,NONE:.spec',
    ]);
    await same(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.template.spec.containers[?(@.name=="nginx")].image}']);
  });

  it('prints objects through go templates as kubectl does', async () => {
    await same([
      'get',
      'cm',
      '-A',
      '-o',
      'go-template={{range .items}}{{.metadata.name}} {{len .data}}{{"\\n"}}{{end}}',
    ]);
    await same(['get', 'cm', 'alpha', '-o', 'go-template={{.metadata.labels}} {{index .data "b"}} {{.metadata.nope}}']);
    await same(['get', 'deploy', 'web', '-o', 'template={{.spec.replicas}}/{{.metadata.generation}}']);
    await same([
      'get',
      'deploy',
      'web',
      '-o',
      'go-template',
      '--template',
      '{{range .spec.template.spec.containers}}{{printf "%s=%q" .name .image}}{{end}}',
    ]);
    await same([
      'get',
      'cm',
      '-o',
      'go-template={{range .items}}{{if eq .metadata.name "alpha"}}{{.data.a}}{{else}}-{{end}}{{end}}',
    ]);
    const tmpl = join(env.home, 'names.tmpl');
    await writeFile(tmpl, '{{range .items}}{{.kind}}/{{.metadata.name}}\n{{end}}');
    await same(['get', 'cm,deploy', '-o', `go-template-file=${tmpl}`]);
    // Bad templates: kubectl's parse error before any request, and its execution error (exit 1).
    await same(['get', 'cm', '-o', 'go-template={{.metadata.name']);
    await same(['get', 'cm', 'alpha', '-o', 'go-template={{.metadata.name.x}}']);
    await same(['get', 'cm', 'alpha', '--allow-missing-template-keys=false', '-o', 'go-template={{.nope}}']);
    await same(['get', 'cm', '-o', 'go-template']);
  });

  it('reports errors and empty results as kubectl does', async () => {
    await same(['get', 'cm', 'alpha', 'missing']);
    await same(['get', 'cm', 'missing', '--ignore-not-found']);
    await same(['get', 'no-such-type']);
    await same(['get', 'cm', '-n', 'empty-ns']);
    await same(['get', 'cm', '-l', 'app=none', '-A']);
    await same(['get', 'nodes']);
  });

  it('lists resources and versions as kubectl does', async () => {
    await same(['api-resources']);
    await same(['api-resources', '-o', 'wide']);
    await same(['api-resources', '-o', 'name']);
    await same(['api-resources', '--namespaced=false']);
    await same(['api-resources', '--api-group=apps', '--no-headers']);
    await same(['api-versions']);
  });
});
