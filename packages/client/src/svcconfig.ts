import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { apiServiceEnv, serviceAccountMountPath } from '@svc/api/names';
import { parseConfigText } from './svcconfig-yaml.js';

/** An `exec` credential plugin entry of a user (kubeconfig format). */
export interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
  provideClusterInfo: boolean;
  interactiveMode?: string;
  installHint?: string;
}

/** Everything needed to reach and authenticate to one API server. */
export interface ClientConfig {
  server: string;
  /** PEM of the CA(s) that sign the server's certificate; absent = the host's roots. */
  caPem?: string;
  caData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  namespace: string;
  user: {
    token?: string;
    tokenFile?: string;
    clientCertPem?: string;
    clientKeyPem?: string;
    exec?: ExecConfig;
  };
  /** The cluster entry as written (passed to exec plugins with provideClusterInfo). */
  clusterEntry: Record<string, unknown>;
}

export class SvcconfigError extends Error {}

type Named<T> = { name?: string } & T;

/** The `what` of the entry of `list` named `name` (`{name, <what>: {...}}`); `file` is for errors. */
function named<T>(list: unknown, { what, name }: { what: string; name: string }, file: string): T {
  const items = Array.isArray(list) ? (list as Array<Named<Record<string, unknown>>>) : [];
  const hit = items.find((i) => i.name === name);
  if (!hit) throw new SvcconfigError(`${file}: no ${what} named ${JSON.stringify(name)}`);
  return (hit[what] ?? {}) as T;
}

/**
 * Reads a client configuration file (kubeconfig format): the current (or given) context's
 * cluster and user. Relative file paths are relative to the file's directory; `*-data`
 * values are base64.
 */
export function loadSvcconfig(path: string, opts: { context?: string } = {}): ClientConfig {
  let doc: Record<string, unknown>;
  try {
    doc = (parseConfigText(readFileSync(path, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (e) {
    throw new SvcconfigError(`${path}: ${(e as Error).message}`);
  }
  const base = dirname(resolve(path));
  const file = (p: unknown): string => {
    const s = String(p);
    return readFileSync(isAbsolute(s) ? s : resolve(base, s), 'utf8');
  };
  const b64 = (v: unknown): string => Buffer.from(String(v), 'base64').toString('utf8');
  const contextName = opts.context ?? String(doc['current-context'] ?? '');
  if (!contextName) throw new SvcconfigError(`${path}: no current-context`);
  const ctx = named<{ cluster?: string; user?: string; namespace?: string }>(
    doc.contexts,
    { what: 'context', name: contextName },
    path,
  );
  const cluster = named<Record<string, unknown>>(
    doc.clusters,
    { what: 'cluster', name: String(ctx.cluster ?? '') },
    path,
  );
  const user = ctx.user ? named<Record<string, unknown>>(doc.users, { what: 'user', name: ctx.user }, path) : {};
  if (typeof cluster.server !== 'string' || cluster.server === '')
    throw new SvcconfigError(`${path}: cluster ${ctx.cluster ?? ''} has no server`);
  const cfg: ClientConfig = {
    server: cluster.server,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    namespace: ctx.namespace ?? 'default',
    user: {},
    clusterEntry: cluster,
  };
  if (cluster['certificate-authority-data']) {
    cfg.caData = String(cluster['certificate-authority-data']);
    cfg.caPem = b64(cluster['certificate-authority-data']);
  } else if (cluster['certificate-authority']) {
    cfg.caPem = file(cluster['certificate-authority']);
  }
  if (typeof cluster['tls-server-name'] === 'string') cfg.tlsServerName = cluster['tls-server-name'];
  if (typeof user.token === 'string') cfg.user.token = user.token;
  if (typeof user.tokenFile === 'string')
    cfg.user.tokenFile = isAbsolute(user.tokenFile) ? user.tokenFile : resolve(base, user.tokenFile);
  if (user['client-certificate-data']) cfg.user.clientCertPem = b64(user['client-certificate-data']);
  else if (user['client-certificate']) cfg.user.clientCertPem = file(user['client-certificate']);
  if (user['client-key-data']) cfg.user.clientKeyPem = b64(user['client-key-data']);
  else if (user['client-key']) cfg.user.clientKeyPem = file(user['client-key']);
  const exec = user.exec as Record<string, unknown> | undefined;
  if (exec) {
    if (typeof exec.command !== 'string' || !exec.command)
      throw new SvcconfigError(`${path}: user ${ctx.user ?? ''}: exec needs a command`);
    if (typeof exec.apiVersion !== 'string')
      throw new SvcconfigError(`${path}: user ${ctx.user ?? ''}: exec needs an apiVersion`);
    const command =
      exec.command.includes('/') && !isAbsolute(exec.command) ? resolve(base, exec.command) : exec.command;
    cfg.user.exec = {
      apiVersion: exec.apiVersion,
      command,
      args: Array.isArray(exec.args) ? exec.args.map(String) : [],
      env: Array.isArray(exec.env)
        ? (exec.env as Array<{ name: string; value: string }>).map((e) => ({
            name: String(e.name),
            value: String(e.value),
          }))
        : [],
      provideClusterInfo: exec.provideClusterInfo === true,
      interactiveMode: typeof exec.interactiveMode === 'string' ? exec.interactiveMode : undefined,
      installHint: typeof exec.installHint === 'string' ? exec.installHint : undefined,
    };
  }
  return cfg;
}

/**
 * The configuration path: the flag, else the first path in `SVCCONFIG`, else in `KUBECONFIG`
 * (as kubectl reads it).
 */
export function svcconfigPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag) return flag;
  const fromEnv = env.SVCCONFIG || env.KUBECONFIG;
  return fromEnv ? fromEnv.split(':').find((p) => p !== '') : undefined;
}

/**
 * The configuration of a process running in a pod: the API server from the service
 * environment variables, the pod's service-account token (re-read as it rotates) and CA from
 * the predictable mount path. Throws `SvcconfigError` when not in a cluster.
 */
export function inClusterConfig(env: NodeJS.ProcessEnv = process.env, root = serviceAccountMountPath()): ClientConfig {
  const names = apiServiceEnv();
  const host = env[names.host];
  const port = env[names.port];
  if (!host || !port) throw new SvcconfigError(`not running in a cluster: ${names.host} and ${names.port} must be set`);
  const tokenFile = join(root, 'token');
  let caPem: string;
  let namespace = 'default';
  try {
    readFileSync(tokenFile, 'utf8');
    caPem = readFileSync(join(root, 'ca.crt'), 'utf8');
  } catch (e) {
    throw new SvcconfigError(`in-cluster configuration: ${(e as Error).message}`);
  }
  try {
    namespace = readFileSync(join(root, 'namespace'), 'utf8').trim() || namespace;
  } catch {
    /* optional */
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    server,
    caPem,
    caData: Buffer.from(caPem).toString('base64'),
    insecureSkipTlsVerify: false,
    namespace,
    user: { tokenFile },
    clusterEntry: { server },
  };
}
