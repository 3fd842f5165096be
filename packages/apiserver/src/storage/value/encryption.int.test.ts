// Encryption at rest end to end: real etcd (read directly with the etcd3 client), svc-apiserver
// over HTTPS, stock kubectl, and a KMS v2 plugin serving the real gRPC API on a unix socket.
// The bad-configuration cases run the built binary (dist/bin/svc-apiserver.js).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import YAML from 'yaml';
import {
  createNamespace,
  expectCode,
  kubectl,
  startEtcd,
  startTestApiServer,
  waitFor,
  type EtcdHandle,
  type TestApiServer,
} from '@svc/testing';
import { FakeKms } from './kms-plugin-testing.js';

const BIN = resolve(__dirname, '../../../dist/bin/svc-apiserver.js');

let etcd: EtcdHandle;
let raw: Etcd3;
let dir: string;
let kms: FakeKms;
let kmsServer: { endpoint: string; stop: () => Promise<void> };
const servers: TestApiServer[] = [];
/** Each server's `--store-prefix` when a test gave one (it wins over the test server's own). */
const prefixes = new WeakMap<TestApiServer, string>();

const key = (): string => randomBytes(32).toString('base64');

interface Provider {
  aescbc?: unknown;
  aesgcm?: unknown;
  secretbox?: unknown;
  identity?: unknown;
  kms?: unknown;
}

function keys(provider: 'aescbc' | 'aesgcm' | 'secretbox', ...named: Array<[string, string]>): Provider {
  return { [provider]: { keys: named.map(([name, secret]) => ({ name, secret })) } };
}

function kmsProvider(): Provider {
  return { kms: { apiVersion: 'v2', name: 'fake', endpoint: kmsServer.endpoint, timeout: '2s' } };
}

function configYaml(resources: Array<{ resources: string[]; providers: Provider[] }>): string {
  return YAML.stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'EncryptionConfiguration', resources });
}

/** Writes `text` to `file` by rename, as editors and mounted config maps replace files. */
async function replaceFile(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}

async function start(config: string, o: { storePrefix?: string; args?: string[] } = {}): Promise<TestApiServer> {
  const file = join(dir, `enc-${randomBytes(4).toString('hex')}.yaml`);
  await writeFile(file, config);
  return startWith(file, o);
}

async function startWith(file: string, o: { storePrefix?: string; args?: string[] } = {}): Promise<TestApiServer> {
  const s = await startTestApiServer({
    etcd,
    args: [
      '--encryption-provider-config',
      file,
      ...(o.storePrefix ? ['--store-prefix', o.storePrefix] : []),
      ...(o.args ?? []),
    ],
  });
  servers.push(s);
  prefixes.set(s, o.storePrefix ?? s.storePrefix);
  return s;
}

async function stop(s: TestApiServer): Promise<void> {
  servers.splice(servers.indexOf(s), 1);
  await s.stop();
}

/** The raw value etcd holds for an object. */
async function stored(s: TestApiServer, path: string): Promise<Buffer> {
  const at = `${prefixes.get(s) ?? s.storePrefix}/${path}`;
  const value = await raw.get(at).buffer();
  if (!value) throw new Error(`no value at ${at}`);
  return value;
}

function secret(namespace: string, name: string, value: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    data: { value: Buffer.from(value).toString('base64') },
  };
}

async function createSecret(s: TestApiServer, o: { namespace: string; name: string; value: string }): Promise<void> {
  expectCode(
    await s.client.post(`/api/v1/namespaces/${o.namespace}/secrets`, secret(o.namespace, o.name, o.value)),
    201,
  );
}

async function secretValue(s: TestApiServer, namespace: string, name: string): Promise<string> {
  const got = expectCode(await s.client.get(`/api/v1/namespaces/${namespace}/secrets/${name}`), 200) as {
    data: { value: string };
  };
  return Buffer.from(got.data.value, 'base64').toString();
}

function prefixOf(value: Buffer): string {
  return /^svc:enc:[a-z]+:v[12]:[^:]+:/.exec(value.toString('latin1'))?.[0] ?? '(plain)';
}

