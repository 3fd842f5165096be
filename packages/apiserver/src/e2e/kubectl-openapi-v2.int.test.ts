// Stock kubectl's client-side validation (`replace -f`, `apply -f` of a List) first reads
// /openapi/v2 in gnostic's Protobuf form (Accept: the `@v1.0+protobuf` spelling only) and gives
// up with "the server was unable to respond with a content type that the client supports" on a
// 406. Kubernetes' documented way to rewrite every Secret is `kubectl get secrets -A -o json |
// kubectl replace -f -`. Under --naming=kubernetes kubectl finds its own x-kubernetes-* names in
// the document and validates objects against it, so a wrong field is its own error, before any write.
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startKubectlEnv, uniqueName, type Json, type KubectlEnv, gatewayApiCrdDir } from '@svc/testing';
import {
  OPENAPI_V2_PROTOBUF,
  OPENAPI_V2_PROTOBUF_DEPRECATED,
  openApiV2ProtoRoot,
} from '../endpoints/openapi-v2-protobuf.js';

const GATEWAY_API = gatewayApiCrdDir();

interface Item {
  metadata: { name: string; namespace?: string; resourceVersion: string; [k: string]: unknown };
  [k: string]: unknown;
}

const items = (listJson: string): Item[] => (JSON.parse(listJson) as { items: Item[] }).items;
const versions = (list: Item[]): Map<string, string> =>
  new Map(list.map((i) => [`${i.metadata.namespace ?? ''}/${i.metadata.name}`, i.metadata.resourceVersion]));

/** Every object of `before` is in `after`, each with a newer resourceVersion (`moved`) or the same one. */
function expectVersions(before: Item[], after: Item[], want: 'moved' | 'kept'): void {
  const old = versions(before);
  const now = versions(after);
  expect([...now.keys()].sort()).toEqual([...old.keys()].sort());
  for (const [key, rv] of now) {
    const was = BigInt(old.get(key) ?? '0');
    expect({ key, rv: BigInt(rv) > was ? 'moved' : BigInt(rv) === was ? 'kept' : 'older' }).toEqual({ key, rv: want });
  }
}

/** The PUTs kubectl's `-v=6` log shows answered 200, by path (without the query). */
const okPuts = (log: string): string[] =>
  [...log.matchAll(/ PUT https:\/\/[^/]+(\/[^?\s]+)\S* 200 OK/g)].map((m) => m[1] ?? '').sort();

/** The same list with a label added to every item (an edit, so every replace writes). */
function labelled(listJson: string, value: string): string {
  const list = JSON.parse(listJson) as { items: Item[] };
  for (const i of list.items) i.metadata.labels = { ...(i.metadata.labels as Json | undefined), replaced: value };
  return JSON.stringify(list);
}

