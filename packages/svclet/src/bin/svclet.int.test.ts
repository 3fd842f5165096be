// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svclet.js as a real process.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts, waitFor } from '@svc/testing';
import { svcletConfigYaml } from '../svclet-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svclet.js');

describe('the svclet binary', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svclet-bin-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints its version; a bad flag or configuration file exits 2 with one line', async () => {
    const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    expect([version.status, version.stdout]).toEqual([0, 'svclet v1.32.0-svc.0.1.0\n']);
    const flag = spawnSync(process.execPath, [BIN, '--port', 'x'], { encoding: 'utf8' });
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/^Error: option '--port <port>' argument 'x' is invalid/);
    const file = join(dir, 'bad.yaml');
    await writeFile(file, svcletConfigYaml({ port: 1, nope: true }));
    const bad = spawnSync(process.execPath, [BIN, '--config', file], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(
      `Error: failed to load svclet config file ${file}: strict decoding error: unknown field "nope"\n`,
    );
  });

  it('runs standalone, answers /healthz, and exits 0 on SIGTERM', async () => {
    const [port, healthz] = await freePorts(2);
    const file = join(dir, 'c.yaml');
    await writeFile(
      file,
      svcletConfigYaml({
        address: '127.0.0.1',
        port,
        healthzPort: healthz,
        podLogsDir: join(dir, 'logs'),
        containerRuntimeEndpoint: join(dir, 'no-runtime.sock'),
      }),
    );
    const child = spawn(
      process.execPath,
      [BIN, '--config', file, '--root-dir', join(dir, 'root'), '--cert-dir', join(dir, 'pki')],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let log = '';
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    try {
      await waitFor('/healthz', async () => (await fetch(`http://127.0.0.1:${healthz}/healthz`)).status === 200, {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      expect(log).toMatch(/standalone mode/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
