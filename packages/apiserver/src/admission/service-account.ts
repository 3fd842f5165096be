import { randomBytes } from 'node:crypto';
import {
  naming,
  notFound,
  podConfigAnnotation,
  securityAnnotationKey,
  serviceAccountMountPath,
  serviceAccountVolumePrefix,
  type Container,
  type Pod,
  type ProjectedVolumeSource,
  type ServiceAccount,
  type StatusError,
  type Volume,
  type VolumeMount,
} from '@svc/api';
import { sleep } from '@svc/machinery';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Lifetime of the projected token Kubernetes asks for (an hour and 7 s: the "warn only" bound token expiry). */
export const TOKEN_EXPIRATION_SECONDS = 3607;

export interface ServiceAccountOptions {
  /** A service account, from the cache first, then from storage; undefined when it does not exist. */
  getServiceAccount(namespace: string, name: string): Promise<ServiceAccount | undefined>;
  /** Ends the lookup retries when the server stops. */
  signal?: AbortSignal;
  /** The pause between lookups of a missing `default` account (Kubernetes: 100-199 ms). */
  retryIntervalMs?: () => number;
  /** Volume names (`<prefix>-` + 5 random characters); replaceable in tests. */
  generateName?: (prefix: string) => string;
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function generateName(prefix: string): string {
  let s = prefix;
  for (const b of randomBytes(5)) s += SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length];
  return s;
}

/**
 * Kubernetes' ServiceAccount admission for pods (not their subresources but
 * `ephemeralcontainers`). On create (mutating): a pod gets the `default` account unless it
 * names one, the account must exist (`default` is looked up for about a second and a half,
 * as the controller manager creates it), and unless `automountServiceAccountToken` is false
 * on the pod (or else the account) every container and init container mounts a projected
 * volume `<prefix>-xxxxx` (token, root CA, namespace) read-only at the service-account path;
 * a pod without image pull secrets gets the account's. Validation: mirror pods may not use
 * service accounts or secrets, and an account annotated `enforce-mountable-secrets` limits
 * the pod to the secrets it lists.
 */
export class ServiceAccountAdmission implements AdmissionPlugin {
  readonly name = 'ServiceAccount';

  constructor(private readonly o: ServiceAccountOptions) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod || a.operation !== 'CREATE') return;
    // Mirror pods are not changed (the node agent would see a different spec), only validated.
    if (!isMirrorPod(pod)) {
      const spec = pod.spec;
      if (!spec.serviceAccountName) spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
      const account = await this.account(a, spec.serviceAccountName);
      if (shouldAutomount(account, pod)) mountToken(pod, this.o.generateName ?? generateName);
      if ((spec.imagePullSecrets ?? []).length === 0) {
        spec.imagePullSecrets = (account.imagePullSecrets ?? []).map((s) => ({ name: s.name }));
      }
    }
    await this.validate(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    if (a.operation === 'UPDATE' && a.subresource === 'ephemeralcontainers')
      return this.limitEphemeralContainers(a, pod);
    if (a.operation !== 'CREATE') return;
    const spec = pod.spec;
    if (isMirrorPod(pod)) {
      if (spec.serviceAccountName) throw admissionForbidden(a, 'a mirror pod may not reference service accounts');
      if (referencesSecrets(pod)) throw admissionForbidden(a, 'a mirror pod may not reference secrets');
      const projected = (spec.volumes ?? []).flatMap(
        (v) => (v.projected as ProjectedVolumeSource | undefined)?.sources ?? [],
      );
      if (projected.some((p) => p.serviceAccountToken)) {
        throw admissionForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
      return;
    }
    if (!spec.serviceAccountName) {
      throw admissionForbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata.name ?? ''}`);
    }
    const account = await this.account(a, spec.serviceAccountName);
    if (!enforcesMountableSecrets(account)) return;
    const why = limitSecretReferences(account, pod);
    if (why) throw admissionForbidden(a, why);
  }

  private async limitEphemeralContainers(a: AdmissionAttributes, pod: Pod): Promise<void> {
    const name = pod.spec.serviceAccountName;
    if (!name)
      throw admissionForbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata.name ?? ''}`);
    const account = await this.account(a, name);
    if (!enforcesMountableSecrets(account)) return;
    const why = containerSecretViolation(account, pod.spec.ephemeralContainers ?? [], 'ephemeral container');
    if (why) throw admissionForbidden(a, why);
  }

  /** The account, or a 403 `error looking up service account ns/name: ...`. */
  private async account(a: AdmissionAttributes, name: string): Promise<ServiceAccount> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? 10 : 1;
    const interval = this.o.retryIntervalMs?.() ?? 100 + Math.floor(Math.random() * 100);
    let lookupError: unknown;
    for (let i = 0; i < attempts && !this.o.signal?.aborted; i++) {
      if (i > 0) await sleep(interval, this.o.signal);
      try {
        const sa = await this.o.getServiceAccount(a.namespace, name);
        if (sa) return sa;
      } catch (e) {
        lookupError = e;
        break;
      }
    }
    const why = lookupError
      ? ((lookupError as Partial<StatusError>).message ?? String(lookupError))
      : notFound({ group: '', resource: 'serviceaccount' }, name).message;
    throw admissionForbidden(a, `error looking up service account ${a.namespace}/${name}: ${why}`);
  }
}

