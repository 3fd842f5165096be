// storage/v1 CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity (issue 19) on a real API
// server and etcd under --naming=kubernetes, with stock kubectl: create and get, the columns kubectl
// prints, the v1 defaults (CSIDriver), Kubernetes' 422 messages for bad inputs and for changes to
// immutable fields, VolumeAttachment's status subresource, and the Protobuf answers decoding to the
// JSON ones.
import type { CSIDriver, CSINode, CSIStorageCapacity, ObjectSchema, VolumeAttachment } from '@svc/api';
import { builtinCatalog, group } from '@svc/api';
import { decodeProtobufObject } from '@svc/machinery';
import { createNamespace, expectCode, expectFailure, startKubectlEnv, type KubectlEnv } from '@svc/testing';

const GROUP = 'storage.k8s.io';
const API_VERSION = `${GROUP}/v1`;
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
}, 60_000);
afterAll(() => env?.stop());

/** Rows of a kubectl table: the header, then one array of cells per line. */
function table(stdout: string): string[][] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}

const create = async (obj: object, ns?: string): Promise<string> =>
  (await env.ok(['create', '-f', await env.manifest(obj), ...(ns ? ['-n', ns] : [])])).stdout.trim();

/** A create kubectl must refuse: its stderr. */
async function refused(obj: object, ns?: string): Promise<string> {
  const r = await env.run(['create', '-f', await env.manifest(obj), ...(ns ? ['-n', ns] : [])]);
  expect(r.code).toBe(1);
  return r.stderr;
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await env.ok(['get', ...args, '-o', 'json'])).stdout) as T;
}

/** A merge patch kubectl must refuse: its stderr. */
async function patchRefused(args: string[], patch: object): Promise<string> {
  const r = await env.run(['patch', ...args, '--type=merge', '-p', JSON.stringify(patch)]);
  expect(r.code).toBe(1);
  return r.stderr;
}

/** The object at `path` in Protobuf decodes to the JSON answer. */
async function expectProtobufLikeJson(path: string, plural: string): Promise<void> {
  const json = expectCode(await env.server.client.get(path), 200) as Record<string, unknown>;
  const proto = await env.server.client.get(path, { headers: { Accept: PROTOBUF } });
  expect(proto.status).toBe(200);
  expect(String(proto.headers['content-type'])).toContain(PROTOBUF);
  const schema = builtinCatalog().lookup(group('storage'), 'v1', plural)?.schema as ObjectSchema;
  expect(decodeProtobufObject(proto.body, schema)).toEqual(json);
}

const driver = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: 'CSIDriver',
  metadata: { name },
  spec,
});

