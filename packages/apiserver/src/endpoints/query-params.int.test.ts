// Boolean query parameters read as Go's strconv.ParseBool (the official Python client sends
// `watch=True`): every true and false form, anything else a 400 Status.
import { createNamespace, expectCode, expectFailure, startTestApiServer, type TestApiServer } from '@svc/testing';

let t: TestApiServer;
let ns: string;

beforeAll(async () => {
  t = await startTestApiServer();
  ns = await createNamespace(t.client, 'qp');
});

afterAll(async () => {
  await t?.stop();
});

const configMaps = (): string => `/api/v1/namespaces/${ns}/configmaps`;

it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('watch=%s is a watch', async (v) => {
  const list = expectCode(await t.client.get(configMaps()), 200);
  const w = await t.client.watch(`${configMaps()}?watch=${v}&resourceVersion=${list.metadata.resourceVersion}`);
  try {
    expectCode(
      await t.client.post(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-' } }),
      201,
    );
    expect((await w.next())?.type).toBe('ADDED');
  } finally {
    w.close();
  }
});

it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('watch=%s is a list', async (v) => {
  expect(expectCode(await t.client.get(`${configMaps()}?watch=${v}`), 200).kind).toBe('ConfigMapList');
});

it.each([
  ['watch', 'yes'],
  ['allowWatchBookmarks', 'on'],
  ['orphanDependents', 'nope'],
])('%s=%s is a 400 naming the parameter', async (name, v) => {
  const method = name === 'orphanDependents' ? 'DELETE' : 'GET';
  const s = expectFailure(await t.client.request(method, `${configMaps()}?${name}=${v}`), {
    code: 400,
    reason: 'BadRequest',
  });
  expect(s.message).toContain(name);
  expect(s.message).toContain('strconv.ParseBool');
});
