import type { ConfigMap, Container, KeyToPath, Pod, ResourceFieldSelector, Secret } from '@svc/api';
import { resourceFieldValue, type ObjectReader } from '../pods/environment.js';
import type { Payload, PayloadFile } from './atomic-writer.js';

/** Kubernetes' default file mode of configMap, secret, downwardAPI and projected volumes (0644). */
export const DEFAULT_MODE = 0o644;

/** A volume cannot be set up (yet): the pod waits and a `FailedMount` event says why. */
export class MountError extends Error {}

export interface NamedSource {
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
}
export interface ConfigMapSource extends NamedSource {
  defaultMode?: number;
}
export interface SecretSource {
  secretName?: string;
  items?: KeyToPath[];
  optional?: boolean;
  defaultMode?: number;
}
export interface DownwardApiFile {
  path: string;
  fieldRef?: { apiVersion?: string; fieldPath: string };
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}
export interface DownwardApiSource {
  items?: DownwardApiFile[];
  defaultMode?: number;
}
export interface TokenProjection {
  audience?: string;
  expirationSeconds?: number;
  path: string;
}
export interface ClusterTrustBundleProjection {
  name?: string;
  signerName?: string;
  labelSelector?: { matchLabels?: Record<string, string> };
  optional?: boolean;
  path: string;
}
export interface Projection {
  configMap?: NamedSource;
  secret?: NamedSource;
  downwardAPI?: { items?: DownwardApiFile[] };
  serviceAccountToken?: TokenProjection;
  clusterTrustBundle?: ClusterTrustBundleProjection;
}
export interface ProjectedSource {
  sources?: Projection[];
  defaultMode?: number;
}

/** What the payload builders need of the node and the API. */
export interface SourceContext {
  pod: Pod;
  /** ConfigMaps and Secrets of the pod's namespace; absent without an API server. */
  read?: ObjectReader;
  /** A service-account token for the pod (TokenRequest), rotated by the caller. */
  token?(pod: Pod, p: TokenProjection): Promise<string>;
  /** PEM bundles of ClusterTrustBundles (by name, or by signer and labels); absent when the feature gate is off. */
  trustBundles?(p: ClusterTrustBundleProjection): Promise<string | undefined>;
  nodeIp: string;
  podIp?: string;
  nodeAllocatable: Readonly<Record<string, string>>;
  /** The pod's FsUser (`fsUserOf`) and `fsGroup`: token and trust-bundle files are 0600, the user's. */
  fsUser?: number;
  fsGroup?: number;
}

function needApi(ctx: SourceContext, what: string): ObjectReader {
  if (!ctx.read) throw new MountError(`cannot read ${what}: the node agent has no API server (standalone mode)`);
  return ctx.read;
}

/** The key → bytes of a ConfigMap (data and binaryData) or a Secret (base64 data). */
function entries(obj: ConfigMap | Secret, kind: 'configmap' | 'secret'): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (kind === 'configmap') {
    const cm = obj as ConfigMap;
    for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v, 'utf8'));
    for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  } else {
    for (const [k, v] of Object.entries((obj as Secret).data ?? {})) out.set(k, Buffer.from(v, 'base64'));
  }
  return out;
}

/** The files of a ConfigMap or Secret source: every key, or its `items` (missing keys refused unless optional). */
async function keyedPayload(
  ctx: SourceContext,
  o: { kind: 'configmap' | 'secret'; name: string; items?: KeyToPath[]; optional: boolean; mode: number },
): Promise<Payload> {
  const read = needApi(ctx, `${o.kind} ${JSON.stringify(o.name)}`);
  const namespace = ctx.pod.metadata.namespace ?? '';
  const obj = await read(o.kind === 'configmap' ? 'configmaps' : 'secrets', namespace, o.name);
  const payload: Payload = new Map();
  if (!obj) {
    if (o.optional) return payload;
    throw new MountError(`${o.kind} ${JSON.stringify(o.name)} not found`);
  }
  const data = entries(obj, o.kind);
  if (!o.items || o.items.length === 0) {
    for (const [k, v] of data) payload.set(k, { data: v, mode: o.mode });
    return payload;
  }
  for (const item of o.items) {
    const v = data.get(item.key);
    if (!v) {
      if (o.optional) continue;
      throw new MountError(
        `${o.kind === 'configmap' ? 'configmap' : 'secret'} references non-existent ${o.kind === 'configmap' ? 'config' : 'secret'} key: ${item.key}`,
      );
    }
    payload.set(item.path, { data: v, mode: item.mode ?? o.mode });
  }
  return payload;
}

export function configMapPayload(ctx: SourceContext, src: ConfigMapSource): Promise<Payload> {
  return keyedPayload(ctx, {
    kind: 'configmap',
    name: src.name ?? '',
    items: src.items,
    optional: src.optional ?? false,
    mode: src.defaultMode ?? DEFAULT_MODE,
  });
}