it('CSIDriver: v1 defaults, kubectl columns, 422s for bad fields and for attachRequired and the modes, generations', async () => {
  expect(await create(driver('disk.example.com', {}))).toBe(`csidriver.${GROUP}/disk.example.com created`);
  const defaulted = await getJson<CSIDriver>(['csidriver', 'disk.example.com']);
  expect(defaulted.spec).toEqual({
    attachRequired: true,
    podInfoOnMount: false,
    volumeLifecycleModes: ['Persistent'],
    storageCapacity: false,
    fsGroupPolicy: 'ReadWriteOnceWithFSType',
    requiresRepublish: false,
    seLinuxMount: false,
  });
  expect(defaulted.metadata.generation).toBe(1);
  await create(
    driver('secrets.example.com', {
      attachRequired: false,
      podInfoOnMount: true,
      volumeLifecycleModes: ['Ephemeral', 'Persistent'],
      tokenRequests: [{ audience: 'vault' }, { audience: 'aws', expirationSeconds: 3600 }],
      requiresRepublish: true,
    }),
  );
  const rows = table((await env.ok(['get', 'csidrivers'])).stdout);
  expect(rows[0]).toEqual([
    'NAME',
    'ATTACHREQUIRED',
    'PODINFOONMOUNT',
    'STORAGECAPACITY',
    'TOKENREQUESTS',
    'REQUIRESREPUBLISH',
    'MODES',
    'AGE',
  ]);
  expect(rows.slice(1).map((r) => r.slice(0, 7))).toEqual([
    ['disk.example.com', 'true', 'false', 'false', '<unset>', 'false', 'Persistent'],
    ['secrets.example.com', 'false', 'true', 'false', 'vault,aws', 'true', 'Ephemeral,Persistent'],
  ]);

  const bad = await refused(
    driver('bad.example.com', {
      fsGroupPolicy: 'Sometimes',
      volumeLifecycleModes: ['Forever'],
      tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }],
    }),
  );
  for (const m of [
    'The CSIDriver "bad.example.com" is invalid',
    'spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    'spec.tokenRequests[1].audience: Duplicate value: "a"',
    'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
  ])
    expect(bad).toContain(m);

  const attach = await patchRefused(['csidriver', 'disk.example.com'], { spec: { attachRequired: false } });
  expect(attach).toContain('spec.attachedRequired: Invalid value: false: field is immutable');
  const modes = await patchRefused(['csidriver', 'disk.example.com'], {
    spec: { volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
  });
  expect(modes).toContain(
    'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: field is immutable',
  );
  // podInfoOnMount, fsGroupPolicy and storageCapacity are mutable since Kubernetes 1.29 / 1.23.
  await env.ok([
    'patch',
    'csidriver',
    'disk.example.com',
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { podInfoOnMount: true, fsGroupPolicy: 'File', storageCapacity: true } }),
  ]);
  const changed = await getJson<CSIDriver>(['csidriver', 'disk.example.com']);
  expect(changed.spec).toMatchObject({ podInfoOnMount: true, fsGroupPolicy: 'File', storageCapacity: true });
  expect(changed.metadata.generation).toBe(2);

  await expectProtobufLikeJson(`/apis/${GROUP}/v1/csidrivers/secrets.example.com`, 'csidrivers');
  // The schema is published: kubectl explain reads it from the OpenAPI document.
  const explained = (await env.ok(['explain', 'csidriver.spec'])).stdout;
  for (const field of ['attachRequired', 'fsGroupPolicy', 'tokenRequests', 'volumeLifecycleModes'])
    expect(explained).toContain(field);
});

const csiNode = (name: string, drivers: unknown[]) => ({
  apiVersion: API_VERSION,
  kind: 'CSINode',
  metadata: { name },
  spec: { drivers },
});

it('CSINode: kubectl columns, 422s for bad drivers, a listed driver immutable, drivers added', async () => {
  await create(
    csiNode('node-a', [
      {
        name: 'disk.example.com',
        nodeID: 'i-0abc',
        topologyKeys: ['topology.example.com/zone'],
        allocatable: { count: 16 },
      },
    ]),
  );
  await env.ok([
    'patch',
    'csinode',
    'node-a',
    '--type=strategic',
    '-p',
    JSON.stringify({ spec: { drivers: [{ name: 'secrets.example.com', nodeID: 'node-a' }] } }),
  ]);
  const node = await getJson<CSINode>(['csinode', 'node-a']);
  expect(node.spec?.drivers?.map((d) => d.name).sort()).toEqual(['disk.example.com', 'secrets.example.com']);
  const rows = table((await env.ok(['get', 'csinodes'])).stdout);
  expect(rows[0]).toEqual(['NAME', 'DRIVERS', 'AGE']);
  expect(rows[1]?.slice(0, 2)).toEqual(['node-a', '2']);

  const bad = await refused(
    csiNode('node-b', [
      { name: 'disk.example.com', nodeID: '', allocatable: { count: -1 } },
      { name: 'disk.example.com', nodeID: 'x'.repeat(193), topologyKeys: ['zone', 'zone'] },
    ]),
  );
  for (const m of [
    'The CSINode "node-b" is invalid',
    'spec.drivers[0].nodeID: Required value',
    'spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0',
    'spec.drivers[1].nodeID: Invalid value: "' + 'x'.repeat(193) + '": must be 192 characters or less',
    'spec.drivers[1].name: Duplicate value: "disk.example.com"',
    'spec.drivers[1]: Duplicate value: "zone"',
  ])
    expect(bad).toContain(m);

  const changed = await patchRefused(['csinode', 'node-a'], {
    spec: {
      drivers: [
        { name: 'disk.example.com', nodeID: 'i-0def' },
        { name: 'secrets.example.com', nodeID: 'node-a' },
      ],
    },
  });
  expect(changed).toContain('The CSINode "node-a" is invalid: CSINodeDriver: Invalid value:');
  expect(changed).toContain('field is immutable');

  await expectProtobufLikeJson(`/apis/${GROUP}/v1/csinodes/node-a`, 'csinodes');
});

