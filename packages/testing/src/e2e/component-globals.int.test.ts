// Feature gates, --emulated-version and the metrics flags (issue 18) across the component
// binaries: bad values exit 2 with one line; the API server's /metrics honours the disabled,
// hidden and allow-list flags and marks stability classes; gate warnings are logged once.
// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs each package's dist/bin.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseApiServerOptions, startApiServer, type RunningApiServer } from '@svc/apiserver';
import type { Logger } from '@svc/component-base';
import { startEtcd, type EtcdHandle } from '../etcd.js';
import { HttpsClient } from '../https-client.js';
import { runCommand } from '../run-command.js';
import { freePort } from '../free-port.js';
import { svcconfigYaml } from '../svcconfig.js';
import { spawnProcess, type TestProcess } from '../test-process.js';
import { waitFor } from '../wait.js';
import { request as httpsRequest } from 'node:https';

/** GET over HTTPS from a component's self-signed secure port: [status, body]. */
function getInsecure(url: string): Promise<[number, string]> {
  return new Promise((resolveGet, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolveGet([res.statusCode ?? 0, body]));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const BINS = {
  apiserver: resolve(__dirname, '../../../apiserver/dist/bin/svc-apiserver.js'),
  'controller-manager': resolve(__dirname, '../../../controller-manager/dist/bin/svc-controller-manager.js'),
  scheduler: resolve(__dirname, '../../../scheduler/dist/bin/svc-scheduler.js'),
  svclet: resolve(__dirname, '../../../svclet/dist/bin/svclet.js'),
};
type Binary = keyof typeof BINS;

beforeAll(() => {
  for (const bin of Object.values(BINS))
    if (!existsSync(bin))
      throw new Error(`${bin} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
});

describe('bad values exit 2 with one line naming the flag', () => {
  const everywhere: [string, string[], RegExp][] = [
    [
      'a GA gate set to false',
      ['--feature-gates=ServiceAccountTokenJTI=false'],
      /cannot set feature gate ServiceAccountTokenJTI to false, feature is locked to true/,
    ],
    ['an unknown gate', ['--feature-gates=NoSuchGate=true'], /unrecognized feature gate: NoSuchGate/],
    [
      'hidden metrics of another release',
      ['--show-hidden-metrics-for-version=1.30'],
      /--show-hidden-metrics-for-version must be omitted or have the value '1.31'/,
    ],
    [
      'an allow-list key without a label',
      ['--allow-metric-labels=apiserver_request_total=GET'],
      /--allow-metric-labels must have/,
    ],
    [
      'a bad metric name',
      ['--disabled-metrics=not-a-metric'],
      /--disabled-metrics: "not-a-metric" is not a valid metric name/,
    ],
    [
      'a missing manifest',
      ['--allow-metric-labels-manifest=/nonexistent/allow.yaml'],
      /--allow-metric-labels-manifest: \/nonexistent\/allow.yaml/,
    ],
  ];
  const controlPlane: [string, string[], RegExp][] = [
    [
      'an emulated version out of range',
      ['--emulated-version=svc=1.30'],
      /--emulated-version.*emulation version 1.30 is not between \[1.31\]/,
    ],
    ["the binary's own version", ['--emulated-version=1.32'], /--emulated-version.*1.32/],
    ['another component', ['--emulated-version=wardle=1.31'], /--emulated-version.*component not registered: wardle/],
    [
      'a gate for another component',
      ['--feature-gates=wardle:Foo=true'],
      /--feature-gates.*component not registered: wardle/,
    ],
    [
      'a gate that 1.31 did not have',
      ['--emulated-version=svc=1.31', '--feature-gates=MutatingAdmissionPolicy=true'],
      /feature gate MutatingAdmissionPolicy does not exist at emulated version 1.31/,
    ],
  ];
  const cases: [string, { bin: Binary; args: string[]; mentions: RegExp }][] = [];
  for (const bin of Object.keys(BINS) as Binary[]) {
    for (const [what, args, mentions] of everywhere) cases.push([`${bin}: ${what}`, { bin, args, mentions }]);
    if (bin !== 'svclet')
      for (const [what, args, mentions] of controlPlane) cases.push([`${bin}: ${what}`, { bin, args, mentions }]);
  }

  it.each(cases)('%s', async (_what, { bin, args, mentions }) => {
    const r = await runCommand(process.execPath, [BINS[bin], ...args], { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(mentions);
  });
});

describe("the API server's /metrics under the metrics flags", () => {
  let etcd: EtcdHandle;
  let dir: string;
  let server: RunningApiServer;
  let client: HttpsClient;
  let token: string;
  const warnings: string[] = [];
  const components: TestProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'component-globals-'));
    etcd = await startEtcd();
    token = randomBytes(16).toString('hex');
    await writeFile(join(dir, 'tokens.csv'), `${token},admin,admin-uid,"system:masters"\n`);
    const manifest = join(dir, 'allow.yaml');
    await writeFile(manifest, '"apiserver_request_total,verb": "GET,LIST"\n');
    const opts = parseApiServerOptions(
      [
        `--store-servers=${etcd.endpoints.join(',')}`,
        `--store-prefix=/registry-${randomBytes(4).toString('hex')}`,
        '--secure-port=0',
        '--bind-address=127.0.0.1',
        `--cert-dir=${join(dir, 'pki')}`,
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        '--disabled-metrics=apiserver_storage_objects',
        '--show-hidden-metrics-for-version=1.31',
        `--allow-metric-labels-manifest=${manifest}`,
        '--emulated-version=svc=1.31',
        '--feature-gates=KMSv1=false,AppArmor=true',
        '--feature-gates=svc:KMSv1=false',
      ],
      { quiet: true },
    );
    const logger: Logger = {
      info: () => undefined,
      warn: (m) => {
        warnings.push(m);
      },
      error: () => undefined,
      v: () => ({ info: () => undefined }),
      with: () => logger,
    };
    server = await startApiServer(opts, { logger });
    await server.started;
    client = new HttpsClient(server.url, server.caPem, { token });
  });

  afterAll(async () => {
    for (const c of components) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(components.map((c) => c.exited));
    await server?.shutdown();
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('records verbs outside the allow-list as unexpected', async () => {
    expect((await client.request('GET', '/api/v1/namespaces')).status).toBe(200);
    const created = await client.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'metrics-allow-list' } },
    });
    expect(created.status).toBe(201);
    const text = (await client.request('GET', '/metrics')).text;
    expect(text).toMatch(/^apiserver_request_total\{[^}]*verb="LIST"[^}]*\} \d+$/m);
    expect(text).toMatch(/^apiserver_request_total\{[^}]*verb="unexpected"[^}]*resource="configmaps"[^}]*\} \d+$/m);
    expect(text).not.toMatch(/^apiserver_request_total\{[^}]*verb="POST"/m);
  });

  it('marks stability classes, leaves disabled metrics out and shows hidden ones when asked', async () => {
    const text = (await client.request('GET', '/metrics')).text;
    expect(text).toMatch(/^# HELP apiserver_request_total \[STABLE\] /m);
    expect(text).toMatch(/^# HELP etcd_request_duration_seconds \[ALPHA\] /m);
    expect(text).not.toMatch(/^# HELP apiserver_storage_objects /m);
    expect(text).toMatch(
      /^# HELP apiserver_encryption_config_controller_automatic_reload_failures_total \[ALPHA\] \(Deprecated from 1\.30\) /m,
    );
    expect(text).toMatch(/^disabled_metrics_total 1$/m);
    expect(text).toMatch(/^hidden_metrics_total 0$/m);
    expect(text).toMatch(/^# HELP process_cpu_seconds_total Total user and system CPU/m);
  });

  it('warns once for each GA or deprecated gate set', () => {
    expect(warnings.filter((w) => w.startsWith('Setting '))).toEqual([
      'Setting deprecated feature gate KMSv1=false. It will be removed in a future release.',
      'Setting GA feature gate AppArmor=true. It will be removed in a future release.',
    ]);
  });

  it.each<[Binary]>([['controller-manager'], ['scheduler']])(
    "svc-%s's /metrics follows the same flags and warns once for a deprecated gate",
    async (bin) => {
      const svcconfig = join(dir, 'admin.svcconfig');
      await writeFile(svcconfig, svcconfigYaml({ server: server.url, caPem: server.caPem, token }));
      const port = await freePort();
      const c = spawnProcess(bin, 'node', [
        BINS[bin],
        `--svcconfig=${svcconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${join(dir, `${bin}-pki`)}`,
        '--leader-elect=false',
        '--authorization-always-allow-paths=/metrics',
        '--disabled-metrics=workqueue_depth',
        '--allow-metric-labels=rest_client_requests_total,method=GET',
        '--feature-gates=KMSv1=false',
        '--feature-gates=svc:KMSv1=false',
      ]);
      components.push(c);
      const text = await waitFor(
        `${bin} /metrics with a GET counted`,
        async () => {
          const [status, body] = await getInsecure(`https://127.0.0.1:${port}/metrics`);
          return status === 200 && /^rest_client_requests_total\{[^}]*method="GET"/m.test(body) ? body : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(text).toMatch(/^# HELP rest_client_requests_total \[ALPHA\] /m);
      expect(text).not.toMatch(/^workqueue_depth/m);
      expect(text).toMatch(/^disabled_metrics_total 1$/m);
      const methods = [...text.matchAll(/^rest_client_requests_total\{[^}]*method="([^"]*)"/gm)].map((m) => m[1]);
      expect(new Set(methods).size).toBeGreaterThan(0);
      for (const m of methods) expect(['GET', 'unexpected']).toContain(m);
      const warned = c.log.text.split('\n').filter((l) => l.includes('Setting deprecated feature gate KMSv1=false'));
      expect(warned).toHaveLength(1);
      c.child.kill('SIGTERM');
      expect(await c.exited).toBe(0);
    },
  );
});
