// CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity strategies without a server: the
// edges the int test does not reach (Kubernetes 1.32's limits and their messages).
import { fieldErrorMessage, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy, StrategyContext } from '../strategy.js';
import { csiDriverStrategy } from './csi-driver.js';
import { csiNodeStrategy } from './csi-node.js';
import { csiStorageCapacityStrategy } from './csi-storage-capacity.js';
import { volumeAttachmentStrategy } from './volume-attachment.js';

const ctx: StrategyContext = { subresource: '' };
const obj = (o: Record<string, unknown>): ApiObject => ({ metadata: { name: 'x' }, ...o }) as ApiObject;
const messages = (errs: FieldError[] | Promise<FieldError[]> | undefined): Promise<string[]> =>
  Promise.resolve(errs ?? []).then((e) => e.map(fieldErrorMessage));

function created(strategy: Strategy, o: ApiObject): Promise<string[]> {
  strategy.prepareForCreate?.(o, ctx);
  return messages(strategy.validate?.(o, ctx));
}
function updated(strategy: Strategy, next: ApiObject, old: ApiObject): Promise<string[]> {
  strategy.prepareForUpdate?.(next, old, ctx);
  return messages(strategy.validateUpdate?.(next, old, ctx));
}

describe('CSIDriver', () => {
  it('bounds token expirations at 10 minutes and 2^32 seconds; an empty audience counts once', async () => {
    const d = obj({
      spec: {
        tokenRequests: [
          { audience: '', expirationSeconds: 600 },
          { audience: 'big', expirationSeconds: 2 ** 32 + 1 },
          { audience: '' },
        ],
      },
    });
    expect(await created(csiDriverStrategy, d)).toEqual([
      'spec.tokenRequests[1].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds',
      'spec.tokenRequests[2].audience: Duplicate value: ""',
    ]);
  });

  it('keeps explicit values over the defaults and lets the mutable fields change', async () => {
    const old = obj({ spec: { attachRequired: false, volumeLifecycleModes: ['Ephemeral'], seLinuxMount: true } });
    expect(await created(csiDriverStrategy, old)).toEqual([]);
    expect(old.spec).toMatchObject({ attachRequired: false, volumeLifecycleModes: ['Ephemeral'], seLinuxMount: true });
    const next = obj({ spec: { ...(old.spec as object), seLinuxMount: false, requiresRepublish: true } });
    expect(await updated(csiDriverStrategy, next, old)).toEqual([]);
  });
});

describe('CSINode', () => {
  const driver = (nodeID: string) => ({ name: 'disk.example.com', nodeID });

  it('allows a node ID up to 256 characters on update once the stored object has a longer one', async () => {
    const long = 'n'.repeat(200);
    const stored = obj({ spec: { drivers: [driver(long)] } });
    expect(await created(csiNodeStrategy, stored)).toEqual([
      `spec.drivers[0].nodeID: Invalid value: "${long}": must be 192 characters or less`,
    ]);
    const added = obj({ spec: { drivers: [driver(long), { name: 'other.example.com', nodeID: 'm'.repeat(256) }] } });
    expect(await updated(csiNodeStrategy, added, stored)).toEqual([]);
    const tooLong = obj({ spec: { drivers: [driver(long), { name: 'other.example.com', nodeID: 'm'.repeat(257) }] } });
    expect(await updated(csiNodeStrategy, tooLong, stored)).toEqual([
      `spec.drivers[1].nodeID: Invalid value: "${'m'.repeat(257)}": must be 256 characters or less`,
    ]);
  });

  it("checks driver names and topology keys with Kubernetes' messages", async () => {
    const n = obj({
      spec: { drivers: [{ name: 'x'.repeat(64), nodeID: 'i', topologyKeys: ['', 'bad key'] }] },
    });
    const errs = await created(csiNodeStrategy, n);
    expect(errs).toContain('spec.drivers[0].name: Too long: may not be more than 63 bytes');
    expect(errs).toContain('spec.drivers[0]: Required value');
    expect(errs.some((e) => e.startsWith('spec.drivers[0]: Invalid value: "bad key": name part must consist of'))).toBe(
      true,
    );
  });
});

describe('VolumeAttachment', () => {
  const spec = (source: Record<string, unknown>) => ({ attacher: 'disk.example.com', source, nodeName: 'node-a' });

  it('refuses an inline volume with a claimRef, an empty PV name, and oversized status metadata', async () => {
    const inline = obj({
      spec: spec({
        inlineVolumeSpec: {
          accessModes: ['ReadWriteOnce'],
          claimRef: { name: 'c', namespace: 'ns' },
          csi: { driver: 'disk.example.com', volumeHandle: 'v' },
        },
      }),
    });
    expect(await created(volumeAttachmentStrategy, inline)).toEqual([
      'spec.source.inlineVolumeSpec.claimRef: Forbidden: may not be specified in the context of inline volumes',
    ]);
    const empty = obj({ spec: spec({ persistentVolumeName: '' }) });
    const errs = await created(volumeAttachmentStrategy, empty);
    expect(errs[0]).toBe(
      'spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName',
    );
    const stored = obj({ spec: spec({ persistentVolumeName: 'pv' }) });
    expect(await created(volumeAttachmentStrategy, stored)).toEqual([]);
    const big = obj({
      spec: spec({ persistentVolumeName: 'pv' }),
      status: { attached: true, attachmentMetadata: { k: 'v'.repeat(256 * 1024) } },
    });
    expect(await messages(volumeAttachmentStrategy.validateUpdate?.(big, stored, { subresource: 'status' }))).toEqual([
      'status.attachmentMetadata: Too long: may not be more than 262144 bytes',
    ]);
  });
});

describe('CSIStorageCapacity', () => {
  it('accepts a zero capacity and lets capacity and maximumVolumeSize change', async () => {
    const old = obj({ storageClassName: 'fast', capacity: '0' });
    expect(await created(csiStorageCapacityStrategy, old)).toEqual([]);
    const next = obj({ storageClassName: 'fast', capacity: '5Gi', maximumVolumeSize: '1Gi' });
    expect(await updated(csiStorageCapacityStrategy, next, old)).toEqual([]);
    const renamed = obj({ storageClassName: '', capacity: '5Gi' });
    const errs = await updated(csiStorageCapacityStrategy, renamed, old);
    expect(errs[0]).toMatch(/^storageClassName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of/);
    expect(errs[1]).toBe('storageClassName: Invalid value: "": field is immutable');
  });
});
