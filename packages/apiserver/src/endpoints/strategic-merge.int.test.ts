// Strategic merge patch over HTTPS against a real etcd: merge keys and strategies from the
// types' schemas, every directive (`$patch`, `$deleteFromPrimitiveList`, `$setElementOrder`,
// `$retainKeys`), and malformed patches of every patch type, each answered with a 4xx Status
// while the stored bytes in etcd stay exactly as they were.
import { Etcd3 } from 'etcd3';
import {
  startTestApiServer,
  type HttpResponse,
  type TestApiServer,
  uniqueName,
  expectCode,
  expectFailure,
  type Json,
  MEDIA,
  createNamespace,
  createDefaultServiceAccount,
} from '@svc/testing';
import { coreKey, readStored, type StoredObject } from './stored-testing.js';
const MERGE = MEDIA.MERGE;
const SMP = MEDIA.SMP;
const JSON_PATCH = MEDIA.JSON_PATCH;
const APPLY = MEDIA.APPLY;

let t: TestApiServer;
let etcd: Etcd3;
let ns: string;

const path = (resource: string, name = ''): string => `/api/v1/namespaces/${ns}/${resource}${name ? `/${name}` : ''}`;
/** The object stored in etcd (value and mod revision), or undefined. */
function raw(resource: string, name: string): Promise<StoredObject | undefined> {
  return readStored(etcd, coreKey(t.storePrefix, resource, { namespace: ns, name }));
}

async function stored(resource: string, name: string): Promise<Json> {
  const r = await raw(resource, name);
  if (!r) throw new Error(`${resource}/${name} is not in etcd`);
  return r.value;
}

function smp(resource: string, name: string, patch: unknown): Promise<HttpResponse> {
  return t.client.patch(path(resource, name), JSON.stringify(patch), SMP);
}

async function create(resource: string, obj: Json): Promise<Json> {
  return expectCode(await t.client.post(path(resource), obj), 201);
}

async function createCm(name: string, extra: Json = {}): Promise<Json> {
  const { metadata, ...rest } = extra;
  return create('configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(metadata as Json | undefined) },
    ...rest,
  });
}

