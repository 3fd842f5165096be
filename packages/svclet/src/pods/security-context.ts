import type { Container, Pod } from '@svc/api';
import type { ContainerConfig } from './cri.js';
import { ContainerConfigError } from './environment.js';

/** The user settings of one container: its own `securityContext` over the pod's, as kubelet merges them. */
export interface EffectiveUser {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  /** The pod's `fsGroup`, then its `supplementalGroups`, in kubelet's order. */
  supplementalGroups: number[];
}

export function effectiveUser(pod: Pod, c: Container): EffectiveUser {
  const p = pod.spec.securityContext ?? {};
  const own = c.securityContext ?? {};
  return {
    runAsUser: own.runAsUser ?? p.runAsUser,
    runAsGroup: own.runAsGroup ?? p.runAsGroup,
    runAsNonRoot: own.runAsNonRoot ?? p.runAsNonRoot,
    supplementalGroups: [...(p.fsGroup !== undefined ? [p.fsGroup] : []), ...(p.supplementalGroups ?? [])],
  };
}

/**
 * kubelet's FsUser of a pod: the one `runAsUser` every init and app container runs as, or
 * undefined when one sets none or they differ. Projected token files are given to this user.
 */
export function fsUserOf(pod: Pod): number | undefined {
  let user: number | undefined;
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    const u = effectiveUser(pod, c).runAsUser;
    if (u === undefined || (user !== undefined && u !== user)) return undefined;
    user = u;
  }
  return user;
}

/** The CRI's `linux.securityContext` for the user settings (undefined when none is set). */
export function linuxUserConfig(u: EffectiveUser): ContainerConfig['linux'] {
  if (u.runAsUser === undefined && u.runAsGroup === undefined && u.supplementalGroups.length === 0) return undefined;
  return {
    securityContext: {
      ...(u.runAsUser !== undefined ? { runAsUser: { value: u.runAsUser } } : {}),
      ...(u.runAsGroup !== undefined ? { runAsGroup: { value: u.runAsGroup } } : {}),
      supplementalGroups: u.supplementalGroups,
    },
  };
}

/** `name_namespace(uid)`, as kubelet names a pod in its messages. */
function podRef(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/**
 * kubelet's `runAsNonRoot` check before a container is created: a `runAsUser` of 0, or no
 * `runAsUser` and an image that runs as root (`imageUser`: the image's uid and user name, asked of
 * the runtime only when needed), is refused with `CreateContainerConfigError` and kubelet's message.
 */
export async function verifyRunAsNonRoot(
  pod: Pod,
  c: Container,
  imageUser: () => Promise<{ uid?: number; username?: string }>,
): Promise<void> {
  const u = effectiveUser(pod, c);
  if (!u.runAsNonRoot) return;
  const at = `(pod: ${JSON.stringify(podRef(pod))}, container: ${c.name})`;
  if (u.runAsUser !== undefined) {
    if (u.runAsUser === 0) throw new ContainerConfigError(`container's runAsUser breaks non-root policy ${at}`);
    return;
  }
  const { uid, username } = await imageUser();
  if (uid === undefined && username)
    throw new ContainerConfigError(
      `container has runAsNonRoot and image has non-numeric user (${username}), cannot verify user is non-root ${at}`,
    );
  if (uid === 0) throw new ContainerConfigError(`container has runAsNonRoot and image will run as root ${at}`);
}
