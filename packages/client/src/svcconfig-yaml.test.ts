import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { runCommand, svcconfigYaml } from '@svc/testing';
import { GIVE_UP, parseConfigText, simpleYaml } from './svcconfig-yaml.js';

// simpleYaml must give exactly what the yaml library gives, or give up.
const same = (text: string): void => {
  const fast = simpleYaml(text);
  expect(fast).not.toBe(GIVE_UP);
  expect(fast).toEqual(YAML.parse(text));
  expect(parseConfigText(text)).toEqual(YAML.parse(text));
};

/** A value or the message of the error thrown. */
const outcome = (f: () => unknown): { value?: unknown; error?: string } => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).message };
  }
};

const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n';

describe('simpleYaml: the configuration files svcctl reads on start', () => {
  it('reads configuration files as @svc/testing and cluster.sh write them', () => {
    same(svcconfigYaml({ server: 'https://127.0.0.1:6443', caPem: CA, token: 'abc.def' }));
    same(
      svcconfigYaml({
        server: 'https://[::1]:443',
        caPem: CA,
        clientCertPem: CA,
        clientKeyPem: CA,
        user: 'system:admin',
        cluster: 'svc',
      }),
    );
  });

  it('reads configuration files as stock kubectl writes them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svcconfig-yaml-'));
    try {
      const file = join(dir, 'config');
      const steps = [
        ['set-cluster', 'one', '--server=https://127.0.0.1:6443', '--insecure-skip-tls-verify=true'],
        ['set-cluster', 'two', '--server=https://example.test:8443', '--tls-server-name=api.example.test'],
        ['set-credentials', 'token-user', '--token=s3cret.token'],
        [
          'set-credentials',
          'plugin-user',
          '--exec-command=/usr/local/bin/get-token',
          '--exec-api-version=client.authentication.k8s.io/v1',
          '--exec-arg=--cluster',
          '--exec-arg=two',
          '--exec-env=MODE=fast',
          '--exec-env=EMPTY=',
        ],
        ['set-context', 'first', '--cluster=one', '--user=token-user', '--namespace=team-a'],
        ['set-context', 'second', '--cluster=two', '--user=plugin-user'],
        ['use-context', 'second'],
      ];
      for (const args of steps) {
        const r = await runCommand('kubectl', ['config', ...args, `--kubeconfig=${file}`]);
        expect(r).toMatchObject({ code: 0 });
      }
      same(await readFile(file, 'utf8'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads comments, quoted scalars, null, booleans, empty collections and CRLF line ends', () => {
    same(
      [
        '# a comment',
        'apiVersion: "v1"',
        "kind: 'Config'",
        'preferences: {}',
        'extensions: []',
        'clusters:',
        '  # indented comment',
        '  - name: "quo\\"ted\\\\ \\n"',
        '    cluster:',
        '      server: https://h:1/path#frag',
        '      insecure-skip-tls-verify: true',
        "      proxy-url: 'it''s'",
        '      disable-compression: False',
        '  - name: empty',
        '    cluster:',
        'users:',
        '- name: u',
        '  user:',
        '    token: ~',
        '    as: null',
        '    as-groups:',
        '    - a',
        '    - --flag=-1',
        '    - -x',
        '    - "b c"',
        'current-context: x:y',
        '',
      ].join('\n'),
    );
    same('apiVersion: v1\r\nkind: Config\r\nusers:\r\n- name: u\r\n  user: {}\r\n');
  });

  it('gives up on what it does not read, and the yaml library reads it', () => {
    const cases = [
      'a: &x v\nb: *x\n', // anchor, alias
      'a: {b: c}\n', // flow mapping
      'a: [b, c]\n', // flow sequence
      'a: |\n  text\n', // block scalar
      'a: b\n  c\n', // multi-line plain scalar
      'a: 8080\n', // a number
      'a: 1.32\n',
      'a: .inf\n',
      'a: -1\n',
      'a: -.5\n',
      'a:\n- -\n',
      'a: !!str 1\n', // a tag
      'a: b # comment\n', // comment after a value
      '---\na: b\n', // document marker
      '? a\n: b\n', // complex key
      '"a": b\n', // quoted key
      'a:\n\tb: c\n', // tab indentation (the yaml library refuses it too)
      'a:\n  - - b\n', // nested sequence on one line
      'a:\n  -\n    b\n', // empty item line
      'a:\n  b: c\n d: e\n', // a line between two indents
      'a: b\r c\n', // a lone carriage return
      '- a\n', // not a mapping
      '\uFEFFa: b\n', // byte-order mark
      '',
      '# only a comment\n',
    ];
    for (const text of cases) {
      expect({ text, fast: simpleYaml(text) }).toEqual({ text, fast: GIVE_UP });
      expect({ text, ...outcome(() => parseConfigText(text)) }).toEqual({ text, ...outcome(() => YAML.parse(text)) });
    }
  });

  it('leaves a duplicate key and several documents to the yaml library, which refuses them', () => {
    expect(simpleYaml('a: b\na: c\n')).toBe(GIVE_UP);
    expect(() => parseConfigText('a: b\na: c\n')).toThrow(/unique/i);
    expect(simpleYaml('a: b\n---\nc: d\n')).toBe(GIVE_UP);
    expect(() => parseConfigText('a: b\n---\nc: d\n')).toThrow(/multiple documents/);
  });

  it('reads JSON with JSON.parse', () => {
    const json = JSON.stringify(YAML.parse(svcconfigYaml({ server: 'https://127.0.0.1:1', caPem: CA })));
    expect(parseConfigText(json)).toEqual(YAML.parse(json));
    expect(parseConfigText('{a: b}')).toEqual({ a: 'b' });
  });
});
