// --authorization-config: a bad file ends start-up with exit 2 (the built binary); a good one
// builds the chain (Webhook with matchConditions, then RBAC) and is reloaded when it changes,
// keeping the previous config when the new one is invalid.
// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-apiserver.js.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import YAML from 'yaml';
import { startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within 15 s: ${stderr}`));
    }, 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

let dir: string;
let hook: Server;
let kubeconfig: string;
const calls: string[] = [];
/** Users the webhook allows (everyone else: denied). */
const allowed = new Set(['hook-allow', 'plain']);

function config(matchConditions: string[], o: { timeout?: string } = {}): string {
  return YAML.stringify({
    apiVersion: 'apiserver.config.svc.io/v1beta1',
    kind: 'AuthorizationConfiguration',
    authorizers: [
      {
        type: 'Webhook',
        name: 'hook',
        webhook: {
          timeout: o.timeout ?? '2s',
          authorizedTTL: '1ms',
          unauthorizedTTL: '1ms',
          subjectAccessReviewVersion: 'v1',
          matchConditionSubjectAccessReviewVersion: 'v1',
          failurePolicy: 'Deny',
          connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
          matchConditions: matchConditions.map((expression) => ({ expression })),
        },
      },
      { type: 'RBAC', name: 'rbac' },
    ],
  });
}

/** Replaces the file atomically, as editors and mounted config maps do. */
async function replace(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}

beforeAll(async () => {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
  dir = await mkdtemp(join(tmpdir(), 'svc-authz-config-'));
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const user = (JSON.parse(body) as { spec: { user: string } }).spec.user;
      calls.push(user);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'authorization.svc.io/v1',
          kind: 'SubjectAccessReview',
          status: allowed.has(user) ? { allowed: true } : { allowed: false, denied: true, reason: 'no' },
        }),
      );
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  kubeconfig = join(dir, 'hook.svcconfig');
  await writeFile(
    kubeconfig,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'hook', cluster: { server: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/` } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'c', context: { cluster: 'hook', user: 'u' } }],
      'current-context': 'c',
    }),
  );
});

afterAll(async () => {
  hook?.closeAllConnections();
  await new Promise((r) => hook?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('svc-apiserver --authorization-config at start', () => {
  it.each([
    [
      'a timeout over 30s',
      () => config([], { timeout: '31s' }),
      /authorizers\[0\]\.webhook\.timeout: Invalid value: "31s": must be no more than 30s/,
    ],
    ['a CEL syntax error', () => config(['request.user ==']), /matchConditions\[0\]\.expression: Invalid value/],
    [
      'a missing name',
      () =>
        YAML.stringify({
          apiVersion: 'apiserver.config.svc.io/v1beta1',
          kind: 'AuthorizationConfiguration',
          authorizers: [{ type: 'RBAC' }],
        }),
      /authorizers\[0\]\.name: Required value/,
    ],
  ])('exits 2 with one line for %s', async (_what, text, message) => {
    const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, text());
    const r = await run([
      `--authorization-config=${file}`,
      '--store-servers=http://127.0.0.1:1',
      '--secure-port=0',
      `--cert-dir=${join(dir, 'pki')}`,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('Error:')),
    ).toHaveLength(1);
  });

  it('exits 2 when combined with --authorization-mode', async () => {
    const r = await run(['--authorization-config=/nonexistent.yaml', '--authorization-mode=RBAC']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/can not be specified simultaneously with --authorization-mode/);
  });
});

describe('svc-apiserver --authorization-config reload', () => {
  let t: TestApiServer;
  let file: string;
  const podsOf = async (token: string): Promise<number> =>
    (await t.client.withToken(token).get('/api/v1/namespaces/default/pods')).status;

  beforeAll(async () => {
    file = join(dir, 'authz.yaml');
    await writeFile(file, config(["request.user.startsWith('hook-')"]));
    t = await startTestApiServer({
      args: [`--authorization-config=${file}`],
      tokens: ['ha-token,hook-allow,ha', 'hd-token,hook-deny,hd', 'p-token,plain,p'],
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('calls the webhook only when the match conditions hold, RBAC after it', async () => {
    expect(await podsOf('ha-token')).toBe(200);
    expect(await podsOf('hd-token')).toBe(403);
    expect(await podsOf('p-token')).toBe(403);
    expect(calls).not.toContain('plain');
  });

  it('counts decisions per named authorizer in apiserver_authorization_decisions_total', async () => {
    expect(await podsOf('ha-token')).toBe(200);
    expect(await podsOf('hd-token')).toBe(403);
    const text = (await t.client.get('/metrics')).text;
    expect(text).toMatch(
      /apiserver_authorization_decisions_total\{type="Webhook",name="hook",decision="allowed"\} [1-9]/,
    );
    expect(text).toMatch(
      /apiserver_authorization_decisions_total\{type="Webhook",name="hook",decision="denied"\} [1-9]/,
    );
  });

  it('takes a changed file, keeps the old one when the new is invalid', async () => {
    await replace(file, config(["request.user.startsWith('hook-') || request.user == 'plain'"]));
    await waitFor('the reloaded config to send plain to the webhook', async () => (await podsOf('p-token')) === 200);
    await replace(file, config(['request.user =='], { timeout: '31s' }));
    // An invalid file changes nothing; a later valid one still takes effect.
    expect(await podsOf('p-token')).toBe(200);
    await replace(file, config(["request.user == 'hook-allow'"]));
    await waitFor(
      'the next valid config',
      async () => (await podsOf('p-token')) === 403 && (await podsOf('hd-token')) === 403,
    );
    expect(await podsOf('ha-token')).toBe(200);
  });
});
