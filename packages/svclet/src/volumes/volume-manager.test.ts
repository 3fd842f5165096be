import { owning } from './volume-manager.js';
import { MountError } from './volume-sources.js';

const denied = (code: string): Error => Object.assign(new Error(`${code}: operation not permitted, lchown`), { code });

describe("giving a volume to the pod's user and group", () => {
  it('answers what the step answers', async () => {
    await expect(owning({ fsGroup: 3456 }, async () => 'written')).resolves.toBe('written');
  });

  it('says which user and group the node agent could not give the volume to', async () => {
    const fail = (to: { fsUser?: number; fsGroup?: number }) =>
      owning(to, () => Promise.reject(denied('EPERM'))).catch((e: unknown) => e);
    const both = await fail({ fsUser: 1234, fsGroup: 3456 });
    expect(both).toBeInstanceOf(MountError);
    expect((both as Error).message).toBe(
      'cannot give the volume to user 1234 and fsGroup 3456: EPERM: operation not permitted, lchown',
    );
    expect(((await fail({ fsGroup: 3456 })) as Error).message).toBe(
      'cannot give the volume to fsGroup 3456: EPERM: operation not permitted, lchown',
    );
    expect(((await fail({ fsUser: 1234 })) as Error).message).toMatch(/^cannot give the volume to user 1234: /);
  });

  it('passes other failures, and any failure of a volume given to nobody, on as they are', async () => {
    const other = denied('ENOSPC');
    await expect(owning({ fsGroup: 3456 }, () => Promise.reject(other))).rejects.toBe(other);
    const unowned = denied('EPERM');
    await expect(owning({}, () => Promise.reject(unowned))).rejects.toBe(unowned);
  });
});
