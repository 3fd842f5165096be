// serviceaccount-token-controller against a real API server and etcd (issue 19): a legacy token
// Secret gets data.token (signed with --service-account-private-key-file), ca.crt
// (--root-ca-file), namespace and the account's uid; the token authenticates stock kubectl
// against the API server (started with the matching --service-account-key-file, RBAC on), where
// RBAC decides 403 or 200; the Secret goes with its account, or when it names none; bad key and CA
// files stop the binary with exit 2.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import {
  group,
  isInvalid,
  legacyServiceAccountToken,
  serviceAccountTokenSecretKey,
  type Secret,
  type ServiceAccount,
} from '@svc/api';
import { ResourceClient, RestClient, loadSvcconfig } from '@svc/client';
import { createTestCa, kubectl, runCommand, startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { loadLegacyTokenKey } from './serviceaccount-token.js';
import { createNamespace } from './workload-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');

let dir: string;
let server: TestApiServer;
let manager: TestControllerManager;
let api: RestClient;
let caPem: string;
let keyFile: string;
let caFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sa-token-'));
  keyFile = join(dir, 'sa.key');
  caFile = join(dir, 'root-ca.crt');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  caPem = (await createTestCa('sa-token-root')).certPem;
  await writeFile(caFile, caPem);
  server = await startTestApiServer({ args: ['--authorization-mode=RBAC', `--service-account-key-file=${keyFile}`] });
  api = new RestClient(loadSvcconfig(server.svcconfigPath));
  manager = await startTestControllerManager(server, [
    '--controllers=serviceaccount-token',
    `--service-account-private-key-file=${keyFile}`,
    `--root-ca-file=${caFile}`,
  ]);
});

afterAll(async () => {
  await manager?.stop();
  api?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const secrets = (ns: string): ResourceClient<Secret> => new ResourceClient<Secret>(api, R.secrets()).namespace(ns);
const accounts = (ns: string): ResourceClient<ServiceAccount> =>
  new ResourceClient<ServiceAccount>(api, R.serviceAccounts()).namespace(ns);
const text = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');

function tokenSecret(name: string, account: string): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, annotations: { [serviceAccountTokenSecretKey('service-account.name')]: account } },
    type: serviceAccountTokenSecretKey('type'),
  };
}

const filled = (ns: string, name: string): Promise<Secret> =>
  waitFor(
    `secret ${ns}/${name} filled`,
    async () => {
      const s = await secrets(ns).find(name);
      return s?.data?.token ? s : undefined;
    },
    { timeoutMs: 30_000 },
  );

const gone = (ns: string, name: string): Promise<true> =>
  waitFor(`secret ${ns}/${name} deleted`, async () => (await secrets(ns).find(name)) === undefined || undefined, {
    timeoutMs: 30_000,
  });

/** Stock kubectl with `token` instead of the admin credential (same server and CA). */
const asToken = (token: string, args: string[]) =>
  kubectl(server.svcconfigPath, [`--token=${token}`, ...args], { home: dir, timeoutMs: 60_000 });

