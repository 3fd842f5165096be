import { lstat, mkdtemp, readFile, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invalidPayloadPath, writeAtomic, type Payload } from './atomic-writer.js';
import { refreshAt } from './service-account-tokens.js';

const file = (text: string, mode = 0o644): { data: Buffer; mode: number } => ({ data: Buffer.from(text), mode });

describe('the atomic writer', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'atomic-writer-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes through ..data, skips an unchanged payload, swaps a changed one and drops paths no longer given', async () => {
    const first: Payload = new Map([
      ['a', file('1')],
      ['sub/b', file('2', 0o600)],
    ]);
    expect(await writeAtomic(dir, first)).toBe(true);
    const data = await readlink(join(dir, '..data'));
    expect(await readlink(join(dir, 'a'))).toBe('..data/a');
    expect(await readlink(join(dir, 'sub'))).toBe('..data/sub');
    expect(await readFile(join(dir, 'sub/b'), 'utf8')).toBe('2');
    expect((await stat(join(dir, 'sub/b'))).mode & 0o777).toBe(0o600);
    expect(await writeAtomic(dir, first)).toBe(false);
    expect(await readlink(join(dir, '..data'))).toBe(data);

    expect(await writeAtomic(dir, new Map([['a', file('changed')]]))).toBe(true);
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('changed');
    expect((await readdir(dir)).sort()).toEqual(['..data', await readlink(join(dir, '..data')), 'a'].sort());
  });

  it("with the pod's fsGroup: every entry is the group's, files group-readable, directories set-group-ID; an unchanged payload is not written again", async () => {
    const fsGroup = 3456;
    const payload: Payload = new Map([
      ['key', file('secret', 0o400)],
      ['conf/app.conf', file('a=1', 0o644)],
    ]);
    expect(await writeAtomic(dir, payload, { fsGroup })).toBe(true);
    const data = await readlink(join(dir, '..data'));
    const modeOf = async (p: string): Promise<string> => {
      const st = await stat(join(dir, p));
      return `${(st.mode & 0o7777).toString(8)} ${st.gid}`;
    };
    // kubelet's read-only mask: r for the group; directories also x and set-group-ID.
    expect(await modeOf('key')).toBe('440 3456');
    expect(await modeOf('conf/app.conf')).toBe('644 3456');
    expect(await modeOf(join(data, 'conf'))).toBe('2755 3456');
    expect(await modeOf('.')).toMatch(/^2\d\d\d 3456$/);
    for (const link of ['..data', 'key', 'conf']) expect((await lstat(join(dir, link))).gid).toBe(fsGroup);
    expect(await writeAtomic(dir, payload, { fsGroup })).toBe(false);
    expect(await readlink(join(dir, '..data'))).toBe(data);
  });

  it('refuses paths that are absolute, contain .. or start with ..', async () => {
    expect(invalidPayloadPath('/etc/x')).toBe('invalid path: must be relative path: /etc/x');
    expect(invalidPayloadPath('a/../b')).toBe("invalid path: must not contain '..': a/../b");
    expect(invalidPayloadPath('..data')).toBe("invalid path: must not start with '..': ..data");
    await expect(writeAtomic(dir, new Map([['../x', file('no')]]))).rejects.toThrow("must not contain '..'");
  });
});

describe('service-account token renewal', () => {
  it('renews at 80% of the lifetime, and after 24 h at the latest', () => {
    expect(refreshAt({ issuedAtMs: 0, expiresAtMs: 600_000 })).toBe(480_000);
    const day = 24 * 3600 * 1000;
    expect(refreshAt({ issuedAtMs: 0, expiresAtMs: 2 * day })).toBe(day);
  });
});
