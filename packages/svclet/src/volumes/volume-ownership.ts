import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Group bits a writable volume's entries get under `fsGroup` (kubelet's rwMask). */
const RW_MASK = 0o660;
/** Group bits a read-only volume's entries get (kubelet's roMask: configMap, secret, projected, downwardAPI). */
const RO_MASK = 0o440;
/** Directories are also searchable by the group and set-group-ID, so new entries inherit the group. */
const DIR_MASK = 0o110 | 0o2000;

/** The permission bits an entry of mode `mode` has once kubelet's volume ownership is applied. */
export function ownedMode(mode: number, opts: { dir: boolean; readOnly: boolean }): number {
  return (mode & 0o7777) | (opts.readOnly ? RO_MASK : RW_MASK) | (opts.dir ? DIR_MASK : 0);
}

/**
 * Kubernetes' SetVolumeOwnership for a pod with `securityContext.fsGroup`: every entry under
 * `dir` (the directory itself included, symbolic links not followed) gets group `fsGroup`, and
 * files and directories the group bits of `ownedMode`, so a container running as another user
 * with `fsGroup` among its groups can read (and, for a writable volume, write) the volume.
 * `skip` names an entry of `dir` to leave out (one already owned).
 */
export async function setVolumeOwnership(
  dir: string,
  { fsGroup, readOnly, skip }: { fsGroup: number; readOnly: boolean; skip?: string },
): Promise<void> {
  const visit = async (path: string): Promise<void> => {
    if (await ownEntry(path, fsGroup, readOnly))
      for (const name of await readdir(path)) if (name !== skip) await visit(join(path, name));
  };
  await visit(dir);
}

/** Gives one entry to `fsGroup` (not following a link); answers whether it is a directory. */
async function ownEntry(path: string, fsGroup: number, readOnly: boolean): Promise<boolean> {
  await lchown(path, -1, fsGroup);
  const st = await lstat(path);
  if (st.isSymbolicLink()) return false;
  const dir = st.isDirectory();
  const mode = ownedMode(st.mode, { dir, readOnly });
  if ((st.mode & 0o7777) !== mode) await chmod(path, mode);
  return dir;
}
