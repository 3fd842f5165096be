import { mkdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { Container } from '@svc/api';
import { ContainerConfigError, expandVars } from '../pods/environment.js';
import type { MountedVolume } from './volume-manager.js';

export interface CriMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
}

/**
 * The CRI mounts of container `c`: each `volumeMounts[]` entry's volume directory (or its
 * `subPath`/`subPathExpr` inside it, made as a directory when missing in a writable volume, as
 * Kubernetes does) at `mountPath`, read-only when the mount asks or the volume is a
 * configMap, secret, projected or downwardAPI one. A subPath must stay inside its volume.
 */
export async function containerMounts(
  c: Container,
  {
    volumes,
    env,
    managed,
  }: { volumes: ReadonlyMap<string, MountedVolume>; env: ReadonlyMap<string, string>; managed: boolean },
): Promise<CriMount[]> {
  if (!managed) return [];
  const out: CriMount[] = [];
  for (const m of c.volumeMounts ?? []) {
    const v = volumes.get(m.name);
    if (!v)
      throw new ContainerConfigError(
        `cannot find volume ${JSON.stringify(m.name)} to mount into container ${JSON.stringify(c.name)}`,
      );
    const sub = m.subPathExpr ? expandVars(m.subPathExpr, env) : (m.subPath ?? '');
    let hostPath = v.hostPath;
    if (sub) {
      if (isAbsolute(sub) || normalize(sub).split(sep).includes('..'))
        throw new ContainerConfigError(
          `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)}: subPath ${JSON.stringify(sub)} must be a relative path without '..'`,
        );
      hostPath = join(v.hostPath, sub);
      if (!v.readOnly) await mkdir(hostPath, { recursive: true, mode: 0o750 }).catch(() => undefined);
      let real: string;
      let base: string;
      try {
        [real, base] = await Promise.all([realpath(hostPath), realpath(v.hostPath)]);
      } catch {
        throw new ContainerConfigError(
          `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)}: ${hostPath} does not exist`,
        );
      }
      if (real !== base && !real.startsWith(`${base}${sep}`))
        throw new ContainerConfigError(
          `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)}: subpath ${JSON.stringify(real)} not within volume path ${JSON.stringify(base)}`,
        );
      hostPath = real;
    }
    out.push({ containerPath: m.mountPath, hostPath, readonly: (m.readOnly ?? false) || v.readOnly });
  }
  return out;
}
