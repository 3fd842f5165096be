import { gunzipSync } from 'node:zlib';
import { startTestApiServer, type TestApiServer } from '@svc/testing';

// Accept-Encoding: gzip on get and list (APIResponseCompression): large answers only.
let t: TestApiServer;
beforeAll(async () => {
  t = await startTestApiServer();
});
afterAll(async () => {
  await t.stop();
});

const NS = '/api/v1/namespaces/default/configmaps';
const gz = { headers: { 'accept-encoding': 'gzip' } };

it('gzips a large get for a client that accepts it, and only then', async () => {
  const big = 'x'.repeat(200 * 1024);
  expect((await t.client.post(NS, { metadata: { name: 'big' }, data: { v: big } })).status).toBe(201);
  const zipped = await t.client.get(`${NS}/big`, gz);
  expect(zipped.headers['content-encoding']).toBe('gzip');
  const obj = JSON.parse(gunzipSync(zipped.body).toString()) as { data: { v: string } };
  expect(obj.data.v).toBe(big);
  const plain = await t.client.get(`${NS}/big`);
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.json<{ data: { v: string } }>().data.v).toBe(big);
});

it('leaves small answers uncompressed', async () => {
  expect((await t.client.post(NS, { metadata: { name: 'small' }, data: { v: '1' } })).status).toBe(201);
  const r = await t.client.get(`${NS}/small`, gz);
  expect(r.headers['content-encoding']).toBeUndefined();
  expect(r.json<{ data: { v: string } }>().data.v).toBe('1');
});

it('gzips a large streamed list', async () => {
  const ns = '/api/v1/namespaces/many';
  expect((await t.client.post('/api/v1/namespaces', { metadata: { name: 'many' } })).status).toBe(201);
  const pad = 'y'.repeat(400);
  await Promise.all(
    Array.from({ length: 600 }, (_, i) =>
      t.client.post(`${ns}/configmaps`, { metadata: { name: `c${i}` }, data: { pad } }),
    ),
  );
  const r = await t.client.get(`${ns}/configmaps`, gz);
  expect(r.headers['content-encoding']).toBe('gzip');
  const list = JSON.parse(gunzipSync(r.body).toString()) as { kind: string; items: unknown[] };
  expect(list.kind).toBe('ConfigMapList');
  expect(list.items).toHaveLength(600);
});

it('writes a streamed list of many MiB whole, plain and gzipped', async () => {
  const ns = '/api/v1/namespaces/large';
  expect((await t.client.post('/api/v1/namespaces', { metadata: { name: 'large' } })).status).toBe(201);
  const pad = 'z'.repeat(28 * 1024);
  // In rounds of 26, each create checked: a burst of 520 at once can meet the server's limits.
  for (let round = 0; round < 20; round++) {
    const created = await Promise.all(
      Array.from({ length: 26 }, (_, k) =>
        t.client.post(`${ns}/configmaps`, { metadata: { name: `c${round * 26 + k}` }, data: { pad } }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(26).fill(201));
  }
  // ~14.5 MiB: the writer waits for the socket over ten times (after each 1 MiB queued).
  for (let i = 0; i < 2; i++) {
    const plain = await t.client.get(`${ns}/configmaps`);
    const items = plain.json<{ items: Array<{ metadata: { name: string }; data: { pad: string } }> }>().items;
    expect(items.map((c) => c.metadata.name).sort()).toEqual(Array.from({ length: 520 }, (_, k) => `c${k}`).sort());
    expect(items.every((c) => c.data.pad === pad)).toBe(true);
    const zipped = await t.client.get(`${ns}/configmaps`, gz);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).toString()).toBe(plain.body.toString());
  }
});
