import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, normalize } from 'node:path';
import type { Mount } from './cri-types.js';

/**
 * A container's mounts made real. svc-runtime runs containers on the host's root file system,
 * so a container with mounts starts in a mount namespace of its own (`unshare --mount
 * --propagation private`, util-linux): a small `/bin/sh` script bind-mounts each host path
 * onto its container path (remounted read-only when asked) and then execs the command, so the
 * container's pid is the namespace's first process. Nothing is mounted in the host's
 * namespace and nothing propagates back. Exec sessions enter the same namespace with
 * `nsenter --target <pid> --mount`. Bind mounts need CAP_SYS_ADMIN: without root (or without
 * the tools) the container does not start, with a message saying why.
 */

const SHELL = '/bin/sh';

/**
 * The script run in the new namespace: `<cwd> <ready-file> (<src> <dst> <ro|rw>)... -- <argv...>`.
 * It writes a line into the ready file once every mount is made, just before the exec, so that
 * the shim reports the container started (and exec sessions may enter its namespace) only
 * then. The file is opened, and the working directory entered, before the first mount: a volume
 * mounted over the directory that holds them (svc-runtime's own, where a container without a
 * `workingDir` works) would hide them afterwards. The working directory is entered again after
 * the mounts, so that one inside a volume is the volume's.
 */
const MOUNT_SCRIPT = [
  'set -e',
  'cwd=$1; ready=$2; shift 2',
  'exec 3> "$ready"',
  'cd "$cwd"',
  'while [ "$1" != "--" ]; do',
  '  mount --bind -- "$1" "$2"',
  '  if [ "$3" = ro ]; then mount -o remount,bind,ro -- "$2"; fi',
  '  shift 3',
  'done',
  'shift',
  'cd "$cwd" 2>/dev/null || :',
  'echo mounted >&3',
  'exec 3>&-',
  'exec "$@"',
].join('\n');

/** Tools looked up so far (a PATH scan each time cost a dozen `access` calls per exec). */
const toolPaths = new Map<string, string | undefined>();

/** The path of `name` on PATH, or undefined; looked up once per process. */
export function findTool(name: string): string | undefined {
  if (!toolPaths.has(name)) toolPaths.set(name, scanPath(name));
  return toolPaths.get(name);
}

function scanPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Why containers with mounts cannot start here, or undefined when they can. */
export function mountNamespaceUnavailable(): string | undefined {
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return `svc-runtime runs as uid ${process.getuid()}, not root: it cannot bind-mount volumes into a mount namespace of the container's own, and does not run containers without their volumes`;
  const missing = ['unshare', 'nsenter', 'mount'].filter((name) => !findTool(name));
  if (missing.length > 0)
    return `${missing.join(', ')} not found on PATH (util-linux): svc-runtime cannot make the container's volume mounts`;
  return undefined;
}

/** Checks one mount of a container config; the message says what is wrong, undefined when it is fine. */
export function invalidMount(m: Mount): string | undefined {
  if (!isAbsolute(m.containerPath)) return `mount path ${JSON.stringify(m.containerPath)} must be absolute`;
  if (!isAbsolute(m.hostPath)) return `mount source ${JSON.stringify(m.hostPath)} must be absolute`;
  try {
    statSync(m.hostPath);
  } catch {
    return `mount source ${JSON.stringify(m.hostPath)} does not exist`;
  }
  return undefined;
}

/**
 * Creates each missing mount point on the host's file system (a directory, or an empty file for
 * a file source), as a container runtime creates it in the container's root file system; here
 * that root is the host's, so the point stays (empty) after the container.
 */
export function createMountPoints(mounts: readonly Mount[]): void {
  for (const m of mounts) {
    const target = cleanPath(m.containerPath);
    let exists = true;
    try {
      statSync(target);
    } catch {
      exists = false;
    }
    if (exists) continue;
    if (statSync(m.hostPath).isDirectory()) mkdirSync(target, { recursive: true });
    else {
      mkdirSync(dirname(target), { recursive: true });
      closeSync(openSync(target, 'a'));
    }
  }
}

/**
 * The command line that starts `argv` in a mount namespace of its own with `mounts` bound
 * (parents before children), writing a line into `readyFile` (a host path) once they are.
 */
export function mountedArgv({
  mounts,
  argv,
  cwd,
  readyFile,
}: {
  mounts: readonly Mount[];
  argv: string[];
  cwd: string;
  readyFile: string;
}): string[] {
  const ordered = [...mounts].sort((a, b) => depth(a.containerPath) - depth(b.containerPath));
  const pairs = ordered.flatMap((m) => [m.hostPath, cleanPath(m.containerPath), m.readonly ? 'ro' : 'rw']);
  return [
    findTool('unshare') ?? 'unshare',
    '--mount',
    '--propagation',
    'private',
    '--',
    SHELL,
    '-c',
    MOUNT_SCRIPT,
    'sh',
    cwd,
    readyFile,
    ...pairs,
    '--',
    ...argv,
  ];
}

function depth(p: string): number {
  return normalize(p).split('/').filter(Boolean).length;
}

/** `p` normalized, without a trailing slash. */
function cleanPath(p: string): string {
  return normalize(p).replace(/(.)\/+$/, '$1');
}

/**
 * `argv` run in the mount namespace of the container whose main process is `pid`, in `cwd`.
 * The caller has checked that the executable is there (`findsExecutable` under
 * `/proc/<pid>/root`).
 */
export function enterMountsArgv({ pid, argv, cwd }: { pid: number; argv: string[]; cwd: string }): string[] {
  return [findTool('nsenter') ?? 'nsenter', `--target=${pid}`, '--mount', `--wd=${cwd}`, '--', ...argv];
}

/**
 * Whether the executable of `argv` exists as a process under `root` ('' for the host's) would
 * find it: a path (relative to `cwd`), or a name looked up in the environment's PATH.
 */
export function findsExecutable({
  root,
  argv,
  cwd,
  env,
}: {
  root: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}): boolean {
  const [file = ''] = argv;
  const candidates = file.includes('/')
    ? [isAbsolute(file) ? file : join(cwd, file)]
    : (env.PATH ?? '').split(delimiter).map((d) => join(d || '.', file));
  return candidates.some((p) => executable(join(root || '/', p)));
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
