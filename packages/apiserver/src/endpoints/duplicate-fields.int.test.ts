import { startTestApiServer, type TestApiServer } from '@svc/testing';

// fieldValidation for duplicate fields: JSON text and YAML, Warn (default), Strict, Ignore.
let t: TestApiServer;
beforeAll(async () => {
  t = await startTestApiServer();
});
afterAll(async () => {
  await t.stop();
});

const NS = '/api/v1/namespaces/default/configmaps';

it.each([
  [
    'JSON',
    'application/json',
    (n: string) => `{"metadata":{"name":"${n}","name":"${n}"},"data":{"k":"first","k":"last"}}`,
  ],
  ['YAML', 'application/yaml', (n: string) => `metadata:\n  name: ${n}\n  name: ${n}\ndata:\n  k: first\n  k: last\n`],
])(
  '%s: Warn keeps the last value and warns per duplicate; Strict refuses; Ignore is silent',
  async (kind, contentType, body) => {
    const warn = await t.client.post(NS, body(`dup-warn-${kind.toLowerCase()}`), { contentType });
    expect(warn.status).toBe(201);
    expect(warn.json<{ data: { k: string } }>().data.k).toBe('last');
    expect(String(warn.headers.warning)).toContain('duplicate field \\"metadata.name\\"');
    expect(String(warn.headers.warning)).toContain('duplicate field \\"data.k\\"');
    const strict = await t.client.post(`${NS}?fieldValidation=Strict`, body(`dup-strict-${kind.toLowerCase()}`), {
      contentType,
    });
    expect(strict.status).toBe(400);
    expect(strict.json<{ message: string }>().message).toBe(
      'strict decoding error: duplicate field "metadata.name", duplicate field "data.k"',
    );
    expect((await t.client.get(`${NS}/dup-strict-${kind.toLowerCase()}`)).status).toBe(404);
    const ignore = await t.client.post(`${NS}?fieldValidation=Ignore`, body(`dup-ignore-${kind.toLowerCase()}`), {
      contentType,
    });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
  },
);
