import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { loadSvcconfig, svcconfigPath, SvcconfigError } from './svcconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
let n = 0;
function write(doc: unknown): string {
  const p = join(dir, `config-${++n}.yaml`);
  writeFileSync(p, typeof doc === 'string' ? doc : YAML.stringify(doc));
  return p;
}

const base = {
  'current-context': 'a',
  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority': 'ca.pem' } }],
  users: [
    {
      name: 'u',
      user: {
        tokenFile: 'token.txt',
        'client-certificate-data': Buffer.from('CERT').toString('base64'),
        'client-key': 'key.pem',
      },
    },
  ],
  contexts: [
    { name: 'a', context: { cluster: 'c', user: 'u', namespace: 'team' } },
    { name: 'b', context: { cluster: 'c' } },
  ],
};

describe('loadSvcconfig', () => {
  writeFileSync(join(dir, 'ca.pem'), 'CA');
  writeFileSync(join(dir, 'key.pem'), 'KEY');

  it('reads the current context, resolving relative files next to the config', () => {
    const c = loadSvcconfig(write(base));
    expect(c.server).toBe('https://127.0.0.1:6443');
    expect(c.caPem).toBe('CA');
    expect(c.namespace).toBe('team');
    expect(c.user).toEqual({ tokenFile: join(dir, 'token.txt'), clientCertPem: 'CERT', clientKeyPem: 'KEY' });
  });

  it('reads another context when asked; a context without a user has no credentials', () => {
    const c = loadSvcconfig(write(base), { context: 'b' });
    expect(c.user).toEqual({});
    expect(c.namespace).toBe('default');
  });

  it.each([
    ['a missing context', { ...base, 'current-context': 'nope' }, /no context named "nope"/],
    ['no current context', { ...base, 'current-context': '' }, /no current-context/],
    ['a cluster without a server', { ...base, clusters: [{ name: 'c', cluster: {} }] }, /has no server/],
    [
      'an exec entry without a command',
      { ...base, users: [{ name: 'u', user: { exec: { apiVersion: 'v' } } }] },
      /exec needs a command/,
    ],
    ['text that is not YAML', 'a: [', /config-/],
  ])('refuses %s', (_what, doc, message) => {
    expect(() => loadSvcconfig(write(doc))).toThrow(SvcconfigError);
    expect(() => loadSvcconfig(write(doc))).toThrow(message);
  });
});

describe('svcconfigPath', () => {
  it('prefers the flag, then the first KUBECONFIG entry', () => {
    expect(svcconfigPath('/flag', { KUBECONFIG: '/a:/b' })).toBe('/flag');
    expect(svcconfigPath(undefined, { KUBECONFIG: ':/a:/b' })).toBe('/a');
    expect(svcconfigPath(undefined, {})).toBeUndefined();
  });

  it('reads SVCCONFIG before KUBECONFIG', () => {
    expect(svcconfigPath(undefined, { SVCCONFIG: '/s', KUBECONFIG: '/k' })).toBe('/s');
    expect(svcconfigPath('/flag', { SVCCONFIG: '/s' })).toBe('/flag');
  });
});
