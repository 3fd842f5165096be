// Legacy service-account tokens of Kubernetes 1.32 against a real API server and etcd (issue 19):
// the API server labels a token Secret with the UTC date of its last use (at most one write a
// day), warns about and audits auto-generated tokens and counts the uses; the
// legacy-service-account-token-cleaner (under --use-service-account-credentials, so with its
// bootstrap RBAC role) marks an unused auto-generated token invalid — the API server then
// answers 401 — keeps a used one, one a pod refers to and a manual one, and deletes the invalid
// one after the period. The cleaner takes the test's clock; serviceaccount-token-controller fills
// the tokens.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  group,
  legacyTokenAuditAnnotation,
  legacyTokenTrackingConfigMap,
  naming,
  serviceAccountTokenSecretKey,
  type ConfigMap,
  type Pod,
  type Secret,
  type ServiceAccount,
} from '@svc/api';
import { ResourceClient, RestClient, loadSvcconfig } from '@svc/client';
import { kubectl, runCommand, startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { TestClock } from './clock-testing.js';
import { makeLegacyTokenCleaner } from './legacy-token-cleaner.js';
import { serviceAccountTokenController } from './serviceaccount-token.js';
import { createNamespace } from './workload-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');
const PERIOD_MS = 3600_000;
const DAY_MS = 86_400_000;

const clock = new TestClock();
/** The clock times at which the cleaner's passes began (each pushed when its pass ended). */
const passes: number[] = [];

let dir: string;
let auditLog: string;
let server: TestApiServer;
let manager: TestControllerManager;
let api: RestClient;

const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const lastUsedKey = serviceAccountTokenSecretKey('legacy-token-last-used');
const invalidSinceKey = serviceAccountTokenSecretKey('legacy-token-invalid-since');

beforeAll(async () => {
  // The dates below are today's: do not start in the last two minutes of a UTC day.
  await waitFor('not just before midnight UTC', () => Date.now() % DAY_MS < DAY_MS - 120_000 || undefined, {
    timeoutMs: 150_000,
    intervalMs: 1000,
  });
  dir = await mkdtemp(join(tmpdir(), 'svc-legacy-token-'));
  const keyFile = join(dir, 'sa.key');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const policy = join(dir, 'audit-policy.yaml');
  await writeFile(policy, `apiVersion: ${group('audit')}/v1\nkind: Policy\nrules:\n- level: Metadata\n`);
  auditLog = join(dir, 'audit.log');
  server = await startTestApiServer({
    args: [
      '--authorization-mode=RBAC',
      `--service-account-key-file=${keyFile}`,
      `--service-account-signing-key-file=${keyFile}`,
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditLog}`,
    ],
  });
  api = new RestClient(loadSvcconfig(server.svcconfigPath));
  manager = await startTestControllerManager(
    server,
    [
      '--controllers=serviceaccount-token,legacy-service-account-token-cleaner',
      `--service-account-private-key-file=${keyFile}`,
      `--legacy-service-account-token-clean-up-period=${PERIOD_MS / 1000}s`,
      '--use-service-account-credentials',
    ],
    {
      controllers: [serviceAccountTokenController, makeLegacyTokenCleaner({ clock, onPass: (at) => passes.push(at) })],
    },
  );
}, 240_000);

afterAll(async () => {
  await manager?.stop();
  api?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const secrets = (ns: string): ResourceClient<Secret> => new ResourceClient<Secret>(api, R.secrets()).namespace(ns);
const accounts = (ns: string): ResourceClient<ServiceAccount> =>
  new ResourceClient<ServiceAccount>(api, R.serviceAccounts()).namespace(ns);
const text = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/** Stock kubectl with `token` instead of the admin credential. */
const asToken = (token: string, args: string[]) =>
  kubectl(server.svcconfigPath, [`--token=${token}`, ...args], { home: dir, timeoutMs: 60_000 });

/**
 * An account `name` whose `secrets` list the token Secrets `listed`, then `before`, then filled
 * token Secrets for `listed` and `manual`.
 */
async function accountWithTokens(
  ns: string,
  o: { name: string; listed: string[]; manual?: string[]; before?: () => Promise<unknown> },
): Promise<Record<string, string>> {
  await accounts(ns).create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: o.name },
    secrets: o.listed.map((name) => ({ name })),
  });
  await o.before?.();
  const tokens: Record<string, string> = {};
  for (const name of [...o.listed, ...(o.manual ?? [])]) {
    await secrets(ns).create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, annotations: { [serviceAccountTokenSecretKey('service-account.name')]: o.name } },
      type: serviceAccountTokenSecretKey('type'),
    });
  }
  for (const name of [...o.listed, ...(o.manual ?? [])]) {
    const s = await waitFor(
      `secret ${ns}/${name} filled`,
      async () => {
        const x = await secrets(ns).find(name);
        return x?.data?.token ? x : undefined;
      },
      { timeoutMs: 30_000 },
    );
    tokens[name] = text(s.data?.token);
  }
  return tokens;
}

async function viewRole(ns: string, account: string): Promise<void> {
  await new ResourceClient(api, { group: group('rbac.authorization'), version: 'v1', resource: 'rolebindings' })
    .namespace(ns)
    .create({
      apiVersion: `${group('rbac.authorization')}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `${account}-view` },
      roleRef: { apiGroup: group('rbac.authorization'), kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace: ns }],
    });
}

