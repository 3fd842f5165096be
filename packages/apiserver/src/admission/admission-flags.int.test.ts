// The admission flags: which plugins run (Kubernetes' order whatever the flags' order), exit 2
// with one line for an unknown plugin, a plugin both enabled and disabled, or a bad
// --admission-control-config-file; the readyz hook; NodeRestriction only when enabled.
// Needs the build: the bad-flag cases run dist/bin/svc-apiserver.js.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { group } from '@svc/api';
import { runCommand, startTestApiServer } from '@svc/testing';
import { parseApiServerOptions } from '../options.js';
import { readAdmissionConfig } from './admission-config.js';
import { DEFAULT_ENABLED_ADMISSION_PLUGINS, ORDERED_ADMISSION_PLUGINS } from './plugin-names.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');
let dir: string;

const parse = (args: string[]): string[] => parseApiServerOptions(args, { quiet: true }).admissionPlugins;
const apiserverConfig = `${group('apiserver.config')}/v1`;

beforeAll(async () => {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
  dir = await mkdtemp(join(tmpdir(), 'svc-admission-flags-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('which plugins run', () => {
  it('is the spec default list, in Kubernetes order', () => {
    const names = parse([]);
    expect(new Set(names)).toEqual(DEFAULT_ENABLED_ADMISSION_PLUGINS);
    expect(names).toEqual(ORDERED_ADMISSION_PLUGINS.filter((n) => DEFAULT_ENABLED_ADMISSION_PLUGINS.has(n)));
    expect(names.indexOf('NamespaceLifecycle')).toBeLessThan(names.indexOf('MutatingAdmissionWebhook'));
    expect(names.at(-1)).toBe('ResourceQuota');
  });

  it('adds and removes plugins whatever the flags order', () => {
    const names = parse([
      '--enable-admission-plugins=AlwaysDeny,NodeRestriction,NamespaceExists',
      '--disable-admission-plugins=ResourceQuota,PodSecurity',
    ]);
    expect(names).toContain('NodeRestriction');
    expect(names).not.toContain('ResourceQuota');
    expect(names).not.toContain('PodSecurity');
    expect(names.indexOf('NamespaceExists')).toBeLessThan(names.indexOf('NodeRestriction'));
    expect(names.at(-1)).toBe('AlwaysDeny');
  });
});

describe('bad input exits 2 with one line', () => {
  const exit2 = async (args: string[], line: RegExp): Promise<void> => {
    const r = await runCommand(process.execPath, [BIN, ...args], { timeoutMs: 15_000 });
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  };

  it('an unknown plugin', async () => {
    await exit2(['--enable-admission-plugins=NamespaceLifecycle,Bogus'], /unknown admission plugin: Bogus/);
  });

  it('a plugin both enabled and disabled', async () => {
    await exit2(
      ['--enable-admission-plugins=AlwaysPullImages', '--disable-admission-plugins=AlwaysPullImages'],
      /AlwaysPullImages in both --enable-admission-plugins and --disable-admission-plugins/,
    );
  });

  it('a config file that is missing, not an AdmissionConfiguration, or names an unknown plugin', async () => {
    const store = ['--store-servers', 'http://127.0.0.1:1', '--secure-port', '0', '--cert-dir', join(dir, 'pki')];
    await exit2(
      [...store, `--admission-control-config-file=${join(dir, 'missing.yaml')}`],
      /--admission-control-config-file: .*ENOENT/,
    );
    const wrongKind = join(dir, 'wrong-kind.yaml');
    await writeFile(wrongKind, `apiVersion: ${apiserverConfig}\nkind: Something\n`);
    await exit2([...store, `--admission-control-config-file=${wrongKind}`], /expected kind AdmissionConfiguration/);
    const unknown = join(dir, 'unknown.yaml');
    await writeFile(
      unknown,
      `apiVersion: ${apiserverConfig}\nkind: AdmissionConfiguration\nplugins:\n- name: Nope\n  configuration: {}\n`,
    );
    await exit2(
      [...store, `--admission-control-config-file=${unknown}`],
      /plugins\[0\]\.name: unknown admission plugin Nope/,
    );
  });
});

describe('the configuration file', () => {
  it('takes inline configuration and files relative to itself', async () => {
    await writeFile(join(dir, 'limits.yaml'), 'kind: Configuration\nlimits:\n- type: Server\n  qps: 5\n  burst: 10\n');
    const file = join(dir, 'admission.yaml');
    await writeFile(
      file,
      [
        `apiVersion: ${apiserverConfig}`,
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: EventRateLimit',
        '  path: limits.yaml',
        '- name: PodSecurity',
        '  configuration:',
        '    defaults: {enforce: baseline}',
      ].join('\n'),
    );
    const configs = readAdmissionConfig(file);
    expect(configs.get('EventRateLimit')).toEqual({
      kind: 'Configuration',
      limits: [{ type: 'Server', qps: 5, burst: 10 }],
    });
    expect(configs.get('PodSecurity')).toEqual({ defaults: { enforce: 'baseline' } });
  });
});

describe('a running server', () => {
  it('shows the admission initializer hook in readyz', async () => {
    const t = await startTestApiServer();
    try {
      const r = await t.client.get('/readyz?verbose');
      expect(r.text).toContain('[+]poststarthook/start-apiserver-admission-initializer ok');
    } finally {
      await t.stop();
    }
  });
});
