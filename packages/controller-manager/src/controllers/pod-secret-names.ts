import type { Container, Pod } from '@svc/api';

/** Volume sources whose `secretRef.name` names a Secret (Kubernetes' VisitPodSecretNames). */
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'] as const;

function nameAt(o: unknown, ...path: string[]): string | undefined {
  let v: unknown = o;
  for (const p of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Every Secret name a pod refers to, as Kubernetes' VisitPodSecretNames: image pull secrets,
 * containers' (init and ephemeral too) env `secretKeyRef` and envFrom `secretRef`, and volumes
 * (`secret`, projected `secret` sources, `azureFile`, `csi` node-publish secret and the
 * `secretRef` of the other plugins).
 */
export function podSecretNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const add = (n: string | undefined): void => {
    if (n) names.add(n);
  };
  const spec = pod.spec;
  for (const ref of spec.imagePullSecrets ?? []) add(ref.name);
  const containers: Container[] = [
    ...(spec.initContainers ?? []),
    ...spec.containers,
    ...(spec.ephemeralContainers ?? []),
  ];
  for (const c of containers) {
    for (const e of c.envFrom ?? []) add(e.secretRef?.name);
    for (const e of c.env ?? []) add(e.valueFrom?.secretKeyRef?.name);
  }
  for (const v of spec.volumes ?? []) {
    add(nameAt(v, 'secret', 'secretName'));
    add(nameAt(v, 'azureFile', 'secretName'));
    add(nameAt(v, 'csi', 'nodePublishSecretRef', 'name'));
    for (const source of SECRET_REF_SOURCES) add(nameAt(v, source, 'secretRef', 'name'));
    const projected = (v.projected as { sources?: unknown[] } | undefined)?.sources ?? [];
    for (const s of projected) add(nameAt(s, 'secret', 'name'));
  }
  return names;
}
