// The svc-apiserver binary with bad authentication configuration: exit code 2 and one line on
// stderr, before anything is served; and the new flags in --help.
// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-apiserver.js.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
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
      done({ code, stdout, stderr });
    });
  });
}

let dir: string;
const file = (name: string): string => join(dir, name);

beforeAll(async () => {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build first (./node_modules/.bin/tsc -b packages/*/tsconfig.json)`);
  dir = await mkdtemp(join(tmpdir(), 'svc-authn-flags-'));
  await writeFile(file('garbage.pem'), 'this is not PEM\n');
  await writeFile(
    file('public.pem'),
    generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }),
  );
  await writeFile(
    file('ed25519.pem'),
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  await writeFile(file('tokens.csv'), 'only-two,columns\n');
  await writeFile(
    file('webhook-no-server.yaml'),
    'apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster: {}\n',
  );
  await writeFile(
    file('authn-duplicate.yaml'),
    JSON.stringify({
      apiVersion: 'apiserver.config.svc.io/v1beta1',
      kind: 'AuthenticationConfiguration',
      jwt: [1, 2].map(() => ({
        issuer: { url: 'https://id.example', audiences: ['svc'] },
        claimMappings: { username: { claim: 'sub', prefix: '' } },
      })),
    }),
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('start-up refuses bad authentication files with exit code 2 and one line', () => {
  it.each<[string, () => string[], RegExp]>([
    [
      'a missing --client-ca-file',
      () => ['--client-ca-file', file('missing.crt')],
      /^Error: --client-ca-file: ENOENT: no such file or directory/,
    ],
    [
      'a --client-ca-file without certificates',
      () => ['--client-ca-file', file('garbage.pem')],
      /^Error: --client-ca-file: .*garbage\.pem: no certificates found$/,
    ],
    [
      'a --service-account-key-file without keys',
      () => ['--service-account-key-file', file('garbage.pem')],
      /^Error: --service-account-key-file: .*no RSA or ECDSA public or private key found$/,
    ],
    [
      'an Ed25519 --service-account-key-file',
      () => ['--service-account-key-file', file('ed25519.pem')],
      /^Error: --service-account-key-file: .*unsupported key type ed25519 \(RSA or ECDSA only\)$/,
    ],
    [
      'a --service-account-signing-key-file with only a public key',
      () => ['--service-account-signing-key-file', file('public.pem')],
      /^Error: --service-account-signing-key-file: .*no private key found$/,
    ],
    [
      'a missing --tls-private-key-file used for service accounts',
      () => ['--tls-cert-file', file('missing.crt'), '--tls-private-key-file', file('missing.key')],
      /^Error: --tls-private-key-file: ENOENT/,
    ],
    [
      'a bad --token-auth-file',
      () => ['--token-auth-file', file('tokens.csv')],
      /^Error: --token-auth-file: .*line 1: needs at least 3 columns/,
    ],
    [
      'a missing --oidc-ca-file',
      () => [
        '--oidc-issuer-url',
        'https://id.example',
        '--oidc-client-id',
        'svc',
        '--oidc-ca-file',
        file('missing.crt'),
      ],
      /^Error: --oidc-ca-file: ENOENT/,
    ],
    [
      'an http --oidc-issuer-url',
      () => ['--oidc-issuer-url', 'http://id.example', '--oidc-client-id', 'svc'],
      /^Error: --oidc-issuer-url: "http:\/\/id\.example" must use the https scheme$/,
    ],
    ['--oidc-client-id alone', () => ['--oidc-client-id', 'svc'], /^Error: --oidc-issuer-url is required/],
    [
      'an --authentication-config with a duplicate issuer',
      () => ['--authentication-config', file('authn-duplicate.yaml')],
      /^Error: --authentication-config: .*authn-duplicate\.yaml: jwt\[1\]\.issuer\.url: Duplicate value: "https:\/\/id\.example"$/,
    ],
    [
      '--authentication-config with --oidc-* flags',
      () => [
        '--authentication-config',
        file('authn-duplicate.yaml'),
        '--oidc-issuer-url',
        'https://x.example',
        '--oidc-client-id',
        'c',
      ],
      /^Error: --authentication-config and the --oidc-\* flags are mutually exclusive$/,
    ],
    [
      'a webhook kubeconfig without a server',
      () => ['--authentication-token-webhook-config-file', file('webhook-no-server.yaml')],
      /^Error: --authentication-token-webhook-config-file: .*no cluster with a server$/,
    ],
    [
      'a missing --authentication-token-webhook-config-file',
      () => ['--authentication-token-webhook-config-file', file('missing.yaml')],
      /^Error: --authentication-token-webhook-config-file: ENOENT/,
    ],
    [
      'a missing --requestheader-client-ca-file',
      () => ['--requestheader-client-ca-file', file('missing.crt')],
      /^Error: --requestheader-client-ca-file: ENOENT/,
    ],
    [
      'a --requestheader-client-ca-file without certificates',
      () => ['--requestheader-client-ca-file', file('garbage.pem')],
      /^Error: --requestheader-client-ca-file: .*no certificates found$/,
    ],
  ])('%s', async (_what, args, line) => {
    const r = await run([
      '--store-servers',
      'http://127.0.0.1:1',
      '--secure-port',
      '0',
      '--cert-dir',
      file('pki'),
      ...args(),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});

it('lists the authentication flags with their defaults in --help', async () => {
  const r = await run(['--help']);
  expect(r.code).toBe(0);
  const help = r.stdout.replace(/\s+/g, ' ');
  for (const flag of [
    '--client-ca-file',
    '--enable-bootstrap-token-auth',
    '--service-account-key-file',
    '--service-account-signing-key-file',
    '--service-account-issuer',
    '--service-account-jwks-uri',
    '--api-audiences',
    '--service-account-lookup',
    '--oidc-issuer-url',
    '--oidc-client-id',
    '--oidc-username-claim',
    '--oidc-username-prefix',
    '--oidc-groups-claim',
    '--oidc-groups-prefix',
    '--oidc-required-claim',
    '--oidc-ca-file',
    '--oidc-signing-algs',
    '--authentication-config',
    '--authentication-token-webhook-config-file',
    '--requestheader-client-ca-file',
    '--requestheader-allowed-names',
    '--requestheader-username-headers',
    '--requestheader-group-headers',
    '--requestheader-extra-headers-prefix',
    '--requestheader-uid-headers',
  ])
    expect(help).toContain(flag);
  expect(help).toMatch(
    /--authentication-token-webhook-version <version> .*?\(choices: "v1", "v1beta1", default: "v1beta1"\)/,
  );
  expect(help).toMatch(/--authentication-token-webhook-cache-ttl <duration> .*?\(default: 2m0s\)/);
  expect(help).toMatch(/--enable-bootstrap-token-auth \[bool\] .*?\(default: false\)/);
  expect(help).toMatch(/--service-account-lookup \[bool\] .*?\(default: true\)/);
  expect(help).toMatch(/--oidc-username-claim <claim> .*?\(default: "sub"\)/);
  expect(help).toMatch(/--oidc-signing-algs <algs> .*?\(default: RS256\)/);
  expect(help).toMatch(/--service-account-issuer <issuer> .*?\(default: "https:\/\/svc\.default\.svc\.cluster\.local"/);
});