/** The pod of a pod request this plugin handles: the pod itself or its `ephemeralcontainers`. */
function podOf(a: AdmissionAttributes): Pod | undefined {
  if (a.resource.group !== '' || a.resource.plural !== 'pods') return undefined;
  if (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') return undefined;
  const pod = a.object as Pod | undefined;
  if (pod) pod.spec ??= { containers: [] };
  return pod;
}

function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[podConfigAnnotation('mirror')] !== undefined;
}

/** The pod's choice wins, then the account's; mounting is the default. */
function shouldAutomount(account: ServiceAccount, pod: Pod): boolean {
  return pod.spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;
}

/** The projected volume of a service-account token, the cluster's root CA and the pod's namespace. */
export function tokenVolumeSource(): ProjectedVolumeSource {
  return {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
      { configMap: { name: naming().rootCaConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  };
}

/**
 * Mounts the token volume into every init container and container that has nothing at the
 * service-account path yet; reuses a volume already named `<prefix>-...`, else adds one.
 */
function mountToken(pod: Pod, name: (prefix: string) => string): void {
  const spec = pod.spec;
  const prefix = `${serviceAccountVolumePrefix()}-`;
  const existing = (spec.volumes ?? []).find((v) => v.name.startsWith(prefix));
  const volumeName = existing?.name ?? name(prefix);
  const path = serviceAccountMountPath();
  let needed = false;
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    const mounts: VolumeMount[] = c.volumeMounts ?? [];
    if (mounts.some((m) => m.mountPath === path)) continue;
    c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: path }];
    needed = true;
  }
  if (!existing && needed) {
    const volume: Volume = { name: volumeName, projected: tokenVolumeSource() };
    spec.volumes = [...(spec.volumes ?? []), volume];
  }
}

/** `true`, `1`, `t`... (Go's ParseBool) on the account's `enforce-mountable-secrets` annotation. */
function enforcesMountableSecrets(account: ServiceAccount): boolean {
  const v = account.metadata.annotations?.[securityAnnotationKey('enforce-mountable-secrets')];
  return v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}

/** Kubernetes' message for the first secret the pod uses that the account does not list, if any. */
function limitSecretReferences(account: ServiceAccount, pod: Pod): string | undefined {
  const mountable = new Set((account.secrets ?? []).map((s) => s.name));
  for (const v of pod.spec.volumes ?? []) {
    const secret = v.secret as { secretName?: string } | undefined;
    if (!secret) continue;
    const name = secret.secretName ?? '';
    if (!mountable.has(name)) {
      return `volume with secret.secretName="${name}" is not allowed because service account ${account.metadata.name ?? ''} does not reference that secret`;
    }
  }
  const containers =
    containerSecretViolation(account, pod.spec.initContainers ?? [], 'init container') ??
    containerSecretViolation(account, pod.spec.containers, 'container');
  if (containers) return containers;
  const pullSecrets = new Set((account.imagePullSecrets ?? []).map((s) => s.name));
  for (const [i, ref] of (pod.spec.imagePullSecrets ?? []).entries()) {
    if (!pullSecrets.has(ref.name)) {
      return `imagePullSecrets[${i}].name="${ref.name ?? ''}" is not allowed because service account ${account.metadata.name ?? ''} does not reference that imagePullSecret`;
    }
  }
  return undefined;
}

function containerSecretViolation(account: ServiceAccount, containers: Container[], what: string): string | undefined {
  const mountable = new Set((account.secrets ?? []).map((s) => s.name));
  const sa = account.metadata.name ?? '';
  for (const c of containers) {
    for (const env of c.env ?? []) {
      const ref = env.valueFrom?.secretKeyRef;
      if (ref && !mountable.has(ref.name)) {
        return `${what} ${c.name} with envVar ${env.name} referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${sa} does not reference that secret`;
      }
    }
    for (const from of c.envFrom ?? []) {
      const ref = from.secretRef;
      if (ref && !mountable.has(ref.name)) {
        return `${what} ${c.name} with envFrom referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${sa} does not reference that secret`;
      }
    }
  }
  return undefined;
}

/** Volume sources that name a secret in `secretRef` (Kubernetes' VisitPodSecretNames). */
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'];

/** Whether the pod names any secret: pull secrets, containers' env, or volumes. */
function referencesSecrets(pod: Pod): boolean {
  const spec = pod.spec;
  if ((spec.imagePullSecrets ?? []).length > 0) return true;
  const containers = [...(spec.initContainers ?? []), ...spec.containers, ...(spec.ephemeralContainers ?? [])];
  if (
    containers.some(
      (c) => (c.envFrom ?? []).some((f) => f.secretRef) || (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef),
    )
  ) {
    return true;
  }
  return (spec.volumes ?? []).some((v) => {
    const src = (k: string): Record<string, unknown> | undefined => v[k] as Record<string, unknown> | undefined;
    if ((src('azureFile')?.secretName as string | undefined)?.length) return true;
    if (SECRET_REF_SOURCES.some((k) => src(k)?.secretRef)) return true;
    if (src('csi')?.nodePublishSecretRef) return true;
    if (src('secret')) return true;
    return ((v.projected as ProjectedVolumeSource | undefined)?.sources ?? []).some((p) => p.secret);
  });
}

/** ServiceAccount admission over the server's stores (accounts from the watch cache first). */
export function newServiceAccountAdmission(c: AdmissionContext): ServiceAccountAdmission {
  return new ServiceAccountAdmission({
    signal: c.signal,
    getServiceAccount: async (namespace, name) =>
      (await c.read({ group: '', version: 'v1', resource: 'serviceaccounts' }, { namespace, name })) as
        ServiceAccount | undefined,
  });
}
