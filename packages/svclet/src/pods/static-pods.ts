import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import YAML from 'yaml';
import { podConfigAnnotation, type Pod } from '@svc/api';
import { defaultPodSpec } from '@svc/machinery';
import type { ClientLogger } from '@svc/client';

/** Kubernetes' v1 pod defaults for the fields the svclet reads (the API server applies the same to API pods). */
export function defaultPod(pod: Pod): void {
  defaultPodSpec(pod.spec);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why `o` cannot run as a pod (the checks the kubelet's validation would fail first), or undefined. */
function invalidPod(o: Record<string, unknown>): string | undefined {
  if (o.kind !== 'Pod') return `kind ${JSON.stringify(o.kind)} is not Pod`;
  const meta = o.metadata;
  if (!isObject(meta) || typeof meta.name !== 'string' || !meta.name) return 'metadata.name is required';
  const spec = o.spec;
  if (!isObject(spec) || !Array.isArray(spec.containers) || spec.containers.length === 0)
    return 'spec.containers is required';
  for (const c of [...spec.containers, ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) {
    if (!isObject(c) || typeof c.name !== 'string' || !c.name) return 'every container needs a name';
    if (typeof c.image !== 'string' || !c.image.trim()) return `container ${c.name}: image is required`;
  }
  return undefined;
}

/**
 * The pods in a manifest: YAML or JSON, one or more documents, each a Pod or a List (PodList)
 * of Pods. Throws with the reason when a document is neither or a pod is invalid.
 */
export function decodeManifests(text: string): Pod[] {
  const out: Pod[] = [];
  for (const doc of YAML.parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(doc.errors[0]?.message ?? 'invalid YAML');
    const v: unknown = doc.toJS();
    if (v === null || v === undefined) continue;
    if (!isObject(v)) throw new Error('a manifest must be an object');
    const items = v.kind === 'List' || v.kind === 'PodList' ? (Array.isArray(v.items) ? v.items : []) : [v];
    for (const item of items) {
      if (!isObject(item)) throw new Error('a list item must be an object');
      const why = invalidPod(item);
      if (why) throw new Error(why);
      out.push(item as Pod);
    }
  }
  return out;
}

/**
 * Kubernetes' applyDefaults for a pod read from a file or URL (`origin`): the pod defaults,
 * a uid (unless given) from an MD5 of the pod, the node and the origin, the name suffixed
 * `-<node name>`, namespace `default` when empty, `spec.nodeName`, the annotations
 * `config.hash` (the uid) and `config.source`, and a toleration of every NoExecute taint.
 */
export function staticPod(raw: Pod, o: { source: 'file' | 'http'; origin: string; nodeName: string }): Pod {
  const pod = structuredClone(raw);
  pod.apiVersion ??= 'v1';
  pod.metadata ??= {};
  defaultPod(pod);
  const h = createHash('md5')
    .update(JSON.stringify(pod))
    .update(`host:${o.nodeName}`)
    .update(`${o.source}:${o.origin}`);
  const uid = pod.metadata.uid || h.digest('hex');
  pod.metadata.uid = uid;
  pod.metadata.name = `${pod.metadata.name ?? ''}-${o.nodeName.toLowerCase()}`;
  pod.metadata.namespace ||= 'default';
  delete pod.metadata.resourceVersion;
  pod.metadata.annotations = {
    ...pod.metadata.annotations,
    [podConfigAnnotation('hash')]: uid,
    [podConfigAnnotation('source')]: o.source,
  };
  pod.spec.nodeName = o.nodeName;
  pod.spec.tolerations = [...(pod.spec.tolerations ?? []), { operator: 'Exists', effect: 'NoExecute' }];
  delete pod.status;
  return pod;
}

/**
 * The static pods of `--pod-manifest-path`: the file itself, or every regular file of the
 * directory (not recursive; dot files skipped, as Kubernetes). A file that cannot be read or
 * decoded is logged and contributes no pod; a missing path gives none.
 */
export async function readManifestPath(path: string, nodeName: string, logger: ClientLogger): Promise<Pod[]> {
  let files: string[];
  try {
    files = (await stat(path)).isDirectory()
      ? (await readdir(path))
          .filter((f) => !f.startsWith('.'))
          .sort()
          .map((f) => join(path, f))
      : [path];
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const pods: Pod[] = [];
  for (const file of files) {
    try {
      if (!(await stat(file)).isFile() || basename(file).startsWith('.')) continue;
      for (const p of decodeManifests(await readFile(file, 'utf8')))
        pods.push(staticPod(p, { source: 'file', origin: file, nodeName }));
    } catch (e) {
      logger.error('could not process manifest file', { path: file, error: (e as Error).message });
    }
  }
  return pods;
}

/**
 * The static pods at `--manifest-url`, fetched with `--manifest-url-header` headers. Throws
 * when the answer is not 200 or does not decode (Kubernetes keeps the last good set then);
 * an empty body means no pods.
 */
export async function fetchManifestUrl(
  url: string,
  { headers, nodeName, signal }: { headers: Record<string, string[]>; nodeName: string; signal?: AbortSignal },
): Promise<Pod[]> {
  const h = new Headers();
  for (const [k, vs] of Object.entries(headers)) for (const v of vs) h.append(k, v);
  const timeout = AbortSignal.timeout(30_000);
  const res = await fetch(url, { headers: h, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.statusText}: ${text.slice(0, 200)}`);
  return decodeManifests(text).map((p) => staticPod(p, { source: 'http', origin: url, nodeName }));
}
