// The svcadm binary as a process: help, flag errors (exit 2, one line), and a whole join
// (init cluster-info, token create --print-join-command, join --no-start) against a real API
// server with the bootstrap signer. Needs the build (`tsc -b packages/*/tsconfig.json`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { silentLogger } from '@svc/component-base';
import {
  parseControllerManagerOptions,
  startControllerManager,
  type RunningControllerManager,
} from '@svc/controller-manager';
import { freePort, startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';

const BIN = resolve(__dirname, '../../dist/bin/svcadm.js');

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function svcadm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '', ...env },
    });
    const r = { out: '', err: '' };
    child.stdout.on('data', (d: Buffer) => {
      r.out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      r.err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, ...r });
    });
  });
}

beforeAll(() => {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
});

describe('svcadm binary: flags', () => {
  it('--help exits 0 with the commands; join --help lists its flags', async () => {
    const help = await svcadm(['--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    for (const c of ['token', 'init', 'join']) expect(help.out).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    const j = await svcadm(['join', '--help']);
    expect(j.code).toBe(0);
    for (const f of [
      '--token',
      '--discovery-token-ca-cert-hash',
      '--discovery-token-unsafe-skip-ca-verification',
      '--discovery-timeout',
      '--bootstrap-kubeconfig',
      '--no-start',
    ]) {
      expect(j.out).toContain(f);
    }
    const t = await svcadm(['token', 'create', '--help']);
    for (const f of ['--ttl', '--usages', '--groups', '--description', '--print-join-command', '--svcconfig'])
      expect(t.out).toContain(f);
    expect(t.out).toMatch(/--ttl <duration>[^]*default: 24h0m0s/);
  });

  it.each([
    ['an unknown flag', ['token', 'list', '--nope'], /--nope/],
    ['an unknown command', ['bogus'], /bogus/],
    ['join without a server', ['join'], /server/],
    [
      'join without a token',
      ['join', '127.0.0.1:6443', '--discovery-token-unsafe-skip-ca-verification'],
      /--token is required/,
    ],
    [
      'join with a malformed token',
      ['join', '127.0.0.1:6443', '--token', 'abc', '--discovery-token-unsafe-skip-ca-verification'],
      /was not of the form/,
    ],
    [
      'join with a malformed pin',
      ['join', '127.0.0.1:6443', '--token', 'abcdef.0123456789abcdef', '--discovery-token-ca-cert-hash', 'md5:00'],
      /unknown hash format "md5"/,
    ],
    [
      'join with neither pin nor skip',
      ['join', '127.0.0.1:6443', '--token', 'abcdef.0123456789abcdef'],
      /without --discovery-token-ca-cert-hash can be unsafe/,
    ],
    ['a bad --ttl', ['token', 'create', '--ttl', 'soon'], /--ttl.*soon/],
    [
      'a group outside system:bootstrappers:',
      ['token', 'create', '--groups', 'system:masters'],
      /bootstrap group "system:masters" is invalid/,
    ],
    ['a bad token id to delete', ['token', 'delete', 'ABCDEF'], /didn't match pattern/],
  ])('%s: exit 2 with one line', async (_what, args, mentions) => {
    const r = await svcadm(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Error: /);
    expect(lines[0]).toMatch(mentions);
  });
});

describe('svcadm binary: joining', () => {
  let server: TestApiServer;
  let manager: RunningControllerManager;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcadm-bin-'));
    server = await startTestApiServer({ args: ['--enable-bootstrap-token-auth', '--authorization-mode=RBAC,Node'] });
    manager = await startControllerManager(
      parseControllerManagerOptions(
        [
          '--svcconfig',
          server.svcconfigPath,
          '--bind-address',
          '127.0.0.1',
          '--secure-port',
          String(await freePort()),
          '--cert-dir',
          join(dir, 'cm'),
          '--controllers=bootstrapsigner',
          '--leader-elect=false',
        ],
        { quiet: true },
      ),
      { logger: silentLogger },
    );
  });
  afterAll(async () => {
    await manager?.shutdown();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('init cluster-info, token create --print-join-command, then the printed join succeeds; a wrong pin exits 1', async () => {
    expect((await svcadm(['init', 'cluster-info', '--svcconfig', server.svcconfigPath])).code).toBe(0);
    // The admin svcconfig may come from KUBECONFIG, as kubectl reads it.
    const created = await svcadm(['token', 'create', '--print-join-command', '--description', 'binary test'], {
      KUBECONFIG: server.svcconfigPath,
    });
    expect(created).toMatchObject({ code: 0, err: '' });
    const words = created.out.trim().split(' ');
    expect(words.slice(0, 2)).toEqual(['svcadm', 'join']);
    const id = words[4]?.slice(0, 6) ?? '';
    await waitFor('the signature', async () => {
      const cm = (await server.client.get('/api/v1/namespaces/svc-public/configmaps/cluster-info')).json<{
        data: Record<string, string>;
      }>();
      return Boolean(cm.data[`jws-kubeconfig-${id}`]);
    });
    const path = join(dir, 'bootstrap.conf');
    const joined = await svcadm([...words.slice(1), '--no-start', '--bootstrap-kubeconfig', path]);
    expect(joined).toMatchObject({
      code: 0,
      out: `[join] wrote the bootstrap svcconfig for ${server.server.url} to ${path}\n`,
    });
    expect(await readFile(path, 'utf8')).toContain(`token: ${words[4] ?? ''}`);

    const wrongPin = words.map((w) => (w.startsWith('sha256:') ? `sha256:${'0'.repeat(64)}` : w));
    const refused = await svcadm([
      ...wrongPin.slice(1),
      '--no-start',
      '--bootstrap-kubeconfig',
      join(dir, 'refused.conf'),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('');
    expect(refused.err.trimEnd().split('\n').at(-1)).toMatch(
      /^Error: cluster CA found in the cluster-info ConfigMap is invalid: none of the public keys "sha256:[0-9a-f]{64}" are pinned$/,
    );
    expect(existsSync(join(dir, 'refused.conf'))).toBe(false);
  });
});
