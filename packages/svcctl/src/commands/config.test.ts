import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from '@svc/testing';
import { svcctl } from '../svcctl-testing.js';

const CONFIG = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Q0EK
- name: two
  cluster:
    server: https://10.0.0.2:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: secret-token
- name: cert
  user:
    client-certificate-data: Q0VSVAo=
    client-key-data: S0VZCg==
contexts:
- name: admin@one
  context: {cluster: one, user: admin, namespace: team-a}
- name: cert@two
  context: {cluster: two, user: cert}
current-context: admin@one
`;

describe('svcctl config', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcctl-config-'));
    file = join(dir, 'config');
    await writeFile(file, CONFIG);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** svcctl and kubectl on copies of the same file: same exit code and output, and the same file afterwards. */
  async function same(args: string[]): Promise<void> {
    const mine = join(dir, 'mine');
    const theirs = join(dir, 'theirs');
    await copyFile(file, mine);
    await copyFile(file, theirs);
    const a = await svcctl(args, { env: { KUBECONFIG: mine, HOME: dir } });
    const b = await kubectl(theirs, args, { home: dir });
    expect({ args, code: a.code, out: a.stdout, err: a.stderr.replace(/svcctl/g, 'kubectl') }).toEqual({
      args,
      code: b.code,
      out: b.stdout,
      err: b.stderr,
    });
    const viewMine = await kubectl(mine, ['config', 'view', '--raw'], { home: dir });
    const viewTheirs = await kubectl(theirs, ['config', 'view', '--raw'], { home: dir });
    expect(viewMine.stdout).toBe(viewTheirs.stdout);
  }

  it('views the configuration as kubectl does', async () => {
    await same(['config', 'view']);
    await same(['config', 'view', '--raw']);
    await same(['config', 'view', '--minify']);
    await same(['config', 'view', '-o', 'json']);
    await same(['config', 'view', '-o', 'jsonpath={.contexts[*].name}']);
    await same(['config', 'current-context']);
    await same(['config', 'get-contexts']);
    await same(['config', 'get-contexts', '-o', 'name']);
  });

  it('switches and edits contexts as kubectl does', async () => {
    await same(['config', 'use-context', 'cert@two']);
    await same(['config', 'use-context', 'nope']);
    await same(['config', 'set-context', 'admin@one', '--namespace=team-b']);
    await same(['config', 'set-context', '--current', '--namespace=team-c']);
    await same(['config', 'set-context', 'new', '--cluster=two', '--user=admin']);
  });

  it('uses --context and SVCCONFIG', async () => {
    const r = await svcctl(['config', 'current-context'], { env: { SVCCONFIG: file, KUBECONFIG: '/nonexistent' } });
    expect(r).toEqual({ code: 0, stdout: 'admin@one\n', stderr: '' });
  });
});