async function createPod(name: string, spec: Json): Promise<Json> {
  return create('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
}

async function createService(name: string, spec: Json): Promise<Json> {
  return create('services', { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
}

const names = (list: Json[] | undefined, k = 'name'): unknown[] => (list ?? []).map((x) => x[k]);

beforeAll(async () => {
  t = await startTestApiServer();
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = await createNamespace(t.client, 'smp');
  await createDefaultServiceAccount(t.client, ns);
});

afterAll(async () => {
  etcd?.close();
  await t?.stop();
});

describe('merge keys and strategies from the schema', () => {
  it('containers merge by name: patching one container changes only that one', async () => {
    const name = uniqueName('pod');
    await createPod(name, {
      containers: [
        { name: 'a', image: 'example/a:1' },
        { name: 'b', image: 'example/b:1' },
      ],
    });
    const patched = expectCode(
      await smp('pods', name, { spec: { containers: [{ name: 'b', image: 'example/b:2' }] } }),
      200,
    );
    expect((patched.spec.containers as Json[]).map((c) => `${c.name as string}=${c.image as string}`)).toEqual([
      'a=example/a:1',
      'b=example/b:2',
    ]);
    // The defaults of the untouched container survive the merge.
    expect(patched.spec.containers[0].terminationMessagePath).toBe('/dev/termination-log');
    expect((await stored('pods', name)).spec.containers[1].image).toBe('example/b:2');
  });

  it('service ports merge by port: a new port is added, an existing one merged', async () => {
    const name = uniqueName('svc');
    await createService(name, { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] });
    const patched = expectCode(
      await smp('services', name, {
        spec: {
          ports: [
            { name: 'https', port: 443 },
            { port: 80, targetPort: 8080 },
          ],
        },
      }),
      200,
    );
    const ports = patched.spec.ports as Json[];
    expect((names(ports, 'port') as number[]).sort((x, y) => x - y)).toEqual([80, 443]);
    expect(ports.find((p) => p.port === 80)).toMatchObject({ name: 'http', targetPort: 8080, protocol: 'TCP' });
    expect(ports.find((p) => p.port === 443)).toMatchObject({ name: 'https', protocol: 'TCP' });
    expect((await stored('services', name)).spec.ports).toEqual(ports);
  });

  it('a list without a merge strategy is replaced whole', async () => {
    const name = uniqueName('svc-atomic');
    await createService(name, { ports: [{ port: 80 }], externalIPs: ['192.0.2.1', '192.0.2.2'] });
    const patched = expectCode(await smp('services', name, { spec: { externalIPs: ['192.0.2.9'] } }), 200);
    expect(patched.spec.externalIPs).toEqual(['192.0.2.9']);
  });

  it('a patch or PUT that changes nothing writes nothing: same resourceVersion and generation (configmap and pod)', async () => {
    const cmName = uniqueName('noop-cm');
    const cm = await createCm(cmName, { data: { a: '1' } });
    const cmAfter = expectCode(await smp('configmaps', cmName, { data: { a: '1' } }), 200);
    expect(cmAfter.metadata.resourceVersion).toBe(cm.metadata.resourceVersion);
    expect((await raw('configmaps', cmName))?.modRevision).toBe(cm.metadata.resourceVersion);

    // A pod (a type with spec and generation): strategic, merge and PUT writes that change nothing.
    const podName = uniqueName('noop-pod');
    const pod = await createPod(podName, { containers: [{ name: 'a', image: 'example/a:1' }] });
    const noops: Array<[string, () => Promise<HttpResponse>]> = [
      [
        'strategic merge patch',
        () => smp('pods', podName, { spec: { containers: [{ name: 'a', image: 'example/a:1' }] } }),
      ],
      ['merge patch', () => t.client.patch(path('pods', podName), { metadata: { labels: null } }, MERGE)],
      [
        'PUT of the object as read',
        async () => t.client.put(path('pods', podName), expectCode(await t.client.get(path('pods', podName)), 200)),
      ],
    ];
    for (const [what, write] of noops) {
      const after = expectCode(await write(), 200);
      expect({ what, generation: after.metadata.generation, resourceVersion: after.metadata.resourceVersion }).toEqual({
        what,
        generation: pod.metadata.generation,
        resourceVersion: pod.metadata.resourceVersion,
      });
    }
    expect((await raw('pods', podName))?.modRevision).toBe(pod.metadata.resourceVersion);
  });

  it('maps merge key by key and null deletes a key', async () => {
    const name = uniqueName('cm-map');
    await createCm(name, { metadata: { labels: { keep: 'k', drop: 'd' } }, data: { a: '1', b: '2' } });
    const patched = expectCode(
      await smp('configmaps', name, { metadata: { labels: { drop: null, added: 'x' } }, data: { b: null, c: '3' } }),
      200,
    );
    expect(patched.data).toEqual({ a: '1', c: '3' });
    expect(patched.metadata.labels).toEqual({ keep: 'k', added: 'x' });
    expect((await stored('configmaps', name)).data).toEqual({ a: '1', c: '3' });
  });

  it('a primitive merge list (finalizers) gains new items, new ones first, without duplicates', async () => {
    const name = uniqueName('cm-fin');
    await createCm(name, { metadata: { finalizers: ['example.com/a', 'example.com/c'] } });
    const patched = expectCode(
      await smp('configmaps', name, { metadata: { finalizers: ['example.com/d', 'example.com/a'] } }),
      200,
    );
    expect(patched.metadata.finalizers).toEqual(['example.com/d', 'example.com/a', 'example.com/c']);
    expectCode(
      await smp('configmaps', name, {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a', 'example.com/c', 'example.com/d'] },
      }),
      200,
    );
  });
});

describe('directives', () => {
  it('$patch: delete in a list removes the item with that merge key', async () => {
    const name = uniqueName('del-item');
    await createService(name, {
      ports: [
        { name: 'http', port: 80 },
        { name: 'alt', port: 81 },
        { name: 'https', port: 443 },
      ],
    });
    const patched = expectCode(await smp('services', name, { spec: { ports: [{ port: 81, $patch: 'delete' }] } }), 200);
    expect(names(patched.spec.ports, 'port')).toEqual([80, 443]);
    expect(names((await stored('services', name)).spec.ports, 'port')).toEqual([80, 443]);
  });

  it('$patch: replace in a list replaces the whole list with the patch items', async () => {
    const name = uniqueName('replace-list');
    await createService(name, {
      ports: [
        { name: 'http', port: 80 },
        { name: 'alt', port: 81 },
      ],
    });
    const patched = expectCode(
      await smp('services', name, { spec: { ports: [{ name: 'grpc', port: 9000 }, { $patch: 'replace' }] } }),
      200,
    );
    expect(patched.spec.ports).toEqual([{ name: 'grpc', port: 9000, protocol: 'TCP', targetPort: 9000 }]);
    expect((await stored('services', name)).spec.ports).toEqual(patched.spec.ports);
  });

  it('$patch: merge in a list is refused (Kubernetes: "merging lists cannot yet be specified"); nothing changes', async () => {
    const name = uniqueName('merge-list');
    await createService(name, { ports: [{ name: 'http', port: 80 }] });
    const before = await raw('services', name);
    expectFailure(await smp('services', name, { spec: { ports: [{ name: 'x', port: 81 }, { $patch: 'merge' }] } }), {
      code: 400,
      reason: 'BadRequest',
      message: /merging lists cannot yet be specified in the patch/,
    });
    expect(await raw('services', name)).toEqual(before);
  });

  it('$patch: replace in a map replaces the whole map with the rest of the patch map', async () => {
    const name = uniqueName('replace-map');
    await createCm(name, { metadata: { labels: { a: '1', b: '2' } }, data: { x: '1', y: '2' } });
    const patched = expectCode(
      await smp('configmaps', name, {
        metadata: { labels: { $patch: 'replace', c: '3' } },
        data: { $patch: 'replace', z: '26' },
      }),
      200,
    );
    expect(patched.metadata.labels).toEqual({ c: '3' });
    expect(patched.data).toEqual({ z: '26' });
    const s = await stored('configmaps', name);
    expect(s.metadata.labels).toEqual({ c: '3' });
    expect(s.data).toEqual({ z: '26' });
  });

  it('$patch: delete in a map empties the map', async () => {
    const name = uniqueName('delete-map');
    await createCm(name, { metadata: { labels: { a: '1' } }, data: { x: '1', y: '2' } });
    const patched = expectCode(await smp('configmaps', name, { data: { $patch: 'delete' } }), 200);
    expect(patched.data ?? {}).toEqual({});
    expect(patched.metadata.labels).toEqual({ a: '1' });
    expect((await stored('configmaps', name)).data ?? {}).toEqual({});
  });

  it('$patch: merge in a map is refused as an unknown patch type; nothing changes', async () => {
    const name = uniqueName('merge-map');
    await createCm(name, { data: { x: '1' } });
    const before = await raw('configmaps', name);
    expectFailure(await smp('configmaps', name, { data: { $patch: 'merge', y: '2' } }), {
      code: 400,
      reason: 'BadRequest',
      message: /unknown patch type: merge/,
    });
    expect(await raw('configmaps', name)).toEqual(before);
  });

  it('$deleteFromPrimitiveList/finalizers removes the listed values only', async () => {
    const name = uniqueName('del-prim');
    await createCm(name, { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } });
    const patched = expectCode(
      await smp('configmaps', name, {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/b', 'example.com/absent'] },
      }),
      200,
    );
    expect(patched.metadata.finalizers).toEqual(['example.com/a', 'example.com/c']);
    expect((await stored('configmaps', name)).metadata.finalizers).toEqual(['example.com/a', 'example.com/c']);
    // Clean up so the namespace holds no finalizer-blocked objects.
    expectCode(
      await smp('configmaps', name, {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a', 'example.com/c'] },
      }),
      200,
    );
  });

  it('$setElementOrder/containers: the patch item is merged by name and the listed order kept', async () => {
    const name = uniqueName('order-pod');
    await createPod(name, {
      containers: [
        { name: 'a', image: 'example/a:1' },
        { name: 'b', image: 'example/b:1' },
        { name: 'c', image: 'example/c:1' },
      ],
    });
    const patched = expectCode(
      await smp('pods', name, {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
          containers: [{ name: 'b', image: 'example/b:2' }],
        },
      }),
      200,
    );
    expect((patched.spec.containers as Json[]).map((c) => `${c.name as string}=${c.image as string}`)).toEqual([
      'a=example/a:1',
      'b=example/b:2',
      'c=example/c:1',
    ]);

    // A patch list whose order disagrees with $setElementOrder is refused.
    const before = await raw('pods', name);
    expectFailure(
      await smp('pods', name, {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
          containers: [
            { name: 'c', image: 'example/c:2' },
            { name: 'a', image: 'example/a:2' },
          ],
        },
      }),
      { code: 400, reason: 'BadRequest', message: /doesn't match \$setElementOrder list/ },
    );
    expect(await raw('pods', name)).toEqual(before);
  });

  it('$setElementOrder/ports reorders a merge list', async () => {
    const name = uniqueName('order-svc');
    await createService(name, {
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 81 },
        { name: 'c', port: 82 },
      ],
    });
    const patched = expectCode(
      await smp('services', name, { spec: { '$setElementOrder/ports': [{ port: 82 }, { port: 80 }, { port: 81 }] } }),
      200,
    );
    expect(names(patched.spec.ports, 'port')).toEqual([82, 80, 81]);
    expect(names((await stored('services', name)).spec.ports, 'port')).toEqual([82, 80, 81]);
  });

  it('$retainKeys on pod volumes (patchStrategy merge,retainKeys): accepted when it lists the kept keys, refused when the patch sets an unlisted key', async () => {
    const name = uniqueName('retain-pod');
    // No service-account token volume: the list holds only the volume under test.
    await createPod(name, {
      automountServiceAccountToken: false,
      containers: [{ name: 'a', image: 'example/a:1' }],
      volumes: [{ name: 'data', emptyDir: {} }],
    });
    const ok = expectCode(
      await smp('pods', name, {
        spec: { volumes: [{ name: 'data', emptyDir: {}, $retainKeys: ['emptyDir', 'name'] }] },
      }),
      200,
    );
    expect(ok.spec.volumes).toEqual([{ name: 'data', emptyDir: {} }]);

    const before = await raw('pods', name);
    expectFailure(
      await smp('pods', name, {
        spec: { volumes: [{ name: 'data', hostPath: { path: '/tmp' }, $retainKeys: ['name'] }] },
      }),
      { code: 400, reason: 'BadRequest', message: /retainKeys/ },
    );
    expect(await raw('pods', name)).toEqual(before);
  });

  it('$retainKeys drops the keys of a map that it does not list', async () => {
    const name = uniqueName('retain-map');
    await createCm(name, { data: { a: '1', b: '2', c: '3' } });
    const patched = expectCode(await smp('configmaps', name, { data: { $retainKeys: ['a', 'd'], d: '4' } }), 200);
    expect(patched.data).toEqual({ a: '1', d: '4' });
    expect((await stored('configmaps', name)).data).toEqual({ a: '1', d: '4' });
  });
});