const attachment = (name: string, source: object, nodeName = 'node-a') => ({
  apiVersion: API_VERSION,
  kind: 'VolumeAttachment',
  metadata: { name },
  spec: { attacher: 'disk.example.com', source, nodeName },
});

it('VolumeAttachment: status cleared on create and written through status, kubectl columns, 422s, the spec immutable', async () => {
  const withStatus = { ...attachment('va-1', { persistentVolumeName: 'pv-1' }), status: { attached: true } };
  await create(withStatus);
  const fresh = await getJson<VolumeAttachment>(['volumeattachment', 'va-1']);
  expect(fresh.status).toEqual({ attached: false });
  await create(
    attachment('va-inline', {
      inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'disk.example.com', volumeHandle: 'vol-9' } },
    }),
  );

  await env.ok([
    'patch',
    'volumeattachment',
    'va-1',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } } }),
  ]);
  // A write of the main resource keeps the status.
  await env.ok(['label', 'volumeattachment', 'va-1', 'tier=gold']);
  const attached = await getJson<VolumeAttachment>(['volumeattachment', 'va-1']);
  expect(attached.status).toEqual({ attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } });
  expect(attached.metadata.labels).toEqual({ tier: 'gold' });

  const rows = table((await env.ok(['get', 'volumeattachments'])).stdout);
  expect(rows[0]).toEqual(['NAME', 'ATTACHER', 'PV', 'NODE', 'ATTACHED', 'AGE']);
  expect(rows[1]?.slice(0, 5)).toEqual(['va-1', 'disk.example.com', 'pv-1', 'node-a', 'true']);
  // An inline volume has no PV name: the cell is empty (the row has one cell fewer once split).
  expect(rows[2]?.slice(0, 4)).toEqual(['va-inline', 'disk.example.com', 'node-a', 'false']);

  const both = await refused(
    attachment('va-both', { persistentVolumeName: 'pv-1', inlineVolumeSpec: { accessModes: ['ReadWriteOnce'] } }),
  );
  expect(both).toContain(
    'spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
  );
  const bad = await refused({
    ...attachment('va-bad', {}, 'Node_A'),
    spec: { attacher: 'Not A Driver!', source: {}, nodeName: 'Node_A' },
  });
  for (const m of [
    'The VolumeAttachment "va-bad" is invalid',
    'spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
    'spec.nodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain must consist of',
    'spec.attacher: Invalid value: "Not A Driver!": a lowercase RFC 1123 subdomain must consist of',
  ])
    expect(bad).toContain(m);
  const inline = await refused(
    attachment('va-nfs', {
      inlineVolumeSpec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        nfs: { server: 'nfs.example.com', path: '/exports' },
      },
    }),
  );
  for (const m of [
    'spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes',
    'spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes',
  ])
    expect(inline).toContain(m);

  const moved = await patchRefused(['volumeattachment', 'va-1'], { spec: { nodeName: 'node-b' } });
  expect(moved).toContain('The VolumeAttachment "va-1" is invalid: spec: Invalid value:');
  expect(moved).toContain('field is immutable');

  // A status write keeps the stored spec; the status itself is validated (Kubernetes names the
  // 256 KiB metadata limit in the message for an error message over 1024 bytes).
  const statusPath = `/apis/${GROUP}/v1/volumeattachments/va-1/status`;
  const current = expectCode(await env.server.client.get(statusPath), 200) as unknown as VolumeAttachment;
  const detached = {
    ...current,
    spec: { ...current.spec, nodeName: 'node-b' },
    status: { attached: false, detachError: { message: 'device busy' } },
  };
  const written = expectCode(await env.server.client.put(statusPath, detached), 200) as unknown as VolumeAttachment;
  expect(written.spec?.nodeName).toBe('node-a');
  expect(written.status).toEqual({ attached: false, detachError: { message: 'device busy' } });
  const tooLong = { ...written, status: { attached: false, attachError: { message: 'x'.repeat(1025) } } };
  expectFailure(await env.server.client.put(statusPath, tooLong), {
    code: 422,
    reason: 'Invalid',
    message:
      'VolumeAttachment.storage.k8s.io "va-1" is invalid: status.attachError.message: Too long: may not be more than 262144 bytes',
  });

  await expectProtobufLikeJson(`/apis/${GROUP}/v1/volumeattachments/va-1`, 'volumeattachments');
});

const capacity = (name: string, fields: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: 'CSIStorageCapacity',
  metadata: { name },
  ...fields,
});