export function secretPayload(ctx: SourceContext, src: SecretSource): Promise<Payload> {
  return keyedPayload(ctx, {
    kind: 'secret',
    name: src.secretName ?? '',
    items: src.items,
    optional: src.optional ?? false,
    mode: src.defaultMode ?? DEFAULT_MODE,
  });
}

/** Kubernetes' `key="value"` lines (sorted, Go-quoted values) of labels and annotations. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
    .join('\n');
}

/** A downward-API field of the pod, as a volume file holds it. */
export function podField(ctx: SourceContext, path: string): string {
  const pod = ctx.pod;
  const m = pod.metadata;
  const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2] ?? ''] ?? '';
  switch (path) {
    case 'metadata.labels':
      return formatMap(m.labels);
    case 'metadata.annotations':
      return formatMap(m.annotations);
    case 'metadata.name':
      return m.name ?? '';
    case 'metadata.namespace':
      return m.namespace ?? '';
    case 'metadata.uid':
      return m.uid ?? '';
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.nodeIp;
    case 'status.podIP':
      return ctx.podIp ?? ctx.nodeIp;
    default:
      throw new MountError(`unsupported fieldPath: ${path}`);
  }
}

function downwardFile(ctx: SourceContext, f: DownwardApiFile, mode: number): PayloadFile {
  if (f.fieldRef) return { data: Buffer.from(podField(ctx, f.fieldRef.fieldPath)), mode: f.mode ?? mode };
  const ref = f.resourceFieldRef;
  if (!ref)
    throw new MountError(`downwardAPI item ${JSON.stringify(f.path)} has neither fieldRef nor resourceFieldRef`);
  const containers: Container[] = [...(ctx.pod.spec.initContainers ?? []), ...ctx.pod.spec.containers];
  const c = containers.find((x) => x.name === ref.containerName);
  if (!c) throw new MountError(`container ${ref.containerName ?? ''} not found in the pod`);
  return { data: Buffer.from(resourceFieldValue(c, ref, ctx.nodeAllocatable)), mode: f.mode ?? mode };
}

export function downwardApiPayload(ctx: SourceContext, src: DownwardApiSource, mode?: number): Payload {
  const payload: Payload = new Map();
  for (const f of src.items ?? []) payload.set(f.path, downwardFile(ctx, f, mode ?? src.defaultMode ?? DEFAULT_MODE));
  return payload;
}

/** The merged files of a projected volume's sources; later sources win a shared path, as Kubernetes lets them. */
export async function projectedPayload(ctx: SourceContext, src: ProjectedSource): Promise<Payload> {
  const mode = src.defaultMode ?? DEFAULT_MODE;
  // kubelet: with an FsUser or fsGroup, a token or bundle is 0600 and the FsUser's (fsGroup's
  // ownership then makes it 0640), whatever defaultMode says.
  const restricted = ctx.fsUser !== undefined || ctx.fsGroup !== undefined;
  const secretFile = (data: string): PayloadFile => ({
    data: Buffer.from(data),
    mode: restricted ? 0o600 : mode,
    ...(ctx.fsUser !== undefined ? { owner: ctx.fsUser } : {}),
  });
  const payload: Payload = new Map();
  const merge = (p: Payload): void => {
    for (const [k, v] of p) payload.set(k, v);
  };
  for (const s of src.sources ?? []) {
    if (s.configMap) merge(await keyedPayload(ctx, { kind: 'configmap', ...named(s.configMap), mode }));
    else if (s.secret) merge(await keyedPayload(ctx, { kind: 'secret', ...named(s.secret), mode }));
    else if (s.downwardAPI) merge(downwardApiPayload(ctx, s.downwardAPI, mode));
    else if (s.serviceAccountToken) {
      if (!ctx.token) throw new MountError('cannot request a service account token without an API server');
      const token = await ctx.token(ctx.pod, s.serviceAccountToken);
      payload.set(s.serviceAccountToken.path, secretFile(token));
    } else if (s.clusterTrustBundle) {
      // With the ClusterTrustBundleProjection gate off the source is not served (Kubernetes'
      // API server drops the field then); the volume has the other sources' files.
      if (!ctx.trustBundles) continue;
      const pem = await ctx.trustBundles(s.clusterTrustBundle);
      if (pem === undefined) {
        if (s.clusterTrustBundle.optional) continue;
        throw new MountError(
          `no ClusterTrustBundle matches ${s.clusterTrustBundle.name ? `name ${JSON.stringify(s.clusterTrustBundle.name)}` : `signer ${JSON.stringify(s.clusterTrustBundle.signerName ?? '')}`}`,
        );
      }
      payload.set(s.clusterTrustBundle.path, secretFile(pem));
    }
  }
  return payload;
}

function named(s: NamedSource): { name: string; items?: KeyToPath[]; optional: boolean } {
  return { name: s.name ?? '', items: s.items, optional: s.optional ?? false };
}