describe('kubectl replace and apply against the default naming', () => {
  let env: KubectlEnv;
  let ns: string;
  beforeAll(async () => {
    env = await startKubectlEnv();
    ns = uniqueName('oapi');
    await env.ok(['create', 'namespace', ns]);
  });
  afterAll(async () => {
    await env.stop();
  });

  // An unedited replace is a no-op update: as in Kubernetes (whose etcd3 store skips a write
  // of the bytes already stored), the objects keep their resourceVersions.
  it('`kubectl get configmaps -o json` into a file, unedited, then `kubectl replace -f` PUTs every one', async () => {
    for (const name of ['one', 'two', 'three']) {
      await env.ok(['create', 'configmap', name, '-n', ns, `--from-literal=key=${name}`]);
    }
    const listed = await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json']);
    const file = join(env.home, 'configmaps.json');
    await writeFile(file, listed.stdout);

    const replaced = await env.run(['replace', '-f', file, '-v=6']);
    expect({ code: replaced.code, errors: replaced.stderr.match(/^error.*$/gim) }).toEqual({ code: 0, errors: null });
    expect(replaced.stdout.trim().split('\n').sort()).toEqual(
      ['one', 'three', 'two'].map((n) => `configmap/${n} replaced`),
    );
    expect(okPuts(replaced.stderr)).toEqual(
      ['one', 'three', 'two'].map((n) => `/api/v1/namespaces/${ns}/configmaps/${n}`),
    );
    const after = items((await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json'])).stdout);
    expectVersions(items(listed.stdout), after, 'kept');
    expect(after.find((i) => i.metadata.name === 'two')?.data).toEqual({ key: 'two' });

    await writeFile(file, labelled(listed.stdout, 'yes'));
    await env.ok(['replace', '-f', file]);
    const edited = items((await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json'])).stdout);
    expectVersions(items(listed.stdout), edited, 'moved');
    expect(edited.map((i) => i.metadata.labels)).toEqual([
      { replaced: 'yes' },
      { replaced: 'yes' },
      { replaced: 'yes' },
    ]);
  });

  it('`kubectl get secrets -A -o json | kubectl replace -f -` replaces every Secret', async () => {
    const other = uniqueName('oapi');
    await env.ok(['create', 'namespace', other]);
    await env.ok(['create', 'secret', 'generic', 'pw', '-n', ns, '--from-literal=password=hunter2']);
    await env.ok(['create', 'secret', 'generic', 'pw', '-n', other, '--from-literal=password=swordfish']);
    const listed = await env.ok(['get', 'secrets', '-A', '-o', 'json']);
    const secrets = items(listed.stdout);
    expect(secrets.length).toBeGreaterThanOrEqual(2);

    const replaced = await env.run(['replace', '-f', '-', '-v=6'], { stdin: listed.stdout });
    expect({ code: replaced.code, errors: replaced.stderr.match(/^error.*$/gim) }).toEqual({ code: 0, errors: null });
    expect(okPuts(replaced.stderr)).toEqual(
      secrets.map((i) => `/api/v1/namespaces/${i.metadata.namespace ?? ''}/secrets/${i.metadata.name}`).sort(),
    );
    expectVersions(secrets, items((await env.ok(['get', 'secrets', '-A', '-o', 'json'])).stdout), 'kept');

    const edited = await env.run(['replace', '-f', '-'], { stdin: labelled(listed.stdout, 'yes') });
    expect({ code: edited.code, stderr: edited.stderr }).toEqual({ code: 0, stderr: '' });
    expectVersions(secrets, items((await env.ok(['get', 'secrets', '-A', '-o', 'json'])).stdout), 'moved');
  });

  it('`kubectl apply -f` of a List validates client-side (the default) and applies every item', async () => {
    const listed = await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json']);
    const applied = await env.run(['apply', '-f', '-'], { stdin: listed.stdout });
    expect(applied.code).toBe(0);
    // kubectl's own note that it adds its last-applied annotation, and no error.
    expect(applied.stderr).not.toMatch(/^error/im);
    expect(applied.stdout.trim().split('\n').sort()).toEqual(
      ['one', 'three', 'two'].map((n) => `configmap/${n} configured`),
    );
    expectVersions(
      items(listed.stdout),
      items((await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json'])).stdout),
      'moved',
    );
  });

  it('answers /openapi/v2 in the form asked for, with one ETag for both, 304 when unchanged, 406 otherwise', async () => {
    const c = env.server.client;
    const json = await c.get('/openapi/v2', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.headers.vary).toBe('Accept');
    const doc = json.json<{ paths: Json; definitions: Json }>();

    const pb = await c.get('/openapi/v2', { headers: { accept: OPENAPI_V2_PROTOBUF_DEPRECATED } });
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe(OPENAPI_V2_PROTOBUF);
    expect(pb.headers.etag).toBe(json.headers.etag);
    const type = openApiV2ProtoRoot().lookupType('openapi.v2.Document');
    const decoded = type.toObject(type.decode(pb.body)) as {
      paths: { path: { name: string }[] };
      definitions: { additional_properties: { name: string }[] };
    };
    expect(decoded.paths.path.map((p) => p.name)).toEqual(Object.keys(doc.paths));
    expect(decoded.definitions.additional_properties.map((d) => d.name)).toEqual(Object.keys(doc.definitions));

    const again = await c.get('/openapi/v2', {
      headers: { accept: OPENAPI_V2_PROTOBUF, 'if-none-match': String(pb.headers.etag) },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await c.get('/openapi/v2', { headers: { accept: 'application/yaml' } })).status).toBe(406);
  });
});

describe('kubectl validates against the Protobuf document under --naming=kubernetes', () => {
  let env: KubectlEnv;
  let ns: string;
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
    ns = uniqueName('oapi');
    await env.ok(['create', 'namespace', ns]);
    for (const name of ['a', 'b']) await env.ok(['create', 'configmap', name, '-n', ns, '--from-literal=k=v']);
  });
  afterAll(async () => {
    await env.stop();
  });

  it('replaces an unedited list, and rejects a misspelt field itself, writing nothing', async () => {
    const listed = await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json']);
    const replaced = await env.run(['replace', '-f', '-'], { stdin: listed.stdout });
    expect({ code: replaced.code, stderr: replaced.stderr }).toEqual({ code: 0, stderr: '' });

    const current = await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json']);
    const list = JSON.parse(current.stdout) as { items: Item[] };
    (list.items[1] as Item).metadata.nmae = 'typo';
    const rejected = await env.run(['replace', '-f', '-', '-v=6'], { stdin: JSON.stringify(list) });
    expect(rejected.code).not.toBe(0);
    // kubectl's own schema error (ValidationError), naming the definition it found in the document.
    expect(rejected.stderr).toMatch(/ValidationError\(ConfigMap\.metadata\): unknown field "nmae" in \S+\.ObjectMeta/);
    expect(rejected.stderr).not.toMatch(/PUT https:/);
    expect(versions(items((await env.ok(['get', 'configmaps', '-n', ns, '-o', 'json'])).stdout))).toEqual(
      versions(list.items),
    );
  });

  it('reads custom resources added at run time (the Gateway API CRDs) from the next document', async () => {
    const files = readdirSync(GATEWAY_API).filter((f) => f.endsWith('.yaml'));
    for (const f of files) await env.ok(['apply', '--server-side', '-f', join(GATEWAY_API, f)]);
    await env.ok([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/gatewayclasses.gateway.networking.k8s.io',
    ]);
    const gatewayClass = (name: string): Json => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name },
      spec: { controllerName: 'example.com/gateway-controller', description: name },
    });
    await env.ok(['create', '-f', await env.manifest(gatewayClass(uniqueName('gc')))]);
    await env.ok(['create', '-f', await env.manifest(gatewayClass(uniqueName('gc')))]);

    const listed = await env.ok(['get', 'gatewayclasses', '-o', 'json']);
    const replaced = await env.run(['replace', '-f', '-'], { stdin: labelled(listed.stdout, 'yes') });
    expect({ code: replaced.code, stderr: replaced.stderr }).toEqual({ code: 0, stderr: '' });
    const after = items((await env.ok(['get', 'gatewayclasses', '-o', 'json'])).stdout);
    expectVersions(items(listed.stdout), after, 'moved');

    const bad = { apiVersion: 'v1', kind: 'List', items: after.map((i) => ({ ...i, spec: { controlerName: 'x' } })) };
    const rejected = await env.run(['replace', '-f', '-'], { stdin: JSON.stringify(bad) });
    expect(rejected.code).not.toBe(0);
    expect(rejected.stderr).toMatch(/ValidationError\(GatewayClass\.spec\): unknown field "controlerName"/);
  });
});