async function metric(s: TestApiServer, name: string, status: string): Promise<number> {
  const res = await s.client.get('/metrics');
  if (res.status !== 200) throw new Error(`/metrics: ${res.status}`);
  const text = res.text;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`status="${status}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

beforeAll(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoints });
  dir = await mkdtemp(join(tmpdir(), 'svc-encryption-'));
  kms = new FakeKms();
  kmsServer = await kms.serve();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await kmsServer?.stop();
  raw?.close();
  await etcd?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('providers', () => {
  it('each provider keeps its resources encrypted in etcd and serves them in plaintext', async () => {
    const s = await start(
      configYaml([
        { resources: ['secrets'], providers: [keys('aescbc', ['cbc1', key()]), { identity: {} }] },
        { resources: ['configmaps'], providers: [keys('aesgcm', ['gcm1', key()])] },
        { resources: ['*.coordination.svc.io'], providers: [keys('secretbox', ['box1', key()])] },
        { resources: ['*.*'], providers: [kmsProvider()] },
      ]),
    );
    const ns = await createNamespace(s.client, 'enc');
    await createSecret(s, { namespace: ns, name: 's1', value: 'secret-plain-text' });
    expectCode(
      await s.client.post(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c1' },
        data: { k: 'configmap-plain-text' },
      }),
      201,
    );
    expectCode(
      await s.client.post(`/apis/coordination.svc.io/v1/namespaces/${ns}/leases`, {
        apiVersion: 'coordination.svc.io/v1',
        kind: 'Lease',
        metadata: { name: 'l1' },
        spec: { holderIdentity: 'lease-plain-text' },
      }),
      201,
    );
    expectCode(
      await s.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'sa-plain-text' },
      }),
      201,
    );
    const cases: Array<[string, string, string]> = [
      [`core/secrets/${ns}/s1`, 'svc:enc:aescbc:v1:cbc1:', 'secret-plain-text'],
      [`core/configmaps/${ns}/c1`, 'svc:enc:aesgcm:v1:gcm1:', 'configmap-plain-text'],
      [`coordination.svc.io/leases/${ns}/l1`, 'svc:enc:secretbox:v1:box1:', 'lease-plain-text'],
      [`core/serviceaccounts/${ns}/sa-plain-text`, 'svc:enc:kms:v2:fake:', 'sa-plain-text"'],
      [`core/namespaces/${ns}`, 'svc:enc:kms:v2:fake:', `"${ns}"`],
    ];
    for (const [path, prefix, plain] of cases) {
      const value = await stored(s, path);
      expect([path, prefixOf(value)]).toEqual([path, prefix]);
      expect([path, value.includes(plain)]).toEqual([path, false]);
      expect([path, value.includes(Buffer.from(plain).toString('base64'))]).toEqual([path, false]);
    }
    expect(await secretValue(s, ns, 's1')).toBe('secret-plain-text');
    const cm = expectCode(await s.client.get(`/api/v1/namespaces/${ns}/configmaps/c1`), 200) as {
      data: { k: string };
    };
    expect(cm.data.k).toBe('configmap-plain-text');
    const lease = expectCode(await s.client.get(`/apis/coordination.svc.io/v1/namespaces/${ns}/leases/l1`), 200) as {
      spec: { holderIdentity: string };
    };
    expect(lease.spec.holderIdentity).toBe('lease-plain-text');
    // Lists served from the watch cache decrypt too. resourceVersion=0 may be answered before the
    // cache has the create's event (any resource version will do): wait until it has.
    const items = await waitFor('the Secret in a resourceVersion=0 list', async () => {
      const list = expectCode(await s.client.get(`/api/v1/namespaces/${ns}/secrets?resourceVersion=0`), 200) as {
        items: Array<{ data: { value: string } }>;
      };
      return list.items.length > 0 && list.items;
    });
    expect(items.map((i) => Buffer.from(i.data.value, 'base64').toString())).toEqual(['secret-plain-text']);
    const kubectlGet = await kubectl(s.svcconfigPath, [
      'get',
      'serviceaccount',
      'sa-plain-text',
      '-n',
      ns,
      '-o',
      'name',
    ]);
    expect(kubectlGet.stdout.trim()).toBe('serviceaccount/sa-plain-text');
    await stop(s);
  });
});

describe('key rotation as Kubernetes documents it, with stock kubectl', () => {
  it('add a key second, restart, move it first, restart, rewrite every Secret, remove the old key', async () => {
    const k1: [string, string] = ['key1', key()];
    const k2: [string, string] = ['key2', key()];
    const storePrefix = `/registry-rotation-${randomBytes(3).toString('hex')}`;
    const secrets = (...ks: Array<[string, string]>): string =>
      configYaml([{ resources: ['secrets'], providers: [keys('aescbc', ...ks), { identity: {} }] }]);

    let s = await start(secrets(k1), { storePrefix });
    const namespaces = [await createNamespace(s.client, 'rot-a'), await createNamespace(s.client, 'rot-b')];
    for (const [i, ns] of namespaces.entries()) {
      const created = await kubectl(s.svcconfigPath, [
        'create',
        'secret',
        'generic',
        `db-${i}`,
        '-n',
        ns,
        `--from-literal=password=hunter${i}`,
      ]);
      expect(created.stderr).toBe('');
    }
    const paths = namespaces.map((ns, i) => `core/secrets/${ns}/db-${i}`);
    for (const p of paths) expect(prefixOf(await stored(s, p))).toBe('svc:enc:aescbc:v1:key1:');

    // 1. The new key second: every server can read it before any writes with it.
    await stop(s);
    s = await start(secrets(k1, k2), { storePrefix });
    for (const p of paths) expect(prefixOf(await stored(s, p))).toBe('svc:enc:aescbc:v1:key1:');

    // 2. The new key first; 3. every Secret rewritten.
    await stop(s);
    s = await start(secrets(k2, k1), { storePrefix });
    const all = await kubectl(s.svcconfigPath, ['get', 'secrets', '-A', '-o', 'json']);
    expect(all.code).toBe(0);
    const replaced = await kubectl(s.svcconfigPath, ['replace', '-f', '-'], { stdin: all.stdout });
    expect({ code: replaced.code, stderr: replaced.stderr }).toEqual({ code: 0, stderr: '' });
    for (const p of paths) expect(prefixOf(await stored(s, p))).toBe('svc:enc:aescbc:v1:key2:');
    // A second rewrite changes nothing (no longer stale).
    const before = await raw.get(`${storePrefix}/${paths[0]}`).exec();
    const again = await kubectl(s.svcconfigPath, ['get', 'secret', 'db-0', '-n', namespaces[0] ?? '', '-o', 'json']);
    await kubectl(s.svcconfigPath, ['replace', '-f', '-'], { stdin: again.stdout });
    const after = await raw.get(`${storePrefix}/${paths[0]}`).exec();
    expect(after.kvs[0]?.mod_revision).toBe(before.kvs[0]?.mod_revision);

    // 4. The old key removed: everything still reads.
    await stop(s);
    s = await start(secrets(k2), { storePrefix });
    for (const [i, ns] of namespaces.entries()) {
      const got = await kubectl(s.svcconfigPath, [
        'get',
        'secret',
        `db-${i}`,
        '-n',
        ns,
        '-o',
        'jsonpath={.data.password}',
      ]);
      expect(Buffer.from(got.stdout, 'base64').toString()).toBe(`hunter${i}`);
    }
    await stop(s);
  });
});

describe('automatic reload', () => {
  it('a good file replaces the transformers; a bad one (invalid, or its KMS plugin unhealthy) keeps them', async () => {
    const file = join(dir, 'reload.yaml');
    const k1: [string, string] = ['k1', key()];
    const k2: [string, string] = ['k2', key()];
    await writeFile(file, configYaml([{ resources: ['secrets'], providers: [keys('aesgcm', k1)] }]));
    const s = await startWith(file, { args: ['--encryption-provider-config-automatic-reload'] });
    const healthz = await s.client.get('/healthz?verbose');
    expect(healthz.status).toBe(200);
    const health = healthz.text;
    expect(health).toContain('[+]kms-providers ok');
    expect(health).toContain('[+]poststarthook/start-encryption-provider-config-automatic-reload ok');
    expect((await s.client.get('/livez?verbose')).text).not.toContain('kms-providers');
    const ns = await createNamespace(s.client, 'reload');
    await createSecret(s, { namespace: ns, name: 'before', value: 'v0' });
    expect(prefixOf(await stored(s, `core/secrets/${ns}/before`))).toBe('svc:enc:aesgcm:v1:k1:');

    // Good: aescbc k2 first, the old key second.
    await replaceFile(
      file,
      configYaml([{ resources: ['secrets'], providers: [keys('aescbc', k2), keys('aesgcm', k1)] }]),
    );
    await waitFor(
      'the reload',
      async () => (await metric(s, 'apiserver_encryption_config_controller_automatic_reloads_total', 'success')) === 1,
    );
    await createSecret(s, { namespace: ns, name: 'after', value: 'v1' });
    expect(prefixOf(await stored(s, `core/secrets/${ns}/after`))).toBe('svc:enc:aescbc:v1:k2:');
    expect(await secretValue(s, ns, 'before')).toBe('v0');

    // Bad: a key of the wrong size. Kept, logged, counted.
    await replaceFile(
      file,
      configYaml([
        { resources: ['secrets'], providers: [keys('aescbc', ['short', randomBytes(5).toString('base64')])] },
      ]),
    );
    await waitFor(
      'the failed reload',
      async () => (await metric(s, 'apiserver_encryption_config_controller_automatic_reloads_total', 'failure')) >= 1,
    );
    await createSecret(s, { namespace: ns, name: 'kept', value: 'v2' });
    expect(prefixOf(await stored(s, `core/secrets/${ns}/kept`))).toBe('svc:enc:aescbc:v1:k2:');
    expect((await s.client.get('/healthz/kms-providers')).status).toBe(200);
    // Reported on /healthz; readiness stays (the old configuration serves).
    expect((await s.client.get('/healthz/encryption-config-automatic-reload')).status).toBe(500);
    expect((await s.client.get('/readyz')).status).toBe(200);

    // Bad: a KMS plugin that is not healthy (the new configuration must pass its health check first).
    const failuresBefore = await metric(s, 'apiserver_encryption_config_controller_automatic_reloads_total', 'failure');
    const sick = new FakeKms();
    sick.healthz = 'the HSM is unreachable';
    const sickServer = await sick.serve();
    try {
      await replaceFile(
        file,
        configYaml([
          {
            resources: ['secrets'],
            providers: [
              { kms: { apiVersion: 'v2', name: 'sick', endpoint: sickServer.endpoint, timeout: '1s' } },
              keys('aescbc', k2),
            ],
          },
        ]),
      );
      await waitFor(
        'the reload to fail on the unhealthy plugin',
        async () =>
          (await metric(s, 'apiserver_encryption_config_controller_automatic_reloads_total', 'failure')) >
          failuresBefore,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    } finally {
      await sickServer.stop();
    }
    await createSecret(s, { namespace: ns, name: 'still', value: 'v3' });
    expect(prefixOf(await stored(s, `core/secrets/${ns}/still`))).toBe('svc:enc:aescbc:v1:k2:');
    expect(await metric(s, 'apiserver_encryption_config_controller_automatic_reloads_total', 'success')).toBe(1);

    // A good file again clears the report.
    await replaceFile(file, configYaml([{ resources: ['secrets'], providers: [keys('aescbc', k2)] }]));
    await waitFor(
      'the report to clear',
      async () => (await s.client.get('/healthz/encryption-config-automatic-reload')).status === 200,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await stop(s);
  }, 90_000);
});

describe('KMS v2 plugin health', () => {
  it('kms-providers on /healthz and /readyz follows the plugin; writes and reads work through it', async () => {
    const plugin = new FakeKms();
    plugin.healthz = 'degraded';
    const served = await plugin.serve();
    try {
      const s = await start(
        configYaml([
          {
            resources: ['secrets'],
            providers: [{ kms: { apiVersion: 'v2', name: 'p', endpoint: served.endpoint, timeout: '2s' } }],
          },
        ]),
      );
      const verbose = (await s.client.get('/healthz?verbose')).text;
      expect(verbose).toContain('[-]kms-providers failed');
      expect((await s.client.get('/readyz/kms-providers')).status).toBe(500);
      expect((await s.client.get('/livez')).status).toBe(200);
      plugin.healthz = 'ok';
      await waitFor(
        'kms-providers to pass',
        async () => (await s.client.get('/healthz/kms-providers')).status === 200,
        {
          timeoutMs: 10_000,
          intervalMs: 250,
        },
      );
      expect((await s.client.get('/healthz?verbose')).text).toContain('[+]kms-providers ok');
      const ns = await createNamespace(s.client, 'kms');
      await createSecret(s, { namespace: ns, name: 'k', value: 'through-kms' });
      expect(prefixOf(await stored(s, `core/secrets/${ns}/k`))).toBe('svc:enc:kms:v2:p:');
      expect(await secretValue(s, ns, 'k')).toBe('through-kms');
      await stop(s);
    } finally {
      await served.stop();
    }
  });
});

describe('a value that cannot be decrypted', () => {
  it('fails its reads and its lists with 500 InternalError; everything else is served', async () => {
    const k1: [string, string] = ['key1', key()];
    const s = await start(configYaml([{ resources: ['secrets'], providers: [keys('aescbc', k1)] }]));
    const ns = await createNamespace(s.client, 'corrupt');
    await createSecret(s, { namespace: ns, name: 'good', value: 'fine' });
    await createSecret(s, { namespace: ns, name: 'bad', value: 'lost' });
    await createSecret(s, { namespace: ns, name: 'unknown-key', value: 'lost' });
    const badKey = `${s.storePrefix}/core/secrets/${ns}/bad`;
    await raw.put(badKey).value(Buffer.concat([Buffer.from('svc:enc:aescbc:v1:key1:'), randomBytes(48)]));
    await raw
      .put(`${s.storePrefix}/core/secrets/${ns}/unknown-key`)
      .value(Buffer.concat([Buffer.from('svc:enc:aescbc:v1:other:'), randomBytes(48)]));

    const bad = await s.client.get(`/api/v1/namespaces/${ns}/secrets/bad`);
    expect(bad.status).toBe(500);
    expect(bad.json()).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect(bad.json<{ message: string }>().message).toMatch(/^Internal error occurred: invalid (PKCS7|padding)/);
    const unknown = await s.client.get(`/api/v1/namespaces/${ns}/secrets/unknown-key`);
    expect(unknown.json()).toMatchObject({
      code: 500,
      message: 'Internal error occurred: no matching key was found for the provided AES transformer',
    });
    expect(await secretValue(s, ns, 'good')).toBe('fine');
    // Lists fail (from etcd and from the watch cache), naming the key, as Kubernetes' do.
    for (const q of ['', '?resourceVersion=0']) {
      const list = await s.client.get(`/api/v1/namespaces/${ns}/secrets${q}`);
      expect([q, list.status]).toEqual([q, 500]);
      expect(list.json<{ message: string }>().message).toContain(
        `unable to transform key "${s.storePrefix}/core/secrets/${ns}/`,
      );
    }
    const kubectlGet = await kubectl(s.svcconfigPath, ['get', 'secret', 'bad', '-n', ns]);
    expect(kubectlGet.code).not.toBe(0);
    expect(kubectlGet.stderr).toContain('Internal error occurred');
    // Other resources, other namespaces, and the server's health are untouched.
    expectCode(await s.client.get('/api/v1/namespaces/default/secrets'), 200);
    expectCode(await s.client.get(`/api/v1/namespaces/${ns}/configmaps`), 200);
    expect((await s.client.get('/readyz')).status).toBe(200);
    // Once the bad values are gone (removed in etcd), the list works again.
    await raw.delete().key(badKey);
    await raw.delete().key(`${s.storePrefix}/core/secrets/${ns}/unknown-key`);
    await waitFor(
      'the list to work again',
      async () => (await s.client.get(`/api/v1/namespaces/${ns}/secrets?resourceVersion=0`)).status === 200,
    );
    expectCode(await s.client.get(`/api/v1/namespaces/${ns}/secrets`), 200);
    await stop(s);
  });
});

