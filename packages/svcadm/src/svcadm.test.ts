import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { naming, useNaming } from '@svc/api';
import { runSvcadm } from './svcadm.js';
import { tokenSecret } from './token.js';
import { joinObjects } from './cluster-info.js';

afterEach(() => {
  useNaming('svc');
});

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = { out: '', err: '' };
  const code = await runSvcadm(args, {
    out: (s) => {
      r.out += s;
    },
    err: (s) => {
      r.err += s;
    },
  });
  return { code, ...r };
}

describe('svcadm --naming', () => {
  it('kubernetes switches the namespaces, the secret type and the RBAC group of what svcadm writes', async () => {
    const r = await run('--naming', 'kubernetes', 'token', 'create', '--svcconfig', '/nonexistent/admin.conf');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^Error: .*\/nonexistent\/admin\.conf/);
    expect(naming().scheme).toBe('kubernetes');
    const s = tokenSecret({ id: 'abcdef', secret: '0123456789abcdef', usages: ['signing'], groups: [] });
    expect(s.metadata.namespace).toBe('kube-system');
    expect(s.type).toBe('bootstrap.kubernetes.io/token');
    const objs = joinObjects('https://10.0.0.1:6443', 'PEM');
    expect(objs[0]?.obj.metadata.namespace).toBe('kube-public');
    expect(objs.map((o) => o.obj.metadata.name)).toEqual([
      'cluster-info',
      'svcadm:bootstrap-signer-clusterinfo',
      'svcadm:bootstrap-signer-clusterinfo',
      'svcadm:svclet-bootstrap',
      'svcadm:node-autoapprove-bootstrap',
      'svcadm:node-autoapprove-certificate-rotation',
    ]);
    expect(objs[4]?.obj.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    });
  });

  it('an unknown naming is a flag error', async () => {
    const r = await run('--naming', 'other', 'token', 'list');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^Error: option '--naming <scheme>' argument 'other' is invalid/);
  });
});

describe('svcadm init pki --node-names', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcadm-cli-pki-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("writes each named node's client certificate and says so", async () => {
    const r = await run('init', 'pki', '--cert-dir', dir, '--node-names', 'node-1,node-2');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`[certs] wrote node-client-node-1 (client certificate of node node-1) in ${dir}\n`);
    expect(r.out).toContain(`[certs] wrote node-client-node-2 (client certificate of node node-2) in ${dir}\n`);
    const cert = new X509Certificate(await readFile(join(dir, 'node-client-node-2.crt')));
    expect(cert.subject).toBe('CN=system:node:node-2\nO=system:nodes');
  });

  it('refuses a bad node name with exit 1 and the reason', async () => {
    const r = await run('init', 'pki', '--cert-dir', dir, '--node-names', 'node-3,bad name');
    expect(r.code).toBe(1);
    expect(r.err).toContain('--node-names: "bad name" is not a valid node name (a lowercase DNS subdomain)');
    await expect(readFile(join(dir, 'node-client-node-3.crt'))).rejects.toThrow(/ENOENT/);
  });
});
