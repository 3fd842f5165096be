// CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity in Protobuf: Kubernetes' field
// numbers (storage/v1 generated.proto) checked on the bytes, and every field through a round trip.
import { builtinCatalog, group, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject, encodeMessage, encodeProtobufObject } from '@svc/machinery';

const catalog = builtinCatalog();
const schemaOf = (plural: string): ObjectSchema =>
  catalog.lookup(group('storage'), 'v1', plural)?.schema as ObjectSchema;
const apiVersion = `${group('storage')}/v1`;

function roundTrip(obj: Record<string, unknown>, plural: string): Record<string, unknown> {
  const schema = schemaOf(plural);
  const bytes = encodeProtobufObject(obj, schema, { apiVersion, kind: String(obj.kind) });
  return decodeProtobufObject(bytes, schema);
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const text = (s: string): string => Buffer.from(s).toString('hex');

describe('Protobuf of the CSI storage types', () => {
  it("puts CSIDriver and CSINode fields at Kubernetes' numbers", () => {
    const d = encodeMessage(
      { spec: { attachRequired: true, fsGroupPolicy: 'File', seLinuxMount: false } },
      schemaOf('csidrivers'),
    );
    // spec 2 { attachRequired 1, fsGroupPolicy 5, seLinuxMount 8 }.
    expect(hex(d)).toBe(`120a` + `0801` + `2a04${text('File')}` + `4000`);
    const n = encodeMessage(
      { spec: { drivers: [{ name: 'd', nodeID: 'i', allocatable: { count: 3 } }] } },
      schemaOf('csinodes'),
    );
    // spec 2 { drivers 1 { name 1, nodeID 2, allocatable 4 { count 1 } } }.
    expect(hex(n)).toBe(`120c` + `0a0a` + `0a01${text('d')}` + `1201${text('i')}` + `22020803`);
  });

  it("puts VolumeAttachment and CSIStorageCapacity fields at Kubernetes' numbers", () => {
    const va = encodeMessage(
      { spec: { attacher: 'a', source: { persistentVolumeName: 'p' }, nodeName: 'n' }, status: { attached: true } },
      schemaOf('volumeattachments'),
    );
    // spec 2 { attacher 1, source 2 { persistentVolumeName 1 }, nodeName 3 }, status 3 { attached 1 }.
    expect(hex(va)).toBe(`120b` + `0a01${text('a')}` + `1203` + `0a01${text('p')}` + `1a01${text('n')}` + `1a020801`);
    const c = encodeMessage({ storageClassName: 'fast', capacity: '1Gi' }, schemaOf('csistoragecapacities'));
    // storageClassName 3, capacity 4 (a Quantity: its string at 1).
    expect(hex(c)).toBe(`1a04${text('fast')}` + `2205` + `0a03${text('1Gi')}`);
  });

  it('round-trips every field', () => {
    const driver = {
      apiVersion,
      kind: 'CSIDriver',
      metadata: { name: 'disk.example.com' },
      spec: {
        attachRequired: false,
        podInfoOnMount: true,
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
        storageCapacity: true,
        fsGroupPolicy: 'None',
        tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }],
        requiresRepublish: true,
        seLinuxMount: true,
      },
    };
    expect(roundTrip(driver, 'csidrivers')).toEqual(driver);
    const node = {
      apiVersion,
      kind: 'CSINode',
      metadata: { name: 'node-a' },
      spec: { drivers: [{ name: 'd', nodeID: 'i', topologyKeys: ['zone'], allocatable: { count: 8 } }] },
    };
    expect(roundTrip(node, 'csinodes')).toEqual(node);
    const attachment = {
      apiVersion,
      kind: 'VolumeAttachment',
      metadata: { name: 'va' },
      spec: {
        attacher: 'disk.example.com',
        source: {
          inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'disk.example.com', volumeHandle: 'v' } },
        },
        nodeName: 'node-a',
      },
      status: {
        attached: false,
        attachmentMetadata: { devicePath: '/dev/xvdf' },
        attachError: { time: '2026-11-28T08:00:00Z', message: 'boom' },
        detachError: { message: 'busy' },
      },
    };
    expect(roundTrip(attachment, 'volumeattachments')).toEqual(attachment);
    const capacity = {
      apiVersion,
      kind: 'CSIStorageCapacity',
      metadata: { name: 'c', namespace: 'ns' },
      nodeTopology: { matchLabels: { zone: 'a' } },
      storageClassName: 'fast',
      capacity: '100Gi',
      maximumVolumeSize: '10Gi',
    };
    expect(roundTrip(capacity, 'csistoragecapacities')).toEqual(capacity);
  });
});