describe('bad configuration files exit 2 with one line', () => {
  beforeAll(() => {
    if (!existsSync(BIN))
      throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
  });

  function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
    return new Promise((done, reject) => {
      const child = spawn(process.execPath, [BIN, '--store-servers', etcd.endpoints.join(','), ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no exit within 15 s: ${stderr}`));
      }, 15_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        done({ code, stderr });
      });
    });
  }

  it.each([
    [
      'a key of the wrong size',
      configYaml([{ resources: ['secrets'], providers: [keys('aesgcm', ['k', randomBytes(10).toString('base64')])] }]),
      'Error: --encryption-provider-config: error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 10, expected one of [16 24 32]',
    ],
    [
      'a rule masked by an earlier wildcard',
      configYaml([
        { resources: ['*.*'], providers: [{ identity: {} }] },
        { resources: ['secrets'], providers: [keys('aescbc', ['k', key()])] },
      ]),
      'Error: --encryption-provider-config: error while building transformers: resource "secrets" is masked by earlier rule "*.*"',
    ],
    [
      'an unknown field',
      configYaml([{ resources: ['secrets'], providers: [{ identity: {}, aes: {} } as Provider] }]),
      'strict decoding error: unknown field "resources[0].providers[0].aes"',
    ],
  ])('%s', async (_what, text, message) => {
    const file = join(dir, `bad-${randomBytes(4).toString('hex')}.yaml`);
    await writeFile(file, text);
    const r = await run(['--encryption-provider-config', file, '--secure-port', '0', '--cert-dir', join(dir, 'pki')]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(message);
  });

  it('a missing file, and the reload flag without a file', async () => {
    const missing = await run(['--encryption-provider-config', join(dir, 'nope.yaml'), '--secure-port', '0']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error reading encryption provider configuration file');
    const flag = await run(['--encryption-provider-config-automatic-reload']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      '--encryption-provider-config-automatic-reload must be set with --encryption-provider-config',
    );
  });
});
