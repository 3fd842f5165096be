import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseApiServerOptions, startApiServer, silentLogger, type RunningApiServer } from '@svc/apiserver';
import { startEtcd, type EtcdHandle } from './etcd.js';
import { HttpsClient } from './https-client.js';
import { svcconfigYaml } from './svcconfig.js';

export interface TestApiServer {
  server: RunningApiServer;
  etcd: EtcdHandle;
  /** Admin client (token in group system:masters). */
  client: HttpsClient;
  adminToken: string;
  /** Path of an admin svcconfig for kubectl. */
  svcconfigPath: string;
  dir: string;
  /** The `--store-prefix` this server uses (unique per server). */
  storePrefix: string;
  stop(): Promise<void>;
}

export interface TestApiServerOptions {
  /** Extra svc-apiserver flags. */
  args?: string[];
  /** Share an etcd started elsewhere (it is not stopped then). */
  etcd?: EtcdHandle;
  /** Extra lines for the token file (`token,user,uid,"groups"`). */
  tokens?: string[];
}

/**
 * Starts a real etcd (unless given) and svc-apiserver in this process on a free port over
 * HTTPS, with an admin token, and waits until the system namespaces exist.
 */
export async function startTestApiServer(o: TestApiServerOptions = {}): Promise<TestApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-apiserver-'));
  const etcd = o.etcd ?? (await startEtcd());
  const adminToken = randomBytes(16).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, [`${adminToken},admin,admin-uid,"system:masters"`, ...(o.tokens ?? [])].join('\n') + '\n');
  const storePrefix = `/registry-${randomBytes(4).toString('hex')}`;
  const opts = parseApiServerOptions(
    [
      '--store-servers',
      etcd.endpoints.join(','),
      '--store-prefix',
      storePrefix,
      '--secure-port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--cert-dir',
      join(dir, 'pki'),
      '--token-auth-file',
      tokenFile,
      ...(o.args ?? []),
    ],
    { quiet: true },
  );
  let server: RunningApiServer | undefined;
  try {
    server = await startApiServer(opts, { logger: silentLogger });
    await server.started;
  } catch (e) {
    // A server that did not start must not leave itself or its etcd running (that keeps Jest from exiting).
    await server?.shutdown().catch(() => undefined);
    if (!o.etcd) await etcd.stop();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const svcconfigPath = join(dir, 'admin.svcconfig');
  await writeFile(svcconfigPath, svcconfigYaml({ server: server.url, caPem: server.caPem, token: adminToken }));
  const client = new HttpsClient(server.url, server.caPem, { token: adminToken });
  return {
    server,
    etcd,
    client,
    adminToken,
    svcconfigPath,
    dir,
    storePrefix,
    stop: async () => {
      await server.shutdown();
      if (!o.etcd) await etcd.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
