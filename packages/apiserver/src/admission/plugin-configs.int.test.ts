// Bad configurations of the admission plugins that read one stop svc-apiserver at start with exit
// status 2 and one line on stderr: EventRateLimit (none, or invalid limits), ImagePolicyWebhook
// (none, a TTL out of range, an unreadable kubeconfig), PodTolerationRestriction (invalid
// tolerations) and PodNodeSelector (not a map of selectors). Needs the build: runs dist/bin/svc-apiserver.js.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCommand, uniqueName } from '@svc/testing';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');
let dir: string;

beforeAll(async () => {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
  dir = await mkdtemp(join(tmpdir(), 'svc-plugin-configs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An AdmissionConfiguration with `plugin`'s configuration inline (none when undefined). */
async function configFile(plugin: string, configuration: unknown): Promise<string> {
  const file = join(dir, `${uniqueName('admission')}.json`);
  const plugins = configuration === undefined ? [] : [{ name: plugin, configuration }];
  await writeFile(
    file,
    JSON.stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'AdmissionConfiguration', plugins }),
  );
  return file;
}

async function exit2(plugin: string, configuration: unknown, line: string): Promise<void> {
  const args = [
    ...['--store-servers', 'http://127.0.0.1:1', '--secure-port', '0', '--cert-dir', join(dir, 'pki')],
    `--enable-admission-plugins=${plugin}`,
    `--admission-control-config-file=${await configFile(plugin, configuration)}`,
  ];
  const r = await runCommand(process.execPath, [BIN, ...args], { timeoutMs: 15_000 });
  expect(r.code).toBe(2);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toEqual([`Error: --admission-control-config-file: ${plugin}: ${line}`]);
}

const eventRateLimit = (limits: unknown): unknown => ({
  apiVersion: 'eventratelimit.admission.svc.io/v1alpha1',
  kind: 'Configuration',
  limits,
});

it('EventRateLimit needs a configuration with valid limits', async () => {
  await exit2('EventRateLimit', undefined, 'limits: Invalid value: null: must not be empty');
  await exit2(
    'EventRateLimit',
    eventRateLimit([{ type: 'Namespace', qps: 0, burst: 10 }]),
    'limits[0].qps: Invalid value: 0: must be positive',
  );
});

it('ImagePolicyWebhook needs a configuration within range and a readable kubeconfig', async () => {
  await exit2('ImagePolicyWebhook', undefined, 'no config specified');
  const kubeconfig = join(dir, 'backend.yaml');
  await writeFile(kubeconfig, 'clusters:\n- name: b\n  cluster:\n    server: https://127.0.0.1:1\n');
  await exit2(
    'ImagePolicyWebhook',
    { imagePolicy: { kubeConfigFile: kubeconfig, allowTTL: 3600 } },
    'valid value is between 1s and 30m0s, got 1h0m0s',
  );
  await exit2(
    'ImagePolicyWebhook',
    { imagePolicy: { kubeConfigFile: join(dir, 'missing.yaml') } },
    `ENOENT: no such file or directory, open '${join(dir, 'missing.yaml')}'`,
  );
});

it('PodTolerationRestriction refuses invalid tolerations', async () => {
  await exit2(
    'PodTolerationRestriction',
    {
      apiVersion: 'podtolerationrestriction.admission.svc.io/v1alpha1',
      kind: 'Configuration',
      whitelist: [{ key: 'k', operator: 'Exists', value: 'v' }],
    },
    'invalid config: [podtolerationrestriction.whitelist[0].operator: Invalid value: {"key":"k","operator":"Exists","value":"v"}: value must be empty when `operator` is \'Exists\']',
  );
});

it('PodNodeSelector refuses a configuration that is not a map of selectors', async () => {
  await exit2(
    'PodNodeSelector',
    { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: ['a=b'] } },
    'podNodeSelectorPluginConfig.clusterDefaultNodeSelector must be a string',
  );
});
