// ImagePolicyWebhook against an in-process backend (plain HTTP here; the integration test has
// HTTPS): the ImageReview sent, denials, audit annotations, the cache, retries, defaultAllow,
// and its configuration file.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '@svc/api';
import { ConfigurationError } from '../options.js';
import { ImagePolicyWebhook, parseImagePolicyConfig, type ImagePolicyConfig } from './image-policy-webhook.js';
import { attributes, failure, podObject } from './admission-testing.js';

type Reply = { status: number; body: string };
let server: Server;
let url: string;
let dir: string;
let kubeconfig: string;
const received: Array<{ path: string; review: Record<string, unknown> }> = [];
let reply: (review: Record<string, unknown>) => Reply = () => allow();

const allow = (extra: Record<string, unknown> = {}): Reply => ({
  status: 200,
  body: JSON.stringify({
    apiVersion: 'imagepolicy.svc.io/v1alpha1',
    kind: 'ImageReview',
    status: { allowed: true, ...extra },
  }),
});

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as Record<string, unknown>;
      received.push({ path: req.url ?? '', review });
      const r = reply(review);
      res.writeHead(r.status, { 'Content-Type': r.status === 200 ? 'application/json' : 'text/plain' });
      res.end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/review`;
  dir = await mkdtemp(join(tmpdir(), 'svc-image-policy-'));
  kubeconfig = join(dir, 'backend.yaml');
  await writeFile(kubeconfig, `clusters:\n- name: b\n  cluster:\n    server: ${url}\n`);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  received.length = 0;
  reply = () => allow();
});

const config = (o: Partial<ImagePolicyConfig> = {}): ImagePolicyConfig => ({
  target: { server: url, insecureSkipTlsVerify: false },
  allowTtlMs: 0,
  denyTtlMs: 0,
  retryBackoffMs: 1,
  defaultAllow: false,
  ...o,
});

const pod = (): ReturnType<typeof podObject> =>
  podObject(
    {
      initContainers: [{ name: 'i', image: 'init:1' }],
      containers: [{ name: 'c', image: 'app:1' }],
      ephemeralContainers: [{ name: 'e', image: 'debug:1' }],
    },
    { annotations: { 'mycluster.image-policy.svc.io/ticket': '1234', other: 'x' } },
  );

describe('the review', () => {
  it('sends the containers then init containers, the annotations of the image-policy domain and the namespace', async () => {
    const a = attributes({ resource: 'pods', object: pod() });
    await new ImagePolicyWebhook(config()).validate(a);
    expect(received).toEqual([
      {
        path: '/review?timeout=30s',
        review: {
          kind: 'ImageReview',
          apiVersion: 'imagepolicy.svc.io/v1alpha1',
          metadata: { creationTimestamp: null },
          spec: {
            containers: [{ image: 'app:1' }, { image: 'init:1' }],
            annotations: { 'mycluster.image-policy.svc.io/ticket': '1234' },
            namespace: 'ns',
          },
          status: { allowed: false },
        },
      },
    ]);
    const e = attributes({
      resource: 'pods',
      subresource: 'ephemeralcontainers',
      operation: 'UPDATE',
      object: pod(),
      oldObject: pod(),
    });
    await new ImagePolicyWebhook(config()).validate(e);
    expect((received[1]?.review.spec as { containers: unknown }).containers).toEqual([{ image: 'debug:1' }]);
  });

  it('refuses what the backend denies, with its reason, and records its audit annotations', async () => {
    reply = () => ({
      status: 200,
      body: JSON.stringify({
        status: { allowed: false, reason: 'unsigned', auditAnnotations: { why: 'no signature' } },
      }),
    });
    const a = attributes({ resource: 'pods', object: pod() });
    const s = await failure(new ImagePolicyWebhook(config()).validate(a));
    expect([s.code, s.message]).toEqual([
      403,
      'pods "p" is forbidden: image policy webhook backend denied one or more images: unsigned',
    ]);
    expect(a.annotations).toEqual({ 'imagepolicywebhook.image-policy.svc.io/why': 'no signature' });
    reply = () => ({ status: 200, body: JSON.stringify({ status: { allowed: false } }) });
    expect(
      (await failure(new ImagePolicyWebhook(config()).validate(attributes({ resource: 'pods', object: pod() }))))
        .message,
    ).toBe('pods "p" is forbidden: one or more images rejected by webhook backend');
  });

  it('caches answers for their TTL', async () => {
    let now = 0;
    const plugin = new ImagePolicyWebhook(config({ allowTtlMs: 1000 }), { now: () => now });
    await plugin.validate(attributes({ resource: 'pods', object: pod() }));
    now = 999;
    await plugin.validate(attributes({ resource: 'pods', object: pod() }));
    expect(received).toHaveLength(1);
    now = 1000;
    await plugin.validate(attributes({ resource: 'pods', object: pod() }));
    expect(received).toHaveLength(2);
  });

  it('retries 500s five times, then refuses with client-go words; or admits and annotates with defaultAllow', async () => {
    reply = () => ({ status: 500, body: 'boom' });
    const s = await failure(new ImagePolicyWebhook(config()).validate(attributes({ resource: 'pods', object: pod() })));
    expect(received).toHaveLength(5);
    expect(s.message).toBe(
      'pods "p" is forbidden: an error on the server ("boom") has prevented the request from succeeding',
    );
    received.length = 0;
    reply = () => ({ status: 400, body: 'no' });
    const a = attributes({ resource: 'pods', object: pod() });
    await new ImagePolicyWebhook(config({ defaultAllow: true })).validate(a);
    expect(received).toHaveLength(1);
    expect(a.annotations).toEqual({ 'imagepolicywebhook.image-policy.svc.io/failed-open': 'true' });
    expect((a.object as Pod).metadata.annotations?.['alpha.image-policy.svc.io/failed-open']).toBe('true');
  });

  it('refuses when the backend cannot be reached', async () => {
    const gone = config({ target: { server: 'http://127.0.0.1:1/x', insecureSkipTlsVerify: false } });
    expect(
      (await failure(new ImagePolicyWebhook(gone).validate(attributes({ resource: 'pods', object: pod() })))).message,
    ).toBe(
      'pods "p" is forbidden: Post "http://127.0.0.1:1/x?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused',
    );
  });

  it('leaves other subresources and resources alone', async () => {
    const plugin = new ImagePolicyWebhook(config());
    await plugin.validate(
      attributes({ resource: 'pods', subresource: 'status', operation: 'UPDATE', object: pod(), oldObject: pod() }),
    );
    await plugin.validate(attributes({ resource: 'configmaps', object: { metadata: { name: 'c', namespace: 'ns' } } }));
    expect(received).toEqual([]);
  });
});

describe('the configuration', () => {
  it('takes seconds, milliseconds, -1 (off) and 0 (the default)', () => {
    const c = parseImagePolicyConfig({
      imagePolicy: { kubeConfigFile: kubeconfig, allowTTL: 50, denyTTL: -1, retryBackoff: 0, defaultAllow: true },
    });
    expect([c.allowTtlMs, c.denyTtlMs, c.retryBackoffMs, c.defaultAllow, c.target.server]).toEqual([
      50_000,
      0,
      500,
      true,
      url,
    ]);
    const d = parseImagePolicyConfig({ imagePolicy: { kubeConfigFile: kubeconfig } });
    expect([d.allowTtlMs, d.denyTtlMs, d.defaultAllow]).toEqual([300_000, 30_000, false]);
  });

  it.each<[unknown, string]>([
    [undefined, 'no config specified'],
    [{ imagePolicy: { kubeConfigFile: 'x', allowTTL: 3600 } }, 'valid value is between 1s and 30m0s, got 1h0m0s'],
    [{ imagePolicy: { kubeConfigFile: 'x', denyTTL: 1 } }, 'valid value is between 1s and 30m0s, got 1s'],
    [{ imagePolicy: { kubeConfigFile: 'x', retryBackoff: 400000 } }, 'valid value is between 1ns and 5m0s, got 6m40s'],
    [{ imagePolicy: { allowTTL: 'soon' } }, 'imagePolicy.allowTTL must be an integer'],
    [{ imagePolicy: {} }, 'invalid configuration: no configuration has been provided'],
    [{ imagePolicy: { kubeConfigFile: '/nonexistent/backend.yaml' } }, 'ENOENT'],
  ])('refuses %j', (raw, why) => {
    expect(() => parseImagePolicyConfig(raw)).toThrow(ConfigurationError);
    expect(() => parseImagePolicyConfig(raw)).toThrow(why);
  });
});