interface BadPatch {
  name: string;
  contentType: string;
  body: string;
  code: number;
  reason: string;
  message?: RegExp;
}

describe('malformed patches: the right 4xx Status, the stored bytes unchanged', () => {
  const FIXTURE = 'fixture';
  const fixtureBody = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: FIXTURE,
      labels: { app: 'fixture' },
      finalizers: ['example.com/keep'],
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6a1f7c2e-0000-4000-8000-000000000001' },
      ],
    },
    data: { a: '1' },
  };
  let fixture: StoredObject | undefined;

  beforeAll(async () => {
    await createCm(FIXTURE, { metadata: fixtureBody.metadata, data: fixtureBody.data });
    fixture = await raw('configmaps', FIXTURE);
  });

  const cases: BadPatch[] = [
    {
      name: 'JSON patch: bad JSON',
      contentType: JSON_PATCH,
      body: '[{"op":"add","path":"/data/b","value":"2"}',
      code: 400,
      reason: 'BadRequest',
    },
    {
      name: 'JSON patch: not an array',
      contentType: JSON_PATCH,
      body: '{"op":"add","path":"/data/b","value":"2"}',
      code: 400,
      reason: 'BadRequest',
    },
    // Kubernetes decodes any op name and fails when applying it: 422 Invalid ("Unexpected kind: frobnicate").
    {
      name: 'JSON patch: unknown op',
      contentType: JSON_PATCH,
      body: '[{"op":"frobnicate","path":"/data/a","value":"2"}]',
      code: 422,
      reason: 'Invalid',
      message: /frobnicate/,
    },
    {
      name: 'JSON patch: path that does not exist',
      contentType: JSON_PATCH,
      body: '[{"op":"replace","path":"/data/nope/deeper","value":"2"}]',
      code: 422,
      reason: 'Invalid',
    },
    { name: 'merge patch: bad JSON', contentType: MERGE, body: '{"data":{"a":"2"}', code: 400, reason: 'BadRequest' },
    {
      name: 'merge patch: not an object',
      contentType: MERGE,
      body: '"just a string"',
      code: 400,
      reason: 'BadRequest',
    },
    { name: 'strategic merge patch: bad JSON', contentType: SMP, body: '{"data":', code: 400, reason: 'BadRequest' },
    {
      name: 'strategic merge patch: not an object',
      contentType: SMP,
      body: '[{"data":{"a":"2"}}]',
      code: 400,
      reason: 'BadRequest',
    },
    {
      name: 'strategic merge patch: unknown $patch value in a map',
      contentType: SMP,
      body: '{"data":{"$patch":"explode","a":"2"}}',
      code: 400,
      reason: 'BadRequest',
      message: /unknown patch type: explode/,
    },
    {
      name: 'strategic merge patch: unknown $patch value in a list',
      contentType: SMP,
      body: '{"metadata":{"ownerReferences":[{"$patch":"explode","uid":"u"}]}}',
      code: 400,
      reason: 'BadRequest',
      message: /unknown patch type: explode/,
    },
    {
      name: 'strategic merge patch: $deleteFromPrimitiveList with a non-list',
      contentType: SMP,
      body: '{"metadata":{"$deleteFromPrimitiveList/finalizers":"example.com/keep"}}',
      code: 400,
      reason: 'BadRequest',
      message: /primitive list/,
    },
    {
      name: 'strategic merge patch: $setElementOrder with a non-list',
      contentType: SMP,
      body: '{"metadata":{"$setElementOrder/finalizers":"x"}}',
      code: 400,
      reason: 'BadRequest',
      message: /setElementOrder/,
    },
    {
      name: 'strategic merge patch: $patch: delete in a list without the merge key',
      contentType: SMP,
      body: '{"metadata":{"ownerReferences":[{"$patch":"delete","name":"n"}]}}',
      code: 400,
      reason: 'BadRequest',
      message: /does not contain declared merge key: uid/,
    },
    {
      name: 'apply: bad YAML',
      contentType: `${APPLY}`,
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [fixture\n',
      code: 400,
      reason: 'BadRequest',
    },
    {
      name: 'unsupported patch media type',
      contentType: 'application/xml',
      body: '<data/>',
      code: 415,
      reason: 'UnsupportedMediaType',
    },
  ];

  it.each(cases)('$name → $code $reason', async (c) => {
    const url = `${path('configmaps', FIXTURE)}${c.contentType === APPLY ? '?fieldManager=m' : ''}`;
    const res = await t.client.patch(url, c.body, c.contentType);
    expectFailure(res, { code: c.code, reason: c.reason, message: c.message });
    expect(await raw('configmaps', FIXTURE)).toEqual(fixture);
    expect(expectCode(await t.client.get(path('configmaps', FIXTURE)), 200).metadata.resourceVersion).toBe(
      fixture?.modRevision,
    );
  });

  afterAll(async () => {
    await smp('configmaps', FIXTURE, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/keep'] } });
  });
});
