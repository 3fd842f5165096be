// --use-service-account-credentials against a real API server and etcd with RBAC: the manager
// runs as its own user (system:<controller-manager>, whose role cannot create ReplicaSets or
// pods), and each controller calls the API as its service account of the system namespace
// through TokenRequest tokens, as Kubernetes' controller client builder does.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { naming } from '@svc/api';
import { RestClient, loadSvcconfig } from '@svc/client';
import {
  HttpsClient,
  createDefaultServiceAccount,
  createNamespace,
  startTestApiServer,
  svcconfigYaml,
  waitFor,
  type TestApiServer,
} from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from './cm-testing.js';
import { ServiceAccountTokenSource } from './service-account-credentials.js';

let dir: string;
let server: TestApiServer;
let manager: TestControllerManager;
let cmClient: RestClient;
const cmToken = randomBytes(16).toString('hex');
const cmUser = `system:${naming().controllerManagerName}`;
let ns: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sa-credentials-'));
  const key = join(dir, 'sa.key');
  await writeFile(
    key,
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }),
  );
  server = await startTestApiServer({
    args: [
      '--service-account-signing-key-file',
      key,
      '--service-account-key-file',
      key,
      '--authorization-mode',
      'RBAC',
    ],
    tokens: [`${cmToken},${cmUser},cm-uid,""`],
  });
  const cmConfig = join(dir, 'controller-manager.svcconfig');
  await writeFile(
    cmConfig,
    svcconfigYaml({ server: server.server.url, caPem: server.server.caPem, token: cmToken, user: 'cm' }),
  );
  cmClient = new RestClient(loadSvcconfig(cmConfig));
  manager = await startTestControllerManager(server, [
    '--svcconfig',
    cmConfig,
    '--use-service-account-credentials',
    '--controllers=deployment,replicaset',
  ]);
  ns = await createNamespace(server.client, 'sa-credentials');
  await createDefaultServiceAccount(server.client, ns);
});

afterAll(async () => {
  await manager?.stop();
  cmClient?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('--use-service-account-credentials', () => {
  it('runs each controller as its service account: a Deployment gets its ReplicaSet and pods though the manager itself may not create them', async () => {
    // The manager's own user may not create ReplicaSets or pods (Kubernetes' role for it).
    for (const path of [`/apis/apps/v1/namespaces/${ns}/replicasets`, `/api/v1/namespaces/${ns}/pods`]) {
      const denied = await cmClient.request('POST', path, { body: { metadata: { name: 'x' } } });
      expect(denied.status).toBe(403);
    }
    const created = await server.client.post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      },
    });
    expect(created.status).toBe(201);
    const pods = await waitFor('two pods of the Deployment', async () => {
      const r = await server.client.get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
      const items = r.json<{ items: unknown[] }>().items;
      return items.length === 2 ? items : undefined;
    });
    expect(pods).toHaveLength(2);
    // The accounts were made in the system namespace on first use.
    const { systemNamespace } = naming();
    for (const account of ['deployment-controller', 'replicaset-controller']) {
      const r = await server.client.get(`/api/v1/namespaces/${systemNamespace}/serviceaccounts/${account}`);
      expect(r.status).toBe(200);
    }
  });

  it('hands out one token per account until it is invalidated, and the token authenticates as the service account', async () => {
    const root = new RestClient(loadSvcconfig(server.svcconfigPath));
    try {
      const source = new ServiceAccountTokenSource(root, 'job-controller');
      const [a, b] = await Promise.all([source.token(), source.token()]);
      expect(a).toBe(b);
      expect(await source.token()).toBe(a);
      source.invalidate();
      const fresh = await source.token();
      expect(fresh).not.toBe(a);
      const asAccount = new HttpsClient(server.server.url, server.server.caPem, { token: fresh });
      const review = await asAccount.post(`/apis/authentication.${naming().groupSuffix}/v1/selfsubjectreviews`, {
        apiVersion: `authentication.${naming().groupSuffix}/v1`,
        kind: 'SelfSubjectReview',
      });
      expect(review.status).toBe(201);
      expect(review.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username).toBe(
        `system:serviceaccount:${naming().systemNamespace}:job-controller`,
      );
    } finally {
      root.close();
    }
  });

  it('reports a clear error when the manager may not request tokens', async () => {
    const stranger = new RestClient({ ...loadSvcconfig(server.svcconfigPath), user: { token: 'not-a-valid-token' } });
    try {
      const source = new ServiceAccountTokenSource(stranger, 'job-controller');
      await expect(source.token()).rejects.toThrow(/cannot read service account .*\/job-controller: HTTP 401/);
    } finally {
      stranger.close();
    }
  });
});
