// core/v1 PodTemplate (issue 19) on a real API server and etcd with stock kubectl: create, the
// Table columns kubectl prints (Name, Containers, Images, Pod Labels), the pod defaults in the
// template, generation 1 and +1 only when the template changes, Kubernetes' 422 for a template
// without containers, and the Protobuf answer decoding to the JSON one.
import { builtinCatalog, naming, type ObjectSchema } from '@svc/api';
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
