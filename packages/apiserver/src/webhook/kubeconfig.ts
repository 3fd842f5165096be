import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** Where and how to call a webhook, from a kubeconfig-format file. */
export interface WebhookTarget {
  server: string;
  caPem?: string;
  insecureSkipTlsVerify: boolean;
  certPem?: string;
  keyPem?: string;
  token?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function named(list: unknown, name: string | undefined, key: string): Obj | undefined {
  if (!Array.isArray(list)) return undefined;
  const items = list.filter(isObj);
  const item = name === undefined ? items[0] : items.find((x) => x.name === name);
  const v = item?.[key];
  return isObj(v) ? v : undefined;
}

/**
 * Reads a kubeconfig-format webhook file like Kubernetes: the current context's cluster and
 * user (else the first of each); `server`, `certificate-authority(-data)`,
 * `insecure-skip-tls-verify`, `client-certificate(-data)`, `client-key(-data)`, `token`, `tokenFile`.
 * Relative paths start at the file's directory. Throws on anything unusable.
 */
export function loadWebhookKubeconfig(file: string): WebhookTarget {
  const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
  if (!isObj(doc)) throw new Error(`${file}: not a kubeconfig document`);
  const contextName =
    typeof doc['current-context'] === 'string' && doc['current-context'] !== '' ? doc['current-context'] : undefined;
  const context = contextName ? named(doc.contexts, contextName, 'context') : undefined;
  if (contextName && !context) throw new Error(`${file}: context ${JSON.stringify(contextName)} not found`);
  const cluster = named(doc.clusters, typeof context?.cluster === 'string' ? context.cluster : undefined, 'cluster');
  if (!cluster || typeof cluster.server !== 'string' || cluster.server === '')
    throw new Error(`${file}: no cluster with a server`);
  const user = named(doc.users, typeof context?.user === 'string' ? context.user : undefined, 'user') ?? {};
  const base = dirname(file);
  const data = (o: Obj, k: string): string | undefined => {
    const d = o[`${k}-data`];
    if (typeof d === 'string' && d !== '') return Buffer.from(d, 'base64').toString('utf8');
    const p = o[k];
    if (typeof p === 'string' && p !== '') return readFileSync(isAbsolute(p) ? p : join(base, p), 'utf8');
    return undefined;
  };
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(`${file}: server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`${file}: server ${JSON.stringify(cluster.server)} must be http or https`);
  const tokenFile = typeof user.tokenFile === 'string' ? user.tokenFile : undefined;
  const token =
    typeof user.token === 'string' && user.token !== ''
      ? user.token
      : tokenFile
        ? readFileSync(isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile), 'utf8').trim()
        : undefined;
  return {
    server: cluster.server,
    caPem: data(cluster, 'certificate-authority'),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    certPem: data(user, 'client-certificate'),
    keyPem: data(user, 'client-key'),
    token,
  };
}
