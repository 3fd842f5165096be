import { closeSync, constants } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import { MountError } from './volume-sources.js';

export interface HostPathSource {
  path: string;
  /** '' (no check), DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice. */
  type?: string;
}

async function kindOf(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path);
    if (s.isDirectory()) return 'Directory';
    if (s.isFile()) return 'File';
    if (s.isSocket()) return 'Socket';
    if (s.isCharacterDevice()) return 'CharDevice';
    if (s.isBlockDevice()) return 'BlockDevice';
    return 'other';
  } catch {
    return undefined;
  }
}

const WORDS: Record<string, string> = {
  Directory: 'a directory',
  File: 'a file',
  Socket: 'a socket file',
  CharDevice: 'a character device',
  BlockDevice: 'a block device',
};

/**
 * Kubernetes' hostPath type checks: `DirectoryOrCreate` makes a missing directory (0755, with
 * parents), `FileOrCreate` a missing empty file (0644, its directory must exist); the others
 * require the path to exist as that kind; no type checks nothing.
 */
export async function checkHostPath(src: HostPathSource): Promise<void> {
  const type = src.type ?? '';
  if (type === '') return;
  const found = await kindOf(src.path);
  if (type === 'DirectoryOrCreate') {
    if (found === undefined) await mkdir(src.path, { recursive: true, mode: 0o755 });
    else if (found !== 'Directory') throw new MountError(`hostPath type check failed: ${src.path} is not a directory`);
    return;
  }
  if (type === 'FileOrCreate') {
    if (found === undefined) {
      try {
        const h = await open(src.path, constants.O_CREAT | constants.O_WRONLY, 0o644);
        closeSync(h.fd);
      } catch (e) {
        throw new MountError(`hostPath type check failed: cannot create file ${src.path}: ${(e as Error).message}`);
      }
    } else if (found !== 'File') throw new MountError(`hostPath type check failed: ${src.path} is not a file`);
    return;
  }
  const want = WORDS[type];
  if (!want) throw new MountError(`hostPath type ${JSON.stringify(type)} is not known`);
  if (found === undefined) throw new MountError(`hostPath type check failed: ${src.path} does not exist`);
  if (found !== type) throw new MountError(`hostPath type check failed: ${src.path} is not ${want}`);
}
