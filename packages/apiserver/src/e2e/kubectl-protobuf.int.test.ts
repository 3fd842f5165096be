import { startKubectlEnv, type KubectlEnv, type TestApiServer } from '@svc/testing';

// kubectl's generator commands send Protobuf bodies (and accept a JSON answer).
let env: KubectlEnv;
let t: TestApiServer;
beforeAll(async () => {
  env = await startKubectlEnv();
  t = env.server;
});
afterAll(async () => {
  await env.stop();
});

const run = (args: string[]) => env.run(args);

it('creates a configmap, a secret, a namespace and a service account from kubectl generators', async () => {
  for (const args of [
    ['create', 'configmap', 'gen', '--from-literal=a=b', '--from-literal=c=d'],
    ['create', 'secret', 'generic', 'pw', '--from-literal=password=hunter2'],
    ['create', 'namespace', 'team-a'],
    ['create', 'serviceaccount', 'robot'],
  ]) {
    const r = await run(args);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  }
  const cm = await t.client.get('/api/v1/namespaces/default/configmaps/gen');
  expect(cm.json<{ data: Record<string, string> }>().data).toEqual({ a: 'b', c: 'd' });
  const secret = await t.client.get('/api/v1/namespaces/default/secrets/pw');
  expect(Buffer.from(secret.json<{ data: { password: string } }>().data.password, 'base64').toString()).toBe('hunter2');
  const ns = await t.client.get('/api/v1/namespaces/team-a');
  expect(ns.json<{ status: { phase: string } }>().status.phase).toBe('Active');
  expect((await t.client.get('/api/v1/namespaces/default/serviceaccounts/robot')).status).toBe(200);
});

it.each([
  ['a wrong magic number', Buffer.from('not protobuf at all')],
  ['truncated bytes', Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x7f, 0x0a])],
])('answers a Protobuf body with %s with 400 and writes nothing', async (_what, body) => {
  const r = await t.client.post('/api/v1/namespaces/default/configmaps', body, {
    contentType: 'application/vnd.kubernetes.protobuf',
  });
  expect(r.status).toBe(400);
  expect(r.json<{ reason: string; message: string }>().reason).toBe('BadRequest');
  expect(r.json<{ message: string }>().message).toContain('Protobuf');
  expect(
    (await t.client.get('/api/v1/namespaces/default/configmaps'))
      .json<{ items: unknown[] }>()
      .items.map((i) => (i as { metadata: { name: string } }).metadata.name),
  ).not.toContain('');
});
