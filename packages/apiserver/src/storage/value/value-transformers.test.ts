import { createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { useNaming } from '@svc/api';
import { readEncryptionConfig, type EncryptionConfiguration } from './encryption-config.js';
import { buildEncryption } from './encryption-transformers.js';
import { KmsV2Envelope } from './kms-v2/envelope.js';
import { KmsV2Probe } from './kms-v2/probe.js';
import { decodeEncryptedObject } from './kms-v2/proto.js';
import { FakeKms } from './kms-plugin-testing.js';
import { ResourceTransformers } from './resource-transformers.js';
import type { Plaintext, ValueTransformer } from './transformer.js';

useNaming('svc');

const KEY = '/registry/core/secrets/default/s1';
const AD = Buffer.from(KEY);
const b64 = (n: number): string => randomBytes(n).toString('base64');

async function read(t: ValueTransformer, data: Buffer, ad = AD): Promise<Plaintext> {
  return t.fromStorage(data, ad);
}

async function write(t: ValueTransformer, text: string, ad = AD): Promise<Buffer> {
  return t.toStorage(Buffer.from(text), ad);
}

function configFile(doc: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-enc-'));
  const file = join(dir, 'enc.yaml');
  writeFileSync(file, typeof doc === 'string' ? doc : YAML.stringify(doc));
  return file;
}

function encryptionConfig(resources: unknown[]): unknown {
  return { apiVersion: 'apiserver.config.svc.io/v1', kind: 'EncryptionConfiguration', resources };
}

function secretsWith(...providers: unknown[]): EncryptionConfiguration {
  const file = configFile(encryptionConfig([{ resources: ['secrets'], providers }]));
  return readEncryptionConfig(file, false).config;
}

const noLog = (): void => undefined;

describe('local providers', () => {
  const k1 = b64(32);
  const k2 = b64(16);

  it.each([
    ['aescbc', { aescbc: { keys: [{ name: 'k1', secret: k1 }] } }],
    ['aesgcm', { aesgcm: { keys: [{ name: 'k1', secret: k1 }] } }],
    ['secretbox', { secretbox: { keys: [{ name: 'k1', secret: k1 }] } }],
  ])('%s: a value round-trips under svc:enc:<provider>:v1:k1:', async (name, provider) => {
    const e = buildEncryption(secretsWith(provider), { reload: false, log: noLog });
    const t = e.transformerFor('', 'secrets');
    const stored = await write(t, '{"secret":"plain-text-value"}');
    expect(stored.subarray(0, `svc:enc:${name}:v1:k1:`.length).toString()).toBe(`svc:enc:${name}:v1:k1:`);
    expect(stored.includes('plain-text-value')).toBe(false);
    expect(await read(t, stored)).toEqual({ data: Buffer.from('{"secret":"plain-text-value"}'), stale: false });
    // Another resource is untouched.
    expect(e.transformerFor('', 'configmaps').toStorage(Buffer.from('x'), AD)).toEqual(Buffer.from('x'));
  });

  it('aescbc lays a value out as Kubernetes does: IV, then AES-CBC with PKCS#7 padding', async () => {
    const key = randomBytes(32);
    const e = buildEncryption(secretsWith({ aescbc: { keys: [{ name: 'k', secret: key.toString('base64') }] } }), {
      reload: false,
      log: noLog,
    });
    const stored = await write(e.transformerFor('', 'secrets'), 'hello');
    const body = stored.subarray('svc:enc:aescbc:v1:k:'.length);
    const d = createDecipheriv('aes-256-cbc', key, body.subarray(0, 16));
    expect(Buffer.concat([d.update(body.subarray(16)), d.final()]).toString()).toBe('hello');
  });

  it('aesgcm binds a value to its key: under another key it does not decrypt', async () => {
    const e = buildEncryption(secretsWith({ aesgcm: { keys: [{ name: 'k1', secret: k1 }] } }), {
      reload: false,
      log: noLog,
    });
    const t = e.transformerFor('', 'secrets');
    const stored = await write(t, 'v');
    await expect(read(t, stored, Buffer.from('/registry/core/secrets/default/other'))).rejects.toThrow(
      'cipher: message authentication failed',
    );
  });

  it('the first key writes; a value of a later key or a later provider reads as stale', async () => {
    const old = buildEncryption(secretsWith({ aescbc: { keys: [{ name: 'k2', secret: k2 }] } }), {
      reload: false,
      log: noLog,
    });
    const storedOld = await write(old.transformerFor('', 'secrets'), 'v');
    const rotated = buildEncryption(
      secretsWith({
        aescbc: {
          keys: [
            { name: 'k1', secret: k1 },
            { name: 'k2', secret: k2 },
          ],
        },
      }),
      { reload: false, log: noLog },
    );
    const t = rotated.transformerFor('', 'secrets');
    expect(await read(t, storedOld)).toEqual({ data: Buffer.from('v'), stale: true });
    expect(await read(t, await write(t, 'v'))).toEqual({ data: Buffer.from('v'), stale: false });
    // identity first, aescbc second: encrypted values are stale, plain ones are not.
    const toPlain = buildEncryption(secretsWith({ identity: {} }, { aescbc: { keys: [{ name: 'k2', secret: k2 }] } }), {
      reload: false,
      log: noLog,
    }).transformerFor('', 'secrets');
    expect(await read(toPlain, storedOld)).toEqual({ data: Buffer.from('v'), stale: true });
    expect(await read(toPlain, Buffer.from('{"a":1}'))).toEqual({ data: Buffer.from('{"a":1}'), stale: false });
  });

  it('values nobody can decrypt fail with Kubernetes messages', async () => {
    const stored = await write(
      buildEncryption(secretsWith({ aescbc: { keys: [{ name: 'gone', secret: k1 }] } }), {
        reload: false,
        log: noLog,
      }).transformerFor('', 'secrets'),
      'v',
    );
    const cbc = buildEncryption(secretsWith({ aescbc: { keys: [{ name: 'k1', secret: k1 }] } }, { identity: {} }), {
      reload: false,
      log: noLog,
    }).transformerFor('', 'secrets');
    await expect(read(cbc, stored)).rejects.toThrow('no matching key was found for the provided AES transformer');
    const gcm = buildEncryption(secretsWith({ aesgcm: { keys: [{ name: 'k1', secret: k1 }] } }, { identity: {} }), {
      reload: false,
      log: noLog,
    }).transformerFor('', 'secrets');
    await expect(read(gcm, stored)).rejects.toThrow('no matching prefix found');
    const plain = buildEncryption(secretsWith({ identity: {} }), { reload: false, log: noLog }).transformerFor(
      '',
      'secrets',
    );
    await expect(read(plain, stored)).rejects.toThrow('no matching prefix found');
    // Unconfigured resources read with the encrypt-check identity.
    const none = new ResourceTransformers(
      '/registry',
      buildEncryption(secretsWith({ identity: {} }), { reload: false, log: noLog }),
    );
    await expect(read(none.forKey('/registry/core/configmaps/default/c') as ValueTransformer, stored)).rejects.toThrow(
      'identity transformer tried to read encrypted data',
    );
    const secretbox = buildEncryption(secretsWith({ secretbox: { keys: [{ name: 'k1', secret: k1 }] } }), {
      reload: false,
      log: noLog,
    }).transformerFor('', 'secrets');
    const boxed = Buffer.from(await write(secretbox, 'v'));
    boxed.writeUInt8((boxed.at(-1) ?? 0) ^ 0xff, boxed.length - 1);
    await expect(read(secretbox, boxed)).rejects.toThrow('output array was not large enough for encryption');
  });
});

describe('resources and wildcards', () => {
  const key = b64(32);
  const aes = { aescbc: { keys: [{ name: 'k', secret: key }] } };
  const gcm = { aesgcm: { keys: [{ name: 'g', secret: key }] } };
  function build(resources: unknown[]): ResourceTransformers {
    const cfg = readEncryptionConfig(configFile(encryptionConfig(resources)), false).config;
    return new ResourceTransformers('/registry', buildEncryption(cfg, { reload: false, log: noLog }));
  }
  async function providerOf(t: ResourceTransformers, key: string): Promise<string> {
    const out = await (t.forKey(key) as ValueTransformer).toStorage(Buffer.from('{}'), Buffer.from(key));
    const m = /^svc:enc:([a-z]+):/.exec(out.toString('latin1'));
    return m?.[1] ?? 'identity';
  }

  it('a resource rule wins over its group wildcard, which wins over *.*', async () => {
    const t = build([
      { resources: ['secrets'], providers: [aes] },
      { resources: ['*.apps'], providers: [gcm] },
      { resources: ['*.*'], providers: [{ secretbox: { keys: [{ name: 's', secret: key }] } }] },
    ]);
    expect(await providerOf(t, '/registry/core/secrets/ns/a')).toBe('aescbc');
    expect(await providerOf(t, '/registry/apps/deployments/ns/a')).toBe('aesgcm');
    expect(await providerOf(t, '/registry/core/configmaps/ns/a')).toBe('secretbox');
    expect(await providerOf(t, '/registry/example.com/widgets/ns/a')).toBe('secretbox');
    expect(t.forKey('/health')).toBeUndefined();
    expect(t.forKey('compact_rev_key')).toBeUndefined();
  });

  it('*. is every resource of the core group only', async () => {
    const t = build([{ resources: ['*.'], providers: [aes] }]);
    expect(await providerOf(t, '/registry/core/configmaps/ns/a')).toBe('aescbc');
    expect(await providerOf(t, '/registry/apps/deployments/ns/a')).toBe('identity');
  });

  it('a resource listed in two entries gets the providers of both, in order', async () => {
    const t = build([
      { resources: ['secrets'], providers: [gcm] },
      { resources: ['secrets', 'configmaps'], providers: [aes] },
    ]);
    expect(await providerOf(t, '/registry/core/secrets/ns/a')).toBe('aesgcm');
    const stored = await (t.forKey('/registry/core/configmaps/ns/a') as ValueTransformer).toStorage(
      Buffer.from('x'),
      AD,
    );
    expect((await read(t.forKey(KEY) as ValueTransformer, stored)).stale).toBe(true);
  });

  it.each([
    [
      [
        { resources: ['*.'], providers: [aes] },
        { resources: ['secrets'], providers: [aes] },
      ],
      'error while building transformers: resource "secrets" is masked by earlier rule "*."',
    ],
    [
      [
        { resources: ['*.*'], providers: [aes] },
        { resources: ['deployments.apps'], providers: [aes] },
      ],
      'error while building transformers: resource "deployments.apps" is masked by earlier rule "*.*"',
    ],
    [
      [
        { resources: ['*.apps'], providers: [aes] },
        { resources: ['deployments.apps'], providers: [aes] },
      ],
      'error while building transformers: resource "deployments.apps" is masked by earlier rule "*.apps"',
    ],
  ])('a rule an earlier wildcard masks is refused', (resources, message) => {
    const cfg = readEncryptionConfig(configFile(encryptionConfig(resources)), false).config;
    expect(() => buildEncryption(cfg, { reload: false, log: noLog })).toThrow(message);
  });
});

describe('readEncryptionConfig: Kubernetes validation messages', () => {
  const good = b64(32);
  it.each([
    [encryptionConfig([]), 'error while parsing file: resources: Required value: at least one resources is required'],
    [
      encryptionConfig([
        { resources: ['secrets'], providers: [{ aescbc: { keys: [{ name: 'k', secret: b64(8) }] } }] },
      ]),
      'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]',
    ],
    [
      encryptionConfig([
        { resources: ['secrets'], providers: [{ secretbox: { keys: [{ name: 'k', secret: b64(16) }] } }] },
      ]),
      'error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
    ],
    [
      encryptionConfig([
        { resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: '', secret: 'not base64!' }] } }] },
      ]),
      'error while parsing file: [resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded]',
    ],
    [
      encryptionConfig([{ resources: ['secrets'], providers: [{ aesgcm: { keys: [] } }] }]),
      'error while parsing file: resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required',
    ],
    [
      encryptionConfig([{ resources: [], providers: [] }]),
      'error while parsing file: [resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]',
    ],
    [
      encryptionConfig([{ resources: ['Secrets'], providers: [{ identity: {} }] }]),
      'error while parsing file: resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
    ],
    [
      encryptionConfig([{ resources: ['*'], providers: [{ identity: {} }] }]),
      `error while parsing file: resources[0].resources[0]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`,
    ],
    [
      encryptionConfig([{ resources: ['secrets.*'], providers: [{ identity: {} }] }]),
      'error while parsing file: resources[0].resources[0]: Invalid value: "secrets.*": encrypting the same resource across groups is not supported',
    ],
    [
      encryptionConfig([{ resources: ['events.events.svc.io'], providers: [{ identity: {} }] }]),
      `error while parsing file: resources[0].resources[0]: Invalid value: "events.events.svc.io": '*.events.svc.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`,
    ],
    [
      encryptionConfig([{ resources: ['secrets', '*.'], providers: [{ identity: {} }] }]),
      `error while parsing file: resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
    ],
    [
      encryptionConfig([{ resources: ['secrets', 'secrets'], providers: [{ identity: {} }] }]),
      'error while parsing file: resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be specified multiple times',
    ],
    [
      encryptionConfig([{ resources: ['secrets'], providers: [{}] }]),
      'error while parsing file: resources[0].providers[0]: Invalid value: {}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity',
    ],
    [
      encryptionConfig([
        {
          resources: ['secrets'],
          providers: [{ kms: { apiVersion: 'v2', name: 'a:b', endpoint: 'tcp://x', timeout: '0s' } }],
        },
      ]),
      'error while parsing file: [resources[0].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain \':\', resources[0].providers[0].kms.timeout: Invalid value: 0s: timeout should be a positive value, resources[0].providers[0].kms.endpoint: Invalid value: "tcp://x": unsupported scheme "tcp" for KMS provider, only unix is supported]',
    ],
    [
      encryptionConfig([
        {
          resources: ['secrets'],
          providers: [
            { kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///a.sock' } },
            { kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///b.sock', cachesize: 10 } },
          ],
        },
      ]),
      'error while parsing file: [resources[0].providers[1].kms.name: Invalid value: "p": duplicate KMS provider name p, names must be unique, resources[0].providers[1].kms.cachesize: Invalid value: 10: cachesize is not supported in v2]',
    ],
    [
      encryptionConfig([{ resources: ['secrets'], providers: [{ identity: {}, bogus: 1 }] }]),
      'error while parsing file: error decoding encryption provider configuration file',
    ],
    [
      { apiVersion: 'v1', kind: 'EncryptionConfiguration', resources: [] },
      'no kind "EncryptionConfiguration" is registered for version "v1"',
    ],
    ['', 'is empty'],
  ])('%j', (doc, message) => {
    expect(() => readEncryptionConfig(configFile(doc), false)).toThrow(message);
  });

  it('unknown fields are named (strict decoding)', () => {
    const file = configFile(encryptionConfig([{ resources: ['secrets'], providers: [{ identity: {}, bogus: 1 }] }]));
    expect(() => readEncryptionConfig(file, false)).toThrow(
      'strict decoding error: unknown field "resources[0].providers[0].bogus"',
    );
  });

  it('KMS defaults: timeout 3s; the Kubernetes spelling of the group is accepted too', () => {
    const cfg = readEncryptionConfig(
      configFile({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'EncryptionConfiguration',
        resources: [
          {
            resources: ['secrets'],
            providers: [
              { kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///x.sock' } },
              { aescbc: { keys: [{ name: 'k', secret: good }] } },
            ],
          },
        ],
      }),
      false,
    ).config;
    expect(cfg.resources[0]?.providers[0]?.kms).toEqual({
      apiVersion: 'v2',
      name: 'p',
      endpoint: 'unix:///x.sock',
      timeoutMs: 3000,
    });
  });

  it('KMS v1 (the default apiVersion) is refused when building', () => {
    const cfg = readEncryptionConfig(
      configFile(
        encryptionConfig([
          { resources: ['secrets'], providers: [{ kms: { name: 'old', endpoint: 'unix:///x.sock' } }] },
        ]),
      ),
      false,
    ).config;
    expect(() => buildEncryption(cfg, { reload: false, log: noLog })).toThrow('could not configure KMS plugin "old"');
  });
});

describe('KMS v2 envelope', () => {
  function setUp(kms: FakeKms): { probe: KmsV2Probe; t: KmsV2Envelope } {
    const probe = new KmsV2Probe({ name: 'fake', plugin: kms.plugin, log: noLog });
    return { probe, t: new KmsV2Envelope({ plugin: kms.plugin, state: () => probe.currentState() }) };
  }

  it('encrypts with a local data key the plugin encrypted once; reads ask the plugin only for unknown data keys', async () => {
    const kms = new FakeKms();
    const { probe, t } = setUp(kms);
    await expect(write(t, 'x')).rejects.toThrow('got unexpected nil transformer');
    await probe.check();
    expect(kms.encrypts).toBe(1);
    const a = await write(t, '{"a":"secret-a"}');
    const b = await write(t, '{"b":"secret-b"}', Buffer.from('/registry/core/secrets/ns/b'));
    expect(kms.encrypts).toBe(1);
    const obj = decodeEncryptedObject(a);
    expect(obj.keyID).toBe('key-1');
    expect(obj.encryptedDEKSourceType).toBe(1);
    expect(obj.annotations['fake.kms.example.com']?.toString()).toBe('1');
    expect(a.includes('secret-a')).toBe(false);
    expect(await read(t, a)).toEqual({ data: Buffer.from('{"a":"secret-a"}'), stale: false });
    expect(kms.decrypts).toBe(0); // its own data key is cached
    // Another server (a fresh envelope) asks the plugin once for the data key, then reuses it.
    const other = setUp(kms);
    await other.probe.check();
    expect(await read(other.t, b, Buffer.from('/registry/core/secrets/ns/b'))).toEqual({
      data: Buffer.from('{"b":"secret-b"}'),
      stale: false, // another seed under the same key ID: only the key ID counts
    });
  });

  it('a new key ID at the plugin makes a new data key; older values read as stale', async () => {
    const kms = new FakeKms();
    const { probe, t } = setUp(kms);
    await probe.check();
    const old = await write(t, 'v');
    kms.keyId = 'key-2';
    await new Promise((r) => setTimeout(r, 0));
    // The healthy answer is cached for 20 s; a fresh probe sees the new key.
    const fresh = new KmsV2Probe({ name: 'fake', plugin: kms.plugin, log: noLog });
    await fresh.check();
    const t2 = new KmsV2Envelope({ plugin: kms.plugin, state: () => fresh.currentState() });
    expect((await read(t2, old)).stale).toBe(true);
    expect(decodeEncryptedObject(await write(t2, 'v')).keyID).toBe('key-2');
    expect((await read(t2, await write(t2, 'v'))).stale).toBe(false);
  });

  it('an unhealthy plugin fails the check with its answer', async () => {
    const kms = new FakeKms();
    kms.healthz = 'degraded';
    const { probe } = setUp(kms);
    await expect(probe.check()).rejects.toThrow(
      'kmsv2 Provider fake is not healthy, error: got unexpected healthz status: degraded',
    );
    const down = new FakeKms();
    down.failing = 'connection refused';
    await expect(setUp(down).probe.check()).rejects.toThrow(
      'failed to perform status section of the healthz check for KMS Provider fake, error: connection refused',
    );
  });

  it('a data key the plugin cannot decrypt fails the read', async () => {
    const kms = new FakeKms();
    const { probe, t } = setUp(kms);
    await probe.check();
    const stored = await write(t, 'v');
    const other = new FakeKms();
    const p2 = new KmsV2Probe({ name: 'fake', plugin: other.plugin, log: noLog });
    await p2.check();
    other.failing = 'no such key';
    const t2 = new KmsV2Envelope({ plugin: other.plugin, state: () => p2.currentState() });
    await expect(read(t2, stored)).rejects.toThrow('failed to decrypt DEK, error: no such key');
  });
});
