// core/v1 PodTemplate and networking/v1 NetworkPolicy (issue 19) on a real API server and etcd
// with stock kubectl. PodTemplate: create, the Table columns kubectl prints (Name, Containers,
// Images, Pod Labels), the pod defaults in the template, generation 1 and +1 only when the
// template changes, Kubernetes' 422 for a template without containers. NetworkPolicy: create, its
// columns (Name, Pod-Selector, Age), the TCP and policyTypes defaults, Kubernetes' 422s for a
// peer-less rule, an except outside its CIDR and an endPort below the port. Both: the Protobuf
// answer decodes to the JSON one.
import { builtinCatalog, group, naming, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject } from '@svc/machinery';
import { expectCode, startKubectlEnv, type KubectlEnv } from '@svc/testing';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
}, 60_000);
afterAll(() => env?.stop());

const manifest = (name: string, containers: unknown[]): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodTemplate',
    metadata: { name, labels: { tier: 'x' } },
    template: { metadata: { labels: { app: name, v: '1' } }, spec: { containers } },
  });

it('kubectl creates, lists and patches a PodTemplate; the server defaults, counts generations and refuses an empty one', async () => {
  const created = await env.ok(['create', '-n', 'default', '-f', '-'], {
    stdin: manifest('web', [
      { name: 'nginx', image: 'nginx:1.27' },
      { name: 'sidecar', image: 'busybox' },
    ]),
  });
  expect(created.stdout.trim()).toBe('podtemplate/web created');

  const table = (await env.ok(['get', 'podtemplates', '-n', 'default'])).stdout.trim().split('\n');
  expect(table[0]?.split(/\s{2,}/)).toEqual(['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS']);
  expect(table[1]?.split(/\s+/)).toEqual(['web', 'nginx,sidecar', 'nginx:1.27,busybox', 'app=web,v=1']);

  const fields = async (): Promise<string> =>
    (
      await env.ok([
        'get',
        'podtemplate',
        'web',
        '-n',
        'default',
        '-o',
        'jsonpath={.metadata.generation} {.template.spec.restartPolicy} {.template.spec.containers[0].terminationMessagePolicy}',
      ])
    ).stdout;
  expect(await fields()).toBe('1 Always File');
  await env.ok([
    'patch',
    'podtemplate',
    'web',
    '-n',
    'default',
    '--type=merge',
    '-p',
    '{"template":{"metadata":{"labels":{"v":"2"}}}}',
  ]);
  expect(await fields()).toBe('2 Always File');
  await env.ok(['label', 'podtemplate', 'web', '-n', 'default', 'tier=y', '--overwrite']);
  expect(await fields()).toBe('2 Always File');

  const empty = await env.run(['create', '-n', 'default', '-f', '-'], { stdin: manifest('empty', []) });
  expect(empty.code).toBe(1);
  expect(empty.stderr).toContain('PodTemplate "empty" is invalid');
  expect(empty.stderr).toContain('template.spec.containers: Required value');

  const path = '/api/v1/namespaces/default/podtemplates/web';
  const json = expectCode(await env.server.client.get(path), 200) as Record<string, unknown>;
  const proto = await env.server.client.get(path, { headers: { Accept: naming().protobufMediaType } });
  expect(proto.status).toBe(200);
  expect(String(proto.headers['content-type'])).toContain(naming().protobufMediaType);
  const schema = builtinCatalog().lookup('', 'v1', 'podtemplates')?.schema as ObjectSchema;
  expect(decodeProtobufObject(proto.body, schema)).toEqual(json);
});

const netpol = (name: string, spec: Record<string, unknown>): string =>
  JSON.stringify({ apiVersion: `${group('networking')}/v1`, kind: 'NetworkPolicy', metadata: { name }, spec });

it('kubectl creates and lists a NetworkPolicy; the server defaults it and refuses bad peers and ports', async () => {
  const created = await env.ok(['create', '-n', 'default', '-f', '-'], {
    stdin: netpol('web', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: 'frontend' } } }], ports: [{ port: 80 }] }],
      egress: [
        { to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ port: 53, protocol: 'UDP' }] },
      ],
    }),
  });
  expect(created.stdout.trim()).toBe(`networkpolicy.${group('networking')}/web created`);
  const table = (await env.ok(['get', 'netpol', '-n', 'default'])).stdout.trim().split('\n');
  expect(table[0]?.split(/\s+/)).toEqual(['NAME', 'POD-SELECTOR', 'AGE']);
  expect(table[1]?.split(/\s+/).slice(0, 2)).toEqual(['web', 'app=web']);
  const defaulted = await env.ok([
    'get',
    'networkpolicy',
    'web',
    '-n',
    'default',
    '-o',
    'jsonpath={.spec.policyTypes} {.spec.ingress[0].ports[0].protocol} {.spec.egress[0].ports[0].protocol}',
  ]);
  expect(defaulted.stdout).toBe('["Ingress","Egress"] TCP UDP');

  const bad = await env.run(['create', '-n', 'default', '-f', '-'], {
    stdin: netpol('bad', {
      podSelector: {},
      ingress: [{ from: [{}], ports: [{ port: 90, endPort: 80 }] }],
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }] }],
      policyTypes: ['Ingress', 'Sideways'],
    }),
  });
  expect(bad.code).toBe(1);
  for (const m of [
    'The NetworkPolicy "bad" is invalid',
    'spec.ingress[0].from[0]: Required value: must specify a peer',
    'spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`',
    'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
    'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
  ])
    expect(bad.stderr).toContain(m);

  const path = `/apis/${group('networking')}/v1/namespaces/default/networkpolicies/web`;
  const json = expectCode(await env.server.client.get(path), 200) as Record<string, unknown>;
  const proto = await env.server.client.get(path, { headers: { Accept: naming().protobufMediaType } });
  expect(proto.status).toBe(200);
  const schema = builtinCatalog().lookup(group('networking'), 'v1', 'networkpolicies')?.schema as ObjectSchema;
  expect(decodeProtobufObject(proto.body, schema)).toEqual(json);
});