/** `kubectl get pods` with `token` until RBAC lets it (the binding reaches the authorizer's cache). */
const listPods = (ns: string, token: string) =>
  waitFor(
    'the token allowed to list pods',
    async () => {
      const r = await asToken(token, ['get', 'pods', '-n', ns]);
      return r.code === 0 ? r : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );

async function metric(name: string): Promise<number> {
  const line = (await server.client.get('/metrics')).text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? 0);
}

/**
 * Moves the clock to `offsetMs` ahead and waits until a cleaner pass that began after the move
 * leaves `done` true; a pass that did not (its cache lagged a write) is followed by another,
 * the clock nudged a second further.
 */
async function passUntil<T>(what: string, o: { offsetMs: number; done: () => Promise<T | undefined> }): Promise<T> {
  let offset = o.offsetMs;
  return waitFor(
    what,
    async () => {
      const at = clock.ahead(offset);
      await waitFor('a cleaner pass', () => passes.some((p) => p >= at) || undefined, { timeoutMs: 20_000 });
      offset += 1000;
      return o.done();
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

describe('legacy service-account tokens', () => {
  it('the API server labels a token with the UTC date of its use, once a day; auto-generated tokens are warned about, audited and counted', async () => {
    const ns = await createNamespace(api, 'legacy-token');
    const tokens = await accountWithTokens(ns, { name: 'robot', listed: ['robot-auto'], manual: ['robot-manual'] });
    await viewRole(ns, 'robot');
    const autoBefore = await metric('serviceaccount_legacy_auto_token_uses_total');
    const manualBefore = await metric('serviceaccount_legacy_manual_token_uses_total');

    const before = utcDate(Date.now());
    const auto = await listPods(ns, tokens['robot-auto'] ?? '');
    expect(auto.stderr).toContain(
      'Warning: Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.',
    );
    const labelled = (await secrets(ns).get('robot-auto')).metadata;
    expect([before, utcDate(Date.now())]).toContain(labelled.labels?.[lastUsedKey]);
    // Used again the same day (once the server's watch cache, which the authenticator reads, has
    // the label): the Secret is not written again.
    await waitFor(
      'the label in the watch cache',
      async () =>
        (await api.request('GET', `/api/v1/namespaces/${ns}/secrets/robot-auto?resourceVersion=0`)).json<Secret>()
          .metadata.resourceVersion === labelled.resourceVersion || undefined,
      { timeoutMs: 10_000 },
    );
    expect((await asToken(tokens['robot-auto'] ?? '', ['get', 'pods', '-n', ns])).code).toBe(0);
    const again = (await secrets(ns).get('robot-auto')).metadata;
    expect(again.labels?.[lastUsedKey]).toBe(labelled.labels?.[lastUsedKey]);
    expect(again.resourceVersion).toBe(labelled.resourceVersion);

    const manual = await asToken(tokens['robot-manual'] ?? '', ['get', 'pods', '-n', ns]);
    expect(manual.code).toBe(0);
    expect(manual.stderr).not.toContain('Warning');
    expect((await secrets(ns).get('robot-manual')).metadata.labels?.[lastUsedKey]).toMatch(/^\d{4}-\d\d-\d\d$/);

    // The second use, within 10 s of the first, is answered from the token cache and not counted
    // again (Kubernetes counts in the authenticator behind its cache too).
    expect(await metric('serviceaccount_legacy_auto_token_uses_total')).toBeGreaterThanOrEqual(autoBefore + 1);
    expect(await metric('serviceaccount_legacy_manual_token_uses_total')).toBeGreaterThanOrEqual(manualBefore + 1);
    // The audit events of the token's requests carry Kubernetes' annotations.
    const user = `system:serviceaccount:${ns}:robot`;
    const annotations = await waitFor(
      'audit events of the token requests',
      async () => {
        const events = (await readFile(auditLog, 'utf8').catch(() => ''))
          .split('\n')
          .filter((l) => l.includes(user))
          .map((l) => JSON.parse(l) as { user?: { username?: string }; annotations?: Record<string, string> })
          .filter((e) => e.user?.username === user);
        const auto = events.find((e) => e.annotations?.[legacyTokenAuditAnnotation('autogenerated-secret')]);
        const man = events.find((e) => e.annotations?.[legacyTokenAuditAnnotation('manual-secret')]);
        return auto && man ? { auto: auto.annotations, manual: man.annotations } : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(annotations.auto?.[legacyTokenAuditAnnotation('autogenerated-secret')]).toBe('robot-auto');
    expect(annotations.manual?.[legacyTokenAuditAnnotation('manual-secret')]).toBe('robot-manual');

    // A TokenReview of the auto-generated token tells its caller the same, as Kubernetes does.
    const review = await api.request('POST', `/apis/authentication.${naming().groupSuffix}/v1/tokenreviews`, {
      body: {
        apiVersion: `authentication.${naming().groupSuffix}/v1`,
        kind: 'TokenReview',
        spec: { token: tokens['robot-auto'] },
      },
    });
    expect(review.status).toBe(201);
    expect(review.json<{ status: { authenticated: boolean; user: { username: string } } }>().status).toMatchObject({
      authenticated: true,
      user: { username: user },
    });
    expect(String(review.headers.warning)).toContain('instead of auto-generated secret-based tokens');
  });

  it('the cleaner marks an unused auto-generated token invalid (then 401), keeps used, pod-referenced and manual ones, and deletes it after the period', async () => {
    // Tracking started a month ago (the API server made the ConfigMap with today's date).
    const { name, dataKey } = legacyTokenTrackingConfigMap();
    const configMaps = new ResourceClient<ConfigMap>(api, R.configMaps()).namespace(naming().systemNamespace);
    const tracking = await waitFor('the tracking ConfigMap', () => configMaps.find(name), { timeoutMs: 30_000 });
    expect(tracking.data?.[dataKey]).toMatch(/^\d{4}-\d\d-\d\d$/);
    await configMaps.patch(name, { data: { [dataKey]: utcDate(Date.now() - 30 * DAY_MS) } }, { type: 'merge' });

    const ns = await createNamespace(api, 'legacy-token');
    const listed = ['bot-used', 'bot-idle', 'bot-mounted'];
    // The pod exists well before the Secrets do (the cleaner's pod cache has it by the first pass).
    const tokens = await accountWithTokens(ns, {
      name: 'bot',
      listed,
      manual: ['bot-manual'],
      before: () =>
        new ResourceClient<Pod>(api, R.pods()).namespace(ns).create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'mounts-token' },
          spec: {
            serviceAccountName: 'bot',
            automountServiceAccountToken: false,
            containers: [{ name: 'c', image: 'busybox' }],
            volumes: [{ name: 'token', secret: { secretName: 'bot-mounted' } }],
          },
        }),
    });
    await viewRole(ns, 'bot');
    await listPods(ns, tokens['bot-used'] ?? '');
    await waitFor(
      'bot-used labelled as used',
      async () => (await secrets(ns).get('bot-used')).metadata.labels?.[lastUsedKey],
      { timeoutMs: 10_000 },
    );
    const labels = async (n: string): Promise<Record<string, string>> =>
      (await secrets(ns).get(n)).metadata.labels ?? {};

    // The period has passed since the Secrets were made: only the idle auto-generated one is marked.
    const invalidSince = await passUntil('bot-idle marked invalid', {
      offsetMs: PERIOD_MS + 60_000,
      done: async () => (await labels('bot-idle'))[invalidSinceKey],
    });
    expect(invalidSince).toMatch(/^\d{4}-\d\d-\d\d$/);
    for (const kept of ['bot-used', 'bot-mounted', 'bot-manual'])
      expect((await labels(kept))[invalidSinceKey]).toBe(undefined);

    const invalidBefore = await metric('serviceaccount_invalid_legacy_auto_token_uses_total');
    const refused = await asToken(tokens['bot-idle'] ?? '', ['get', 'pods', '-n', ns]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Unauthorized');
    expect(await metric('serviceaccount_invalid_legacy_auto_token_uses_total')).toBeGreaterThanOrEqual(
      invalidBefore + 1,
    );
    // The refused use is still recorded as a use.
    expect((await labels('bot-idle'))[lastUsedKey]).toMatch(/^\d{4}-\d\d-\d\d$/);

    // Invalid for longer than the period: deleted. The pod's and the manual token stay unmarked.
    await passUntil('bot-idle deleted', {
      offsetMs: PERIOD_MS + 3 * DAY_MS,
      done: async () => ((await secrets(ns).find('bot-idle')) === undefined ? true : undefined),
    });
    for (const kept of ['bot-mounted', 'bot-manual']) {
      const s = await secrets(ns).get(kept);
      expect(s.metadata.labels?.[invalidSinceKey]).toBe(undefined);
    }
    // Unused for the period by now: the once-used token is marked in its turn.
    await passUntil('bot-used marked invalid', {
      offsetMs: PERIOD_MS + 3 * DAY_MS,
      done: async () => (await labels('bot-used'))[invalidSinceKey],
    });
  });

  it('a clean-up period that is not positive exits 2 with one line', async () => {
    const r = await runCommand(process.execPath, [
      BIN,
      '--controllers=legacy-service-account-token-cleaner',
      '--legacy-service-account-token-clean-up-period=0s',
      `--svcconfig=${server.svcconfigPath}`,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--legacy-service-account-token-clean-up-period: invalid CleanUpPeriod: 0s');
  });
});