it('CSIStorageCapacity: namespaced, kubectl columns, 422s for bad fields and for the class and topology', async () => {
  const ns = await createNamespace(env.server.client, 'capacity');
  await create(
    capacity('fast-zone-a', {
      storageClassName: 'fast',
      nodeTopology: { matchLabels: { 'topology.example.com/zone': 'a' } },
      capacity: '100Gi',
      maximumVolumeSize: '10Gi',
    }),
    ns,
  );
  await create(capacity('slow-unknown', { storageClassName: 'slow' }), ns);
  const rows = table((await env.ok(['get', 'csistoragecapacities', '-n', ns])).stdout);
  expect(rows).toEqual([
    ['NAME', 'STORAGECLASSNAME', 'CAPACITY'],
    ['fast-zone-a', 'fast', '100Gi'],
    ['slow-unknown', 'slow', '<unset>'],
  ]);

  const bad = await refused(
    capacity('bad', {
      storageClassName: 'Fast_Class',
      capacity: '-1Gi',
      nodeTopology: { matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] },
    }),
    ns,
  );
  for (const m of [
    'The CSIStorageCapacity "bad" is invalid',
    'storageClassName: Invalid value: "Fast_Class": a lowercase RFC 1123 subdomain must consist of',
    'capacity: Invalid value: "-1Gi": must be greater than or equal to 0',
    "nodeTopology.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
  ])
    expect(bad).toContain(m);

  const renamed = await patchRefused(['csistoragecapacity', 'fast-zone-a', '-n', ns], { storageClassName: 'faster' });
  expect(renamed).toContain('storageClassName: Invalid value: "faster": field is immutable');
  const moved = await patchRefused(['csistoragecapacity', 'fast-zone-a', '-n', ns], {
    nodeTopology: { matchLabels: { 'topology.example.com/zone': 'b' } },
  });
  expect(moved).toContain(
    'nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"topology.example.com/zone":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  );
  // The capacity itself is what a driver updates.
  await env.ok([
    'patch',
    'csistoragecapacity',
    'fast-zone-a',
    '-n',
    ns,
    '--type=merge',
    '-p',
    JSON.stringify({ capacity: '80Gi' }),
  ]);
  const updated = await getJson<CSIStorageCapacity>(['csistoragecapacity', 'fast-zone-a', '-n', ns]);
  expect(updated.capacity).toBe('80Gi');

  await expectProtobufLikeJson(
    `/apis/${GROUP}/v1/namespaces/${ns}/csistoragecapacities/fast-zone-a`,
    'csistoragecapacities',
  );

  // The removed storage/v1beta1 (the spec's removed-versions table: CSIStorageCapacity in 1.27,
  // the others in 1.22) is not served.
  for (const plural of ['csistoragecapacities', 'csidrivers', 'csinodes', 'volumeattachments'])
    expect((await env.server.client.get(`/apis/${GROUP}/v1beta1/${plural}`)).status).toBe(404);
  // Discovery as Kubernetes 1.32: no short names, only CSIStorageCapacity namespaced.
  const resources = (await env.ok(['api-resources', `--api-group=${GROUP}`, '--no-headers'])).stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  expect(resources).toEqual([
    ['csidrivers', API_VERSION, 'false', 'CSIDriver'],
    ['csinodes', API_VERSION, 'false', 'CSINode'],
    ['csistoragecapacities', API_VERSION, 'true', 'CSIStorageCapacity'],
    ['storageclasses', 'sc', API_VERSION, 'false', 'StorageClass'],
    ['volumeattachments', API_VERSION, 'false', 'VolumeAttachment'],
  ]);

  const all = (await env.ok(['get', 'csidrivers,csinodes,volumeattachments,csistoragecapacities', '-A'])).stdout;
  // kubectl's own CSINode describer reads the typed object.
  const described = (await env.ok(['describe', 'csinode', 'node-a'])).stdout;
  expect(described).toMatch(/disk\.example\.com:\s+Node ID:\s+i-0abc\s+Allocatables:\s+Count:\s+16/);
  for (const name of [
    `csidriver.${GROUP}/disk.example.com`,
    `csinode.${GROUP}/node-a`,
    `volumeattachment.${GROUP}/va-1`,
    `csistoragecapacity.${GROUP}/fast-zone-a`,
  ])
    expect(all).toContain(name);
});