describe('serviceaccount-token-controller', () => {
  it('fills a token Secret with a legacy token that authenticates stock kubectl, RBAC deciding 403 or 200', async () => {
    const ns = await createNamespace(api, 'satoken');
    const sa = await accounts(ns).create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    await secrets(ns).create(tokenSecret('robot-token', 'robot'));
    const s = await filled(ns, 'robot-token');
    expect(s.metadata.annotations?.[serviceAccountTokenSecretKey('service-account.uid')]).toBe(sa.metadata.uid);
    expect(text(s.data?.namespace)).toBe(ns);
    expect(text(s.data?.['ca.crt'])).toBe(caPem);
    const token = text(s.data?.token);
    const legacy = legacyServiceAccountToken();
    expect(decodeProtectedHeader(token).alg).toBe('RS256');
    const claims = decodeJwt(token);
    expect(claims).toEqual({
      iss: legacy.issuer,
      sub: `system:serviceaccount:${ns}:robot`,
      [legacy.claim('namespace')]: ns,
      [legacy.claim('secret.name')]: 'robot-token',
      [legacy.claim('service-account.name')]: 'robot',
      [legacy.claim('service-account.uid')]: sa.metadata.uid,
    });

    const denied = await asToken(token, ['get', 'pods', '-n', ns]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      `pods is forbidden: User "system:serviceaccount:${ns}:robot" cannot list resource "pods" in API group "" in the namespace "${ns}"`,
    );
    await new ResourceClient(api, {
      group: group('rbac.authorization'),
      version: 'v1',
      resource: 'rolebindings',
    })
      .namespace(ns)
      .create({
        apiVersion: `${group('rbac.authorization')}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'robot-view' },
        roleRef: { apiGroup: group('rbac.authorization'), kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: ns }],
      });
    const allowed = await waitFor(
      'the token allowed to list pods',
      async () => {
        const r = await asToken(token, ['get', 'pods', '-n', ns]);
        return r.code === 0 ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(allowed.stderr).toContain('No resources found');

    // Signed with the right key but not the Secret's copy: refused (the API server's lookup).
    const key = loadLegacyTokenKey(keyFile);
    const other = await new SignJWT({ ...claims, iat: 1 })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .sign(key.privateKey);
    const forged = await asToken(other, ['get', 'pods', '-n', ns]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain('Unauthorized');

    // The account goes: its token Secret goes, and the token stops working.
    await accounts(ns).delete('robot');
    await gone(ns, 'robot-token');
    // Once the API server's token cache lets go of the last success (Kubernetes' 10 s).
    const after = await waitFor(
      "the deleted account's token to be refused",
      async () => {
        const r = await asToken(token, ['get', 'pods', '-n', ns]);
        return r.code === 1 && r;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(after.stderr).toContain('Unauthorized');
  });

  it('deletes a token Secret naming no account, or an account of another uid', async () => {
    const ns = await createNamespace(api, 'satoken');
    await secrets(ns).create(tokenSecret('nobody-token', 'nobody'));
    await gone(ns, 'nobody-token');

    await accounts(ns).create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } });
    const stale = tokenSecret('stale-token', 'bot');
    stale.metadata.annotations = {
      ...stale.metadata.annotations,
      [serviceAccountTokenSecretKey('service-account.uid')]: '00000000-0000-0000-0000-000000000000',
    };
    await secrets(ns).create(stale);
    await gone(ns, 'stale-token');
    // Other Secrets are not the controller's.
    await secrets(ns).create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain' }, stringData: { a: 'b' } });
    await secrets(ns).create(tokenSecret('bot-token', 'bot'));
    await filled(ns, 'bot-token');
    expect(text((await secrets(ns).get('plain')).data?.a)).toBe('b');
  });

  it('refuses a token Secret without the account annotation (422, as Kubernetes)', async () => {
    const ns = await createNamespace(api, 'satoken');
    const bad = tokenSecret('anon', 'x');
    bad.metadata.annotations = {};
    const e = await secrets(ns)
      .create(bad)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(isInvalid(e)).toBe(true);
    expect(String((e as Error).message)).toContain(
      `metadata.annotations[${serviceAccountTokenSecretKey('service-account.name')}]: Required value`,
    );
  });

  it('a private key or root CA file that does not load exits 2 with one line', async () => {
    const badKey = await runCommand(process.execPath, [
      BIN,
      '--controllers=serviceaccount-token',
      `--service-account-private-key-file=${caFile}`,
    ]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr.trim().split('\n')).toHaveLength(1);
    expect(badKey.stderr).toContain(
      `serviceaccount-token-controller: error reading key for service account token controller: ${caFile}`,
    );
    const badCa = await runCommand(process.execPath, [
      BIN,
      '--controllers=serviceaccount-token',
      `--service-account-private-key-file=${keyFile}`,
      `--root-ca-file=${keyFile}`,
    ]);
    expect(badCa.code).toBe(2);
    expect(badCa.stderr.trim().split('\n')).toHaveLength(1);
    expect(badCa.stderr).toContain(`serviceaccount-token-controller: error parsing root-ca-file at ${keyFile}`);
  });
});
