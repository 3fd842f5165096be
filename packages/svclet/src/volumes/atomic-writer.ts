import { randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  mkdir,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ownedMode, setVolumeOwnership } from './volume-ownership.js';

/** One file of a volume: its bytes and permission bits, and the user it is given to (kubelet's FsUser), if any. */
export interface PayloadFile {
  data: Buffer;
  mode: number;
  owner?: number;
}

/** Relative path → file. */
export type Payload = Map<string, PayloadFile>;

const DATA_LINK = '..data';
const DATA_TMP_LINK = '..data_tmp';

/** The payload path error, or undefined: relative, no `..` element, not starting with `..`. */
export function invalidPayloadPath(p: string): string | undefined {
  if (p === '') return 'invalid path: must not be empty';
  if (p.startsWith('/')) return `invalid path: must be relative path: ${p}`;
  if (p.split('/').includes('..')) return `invalid path: must not contain '..': ${p}`;
  if (p.startsWith('..')) return `invalid path: must not start with '..': ${p}`;
  return undefined;
}

/** `..2026_11_27_16_05_09.<random>`: the UTC time of the write, as Kubernetes names its data directories. */
function timestampedDir(): string {
  const d = new Date();
  const pad = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${d.getUTCFullYear()}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(d.getUTCMinutes())}_${pad(d.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(5).toString('hex')}`;
}

async function sameAsWritten(dir: string, payload: Payload, fsGroup: number | undefined): Promise<boolean> {
  for (const [path, f] of payload) {
    try {
      const full = join(dir, path);
      const [data, st] = await Promise.all([readFile(full), stat(full)]);
      const mode = fsGroup === undefined ? f.mode : ownedMode(f.mode, { dir: false, readOnly: true });
      if (!data.equals(f.data) || (st.mode & 0o7777) !== mode) return false;
      if (fsGroup !== undefined && st.gid !== fsGroup) return false;
      if (f.owner !== undefined && st.uid !== f.owner) return false;
    } catch {
      return false;
    }
  }
  const count = async (d: string): Promise<number> => {
    let n = 0;
    for (const e of await readdir(d, { withFileTypes: true })) n += e.isDirectory() ? await count(join(d, e.name)) : 1;
    return n;
  };
  return (await count(dir)) === payload.size;
}

/**
 * Kubernetes' atomic writer: the payload goes to a new timestamped directory, the `..data`
 * symlink is swapped to it with one rename (a reader sees the old set or the new one, never a
 * mix), each top-level path is a symlink through `..data`, and the old directory and paths no
 * longer in the payload are removed. Writes nothing when the files are already as given.
 * With `fsGroup` (the pod's), what it writes is owned by that group as kubelet's volume
 * ownership leaves a read-only volume. Answers whether it wrote.
 */
export async function writeAtomic(dir: string, payload: Payload, opts: { fsGroup?: number } = {}): Promise<boolean> {
  const { fsGroup } = opts;
  for (const p of payload.keys()) {
    const bad = invalidPayloadPath(p);
    if (bad) throw new Error(bad);
  }
  await mkdir(dir, { recursive: true });
  const old = await readlink(join(dir, DATA_LINK)).catch(() => undefined);
  const unchanged = old !== undefined && (await sameAsWritten(join(dir, old), payload, fsGroup));
  const fresh = unchanged ? undefined : timestampedDir();
  if (fresh !== undefined) {
    const target = join(dir, fresh);
    await mkdir(target, { mode: 0o755 });
    try {
      for (const [path, f] of payload) {
        const full = join(target, path);
        await mkdir(dirname(full), { recursive: true, mode: 0o755 });
        await writeFile(full, f.data, { mode: f.mode });
        if (f.owner !== undefined) await chown(full, f.owner, -1);
        await chmod(full, f.mode);
      }
      // Owned before the swap, so a reader never sees the new files without the group's access.
      if (fsGroup !== undefined) await setVolumeOwnership(target, { fsGroup, readOnly: true });
    } catch (e) {
      // A directory that was never swapped in goes (the cleanup below only removes old ones).
      await rm(target, { recursive: true, force: true });
      throw e;
    }
    await rm(join(dir, DATA_TMP_LINK), { force: true });
    await symlink(fresh, join(dir, DATA_TMP_LINK));
    await rename(join(dir, DATA_TMP_LINK), join(dir, DATA_LINK));
  }
  const tops = new Set([...payload.keys()].map((p) => p.split('/')[0] ?? p));
  for (const top of tops) {
    const link = join(dir, top);
    const current = await readlink(link).catch(() => undefined);
    if (current !== join(DATA_LINK, top)) {
      await rm(link, { recursive: true, force: true });
      await symlink(join(DATA_LINK, top), link);
    }
  }
  for (const name of await readdir(dir)) {
    if (name.startsWith('..') || tops.has(name)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
  }
  if (!unchanged && old !== undefined && old.startsWith('..') && old !== DATA_LINK)
    await rm(join(dir, old), { recursive: true, force: true });
  // Then the volume's directory and its links (the new data directory already is).
  if (!unchanged && fsGroup !== undefined) await setVolumeOwnership(dir, { fsGroup, readOnly: true, skip: fresh });
  return !unchanged;
}
