import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCommand, type CommandResult } from '@svc/testing';
import { startSvcctlEnv, type SvcctlEnv } from '../svcctl-testing.js';

// The installed binary: dist/bundle/svcctl.cjs (component-base's code-cache-loader.ts) running the CommonJS
// bundle svcctl.main.cjs with the V8 code cache scripts/bundle.mjs made. A copy of the bundle
// directory is run, so the cache can be removed and corrupted without touching the build's.
const BUNDLE_DIR = resolve(__dirname, '../../dist/bundle');

describe('the svcctl bundle (dist/bundle/svcctl.cjs)', () => {
  let env: SvcctlEnv;
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(join(BUNDLE_DIR, 'svcctl.cjs')))
      throw new Error(`${BUNDLE_DIR}/svcctl.cjs is missing: build first (tsc -b, then node scripts/bundle.mjs)`);
    dir = await mkdtemp(join(tmpdir(), 'svcctl-bundle-'));
    await cp(BUNDLE_DIR, join(dir, 'bundle'), { recursive: true });
    env = await startSvcctlEnv();
  });
  afterAll(async () => {
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const bin = (): string => join(dir, 'bundle', 'svcctl.cjs');
  const run = (args: string[], stdin?: string): Promise<CommandResult> =>
    runCommand(process.execPath, [bin(), ...args], {
      env: { PATH: process.env.PATH, KUBECONFIG: env.kube.server.svcconfigPath, HOME: env.home },
      stdin,
    });
  const cacheFiles = async (): Promise<string[]> =>
    (await readdir(join(dir, 'bundle'))).filter((f) => f.endsWith('.v8cache')).map((f) => join(dir, 'bundle', f));

  it('runs commands as svcctl run in-process does', async () => {
    // (No tables: their ages may tick between the two runs.)
    const lines = [['version', '--client'], ['get', 'namespaces', '-o', 'name'], ['api-versions'], ['get', 'nope']];
    for (const args of lines) {
      const [bundled, inProcess] = await Promise.all([run(args), env.run(args)]);
      expect({ args, code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr }).toEqual({
        args,
        ...inProcess,
      });
    }
  });

  it('reads manifests from standard input and files', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-bundle' }, data: { a: '1' } };
    const applied = await run(['apply', '-f', '-'], JSON.stringify(cm));
    expect(applied).toEqual({ code: 0, stdout: 'configmap/from-bundle created\n', stderr: '' });
    const file = await env.manifest({ ...cm, data: { a: '2' } });
    expect((await run(['apply', '-f', file])).stdout).toBe('configmap/from-bundle configured\n');
    const got = await run(['get', 'configmap', 'from-bundle', '-o', 'jsonpath={.data.a}']);
    expect(got).toEqual({ code: 0, stdout: '2', stderr: '' });
    expect(await run(['delete', '-f', file])).toEqual({
      code: 0,
      stdout: 'configmap "from-bundle" deleted\n',
      stderr: '',
    });
  });

  it('was built with a code cache, and remakes a corrupt or missing one without a word', async () => {
    const cache = (await cacheFiles())[0] ?? '';
    expect(cache).not.toBe('');
    const good = await readFile(cache);
    const expected = {
      code: 0,
      stdout: expect.stringMatching(/^Client Version: v1\.32\.\d+-svc\./) as unknown,
      stderr: '',
    };

    // Garbage, then a truncated cache: V8 rejects both, the script is compiled from source, and
    // the cache is written again from that run.
    for (const bad of [Buffer.from('not a code cache'), good.subarray(0, good.length >> 1)]) {
      await writeFile(cache, bad);
      expect(await run(['version', '--client'])).toEqual(expected);
      const remade = await readFile(cache);
      expect(remade.length).toBeGreaterThan(1000);
      expect(remade.equals(bad)).toBe(false);
      expect(await run(['version', '--client'])).toEqual(expected);
    }

    await rm(cache);
    expect(await run(['version', '--client'])).toEqual(expected);
    expect(await cacheFiles()).toEqual([cache]);
    expect((await readdir(join(dir, 'bundle'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
