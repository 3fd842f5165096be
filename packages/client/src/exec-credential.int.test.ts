import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestApiServer, type TestApiServer } from '@svc/testing';
import { loadSvcconfig, RestClient, ExecCredentialError } from './index.js';

// Exec credential plugins as the spec describes them, against a real server. The plugin is
// a script the test writes: it logs each run, and hands out the tokens it is given in turn.
let t: TestApiServer;
let dir: string;
beforeAll(async () => {
  t = await startTestApiServer({ tokens: ['plugin-token,plugin-user,pu-1,"dev"'] });
  dir = await mkdtemp(join(tmpdir(), 'svc-exec-'));
});
afterAll(async () => {
  await t.stop();
  await rm(dir, { recursive: true, force: true });
});

let seq = 0;

/** A plugin handing out `tokens` one per run (the last one repeatedly), with an optional expiry. */
async function plugin(opts: {
  tokens: string[];
  expiresInSeconds?: number;
  apiVersion?: string;
  provideClusterInfo?: boolean;
  output?: string;
}): Promise<{ config: string; runs: () => Promise<string[]> }> {
  const n = ++seq;
  const log = join(dir, `runs-${n}.log`);
  const script = join(dir, `plugin-${n}.js`);
  await writeFile(log, '');
  await writeFile(
    script,
    `#!/usr/bin/env node
const fs = require('fs');
const runs = fs.readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter(Boolean).length;
fs.appendFileSync(${JSON.stringify(log)}, (process.env.SVC_EXEC_INFO || 'none') + '\\n');
const tokens = ${JSON.stringify(opts.tokens)};
const status = { token: tokens[Math.min(runs, tokens.length - 1)] };
${opts.expiresInSeconds !== undefined ? `status.expirationTimestamp = new Date(Date.now() + ${opts.expiresInSeconds * 1000}).toISOString();` : ''}
process.stdout.write(${opts.output ? JSON.stringify(opts.output) : `JSON.stringify({ apiVersion: ${JSON.stringify(opts.apiVersion ?? 'client.authentication.svc.io/v1')}, kind: 'ExecCredential', status })`});
`,
  );
  await chmod(script, 0o755);
  const config = join(dir, `svcconfig-${n}.yaml`);
  await writeFile(
    config,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'plugin',
      clusters: [
        {
          name: 'svc',
          cluster: {
            server: t.server.url,
            'certificate-authority-data': Buffer.from(t.server.caPem).toString('base64'),
          },
        },
      ],
      users: [
        {
          name: 'plugin',
          user: {
            exec: {
              apiVersion: opts.apiVersion ?? 'client.authentication.svc.io/v1',
              command: script,
              provideClusterInfo: !!opts.provideClusterInfo,
            },
          },
        },
      ],
      contexts: [{ name: 'plugin', context: { cluster: 'svc', user: 'plugin' } }],
    }),
  );
  return { config, runs: async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean) };
}

const whoami = async (c: RestClient): Promise<{ status: number; user?: string }> => {
  const r = await c.request('POST', '/apis/authentication.svc.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
  });
  return {
    status: r.status,
    user:
      r.status === 201 || r.status === 200
        ? r.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username
        : undefined,
  };
};

it('runs the plugin once and reuses its token until it expires', async () => {
  const p = await plugin({ tokens: ['plugin-token'], expiresInSeconds: 3600 });
  const c = new RestClient(loadSvcconfig(p.config));
  for (let i = 0; i < 3; i++) expect(await whoami(c)).toEqual({ status: 201, user: 'plugin-user' });
  expect(await p.runs()).toHaveLength(1);
  c.close();
});

it('runs the plugin again once the credential has expired', async () => {
  const p = await plugin({ tokens: ['plugin-token'], expiresInSeconds: -1 });
  const c = new RestClient(loadSvcconfig(p.config));
  expect((await whoami(c)).status).toBe(201);
  expect((await whoami(c)).status).toBe(201);
  expect(await p.runs()).toHaveLength(2);
  c.close();
});

it('without an expiry, keeps the token until a 401, then runs the plugin and retries once', async () => {
  const p = await plugin({ tokens: ['revoked-token', 'plugin-token'] });
  const c = new RestClient(loadSvcconfig(p.config));
  expect(await whoami(c)).toEqual({ status: 201, user: 'plugin-user' });
  expect(await whoami(c)).toEqual({ status: 201, user: 'plugin-user' });
  expect(await p.runs()).toHaveLength(2);
  c.close();
});

it('passes cluster information in SVC_EXEC_INFO when provideClusterInfo is set', async () => {
  const p = await plugin({ tokens: ['plugin-token'], provideClusterInfo: true });
  const c = new RestClient(loadSvcconfig(p.config));
  expect((await whoami(c)).status).toBe(201);
  const info = JSON.parse((await p.runs())[0] ?? '{}') as {
    kind: string;
    spec: { interactive: boolean; cluster: { server: string; 'certificate-authority-data': string } };
  };
  expect(info.kind).toBe('ExecCredential');
  expect(info.spec.interactive).toBe(false);
  expect(info.spec.cluster.server).toBe(t.server.url);
  expect(Buffer.from(info.spec.cluster['certificate-authority-data'], 'base64').toString()).toBe(t.server.caPem);
  c.close();
});

it('accepts the v1beta1 document', async () => {
  const p = await plugin({ tokens: ['plugin-token'], apiVersion: 'client.authentication.svc.io/v1beta1' });
  const c = new RestClient(loadSvcconfig(p.config));
  expect((await whoami(c)).status).toBe(201);
  c.close();
});

it.each([
  ['output that is not JSON', 'not json'],
  [
    'a different kind',
    JSON.stringify({ apiVersion: 'client.authentication.svc.io/v1', kind: 'Secret', status: { token: 'x' } }),
  ],
  [
    'a different apiVersion than configured',
    JSON.stringify({
      apiVersion: 'client.authentication.svc.io/v1beta1',
      kind: 'ExecCredential',
      status: { token: 'x' },
    }),
  ],
  [
    'no token or certificate',
    JSON.stringify({ apiVersion: 'client.authentication.svc.io/v1', kind: 'ExecCredential', status: {} }),
  ],
  [
    'a bad expirationTimestamp',
    JSON.stringify({
      apiVersion: 'client.authentication.svc.io/v1',
      kind: 'ExecCredential',
      status: { token: 'x', expirationTimestamp: 'soon' },
    }),
  ],
])('refuses plugin %s with a clear error', async (_what, output) => {
  const p = await plugin({ tokens: ['x'], output });
  const c = new RestClient(loadSvcconfig(p.config));
  await expect(whoami(c)).rejects.toBeInstanceOf(ExecCredentialError);
  c.close();
});
