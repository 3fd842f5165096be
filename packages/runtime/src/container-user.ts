import { readFileSync } from 'node:fs';
import type { LinuxContainerSecurityContext } from './cri-types.js';
import { findTool } from './container-mounts.js';

/**
 * The user a container's processes run as. svc-runtime runs containers on the host's root file
 * system, so users and groups are looked up in the host's `/etc/passwd` and `/etc/group`, as
 * containerd looks them up in the image's. The container's main process and every exec session
 * drop to this user with `setpriv` (util-linux) right before the command, after the mounts are
 * made: `--reuid`, `--regid` and `--groups` set the three at once, and a non-zero uid loses
 * root's capabilities on the way, as in any container runtime.
 */
export interface ContainerUser {
  uid: number;
  gid: number;
  /** Supplementary groups: the primary group, the user's groups in `/etc/group`, then the pod's `supplementalGroups` (and `fsGroup`). */
  groups: number[];
}

interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

function readLines(path: string): string[][] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split(':'));
  } catch {
    return [];
  }
}

function passwd(): PasswdEntry[] {
  return readLines('/etc/passwd').map(([name = '', , uid = '', gid = '']) => ({
    name,
    uid: Number(uid),
    gid: Number(gid),
  }));
}

/** The gids of the groups of `/etc/group` that list `name` as a member. */
function memberOf(name: string): number[] {
  return readLines('/etc/group')
    .filter(([, , , members = '']) => members.split(',').includes(name))
    .map(([, , gid = '']) => Number(gid));
}

/**
 * The user of a container config's security context, or undefined when it names none (the
 * container then runs as svc-runtime itself). A uid not in `/etc/passwd` runs with gid 0 unless
 * `runAsGroup` says otherwise, as containerd does; an unknown user name is an error.
 */
export function containerUser(sc: LinuxContainerSecurityContext | null | undefined): ContainerUser | undefined {
  const supplemental = sc?.supplementalGroups ?? [];
  const runAsGroup = sc?.runAsGroup?.value;
  const byName = sc?.runAsUsername;
  if (sc?.runAsUser == null && !byName && runAsGroup === undefined && supplemental.length === 0) return undefined;
  const users = passwd();
  let entry: PasswdEntry | undefined;
  let uid: number;
  if (sc?.runAsUser != null) {
    uid = sc.runAsUser.value;
    entry = users.find((u) => u.uid === uid);
  } else if (byName) {
    entry = users.find((u) => u.name === byName);
    if (!entry) throw new Error(`unable to find user ${byName}: no matching entries in passwd file`);
    uid = entry.uid;
  } else {
    uid = process.getuid?.() ?? 0;
    entry = users.find((u) => u.uid === uid);
  }
  const gid = runAsGroup ?? entry?.gid ?? 0;
  const groups = [...new Set([gid, ...(entry ? memberOf(entry.name) : []), ...supplemental])];
  return { uid, gid, groups };
}

/** Why svc-runtime cannot run processes as `user`, or undefined when it can. */
export function userUnavailable(user: ContainerUser): string | undefined {
  const ownUid = process.getuid?.() ?? 0;
  if (ownUid === 0) {
    return findTool('setpriv')
      ? undefined
      : `setpriv not found on PATH (util-linux): svc-runtime cannot run the container as uid ${user.uid}`;
  }
  const ownGroups = new Set([process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])]);
  if (user.uid === ownUid && user.gid === process.getgid?.() && user.groups.every((g) => ownGroups.has(g)))
    return undefined;
  return `svc-runtime runs as uid ${ownUid}, not root: it cannot run the container as uid ${user.uid} (gid ${user.gid}, groups ${user.groups.join(',')})`;
}

/** `argv` run as `user`, or `argv` itself when svc-runtime already is that user. */
export function asUserArgv(user: ContainerUser | undefined, argv: string[]): string[] {
  if (!user || (process.getuid?.() ?? 0) !== 0) return argv;
  return [
    findTool('setpriv') ?? 'setpriv',
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    user.groups.length > 0 ? `--groups=${user.groups.join(',')}` : '--clear-groups',
    '--',
    ...argv,
  ];
}
