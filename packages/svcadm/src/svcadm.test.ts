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
