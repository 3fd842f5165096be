import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initPki } from './pki.js';

describe('svcadm init pki', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcadm-pki-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('writes a CA and certificates it signs, with the subjects, usages and names each use needs', async () => {
    const written = await initPki({ certDir: dir, apiserverSans: ['api.example', '10.1.2.3'] });
    expect(written.map((f) => f.base)).toEqual([
      'ca',
      'apiserver',
      'apiserver-svclet-client',
      'admin',
      'controller-manager',
      'scheduler',
      'node-simulator',
      'sa',
    ]);
    const ca = new X509Certificate(await readFile(join(dir, 'ca.crt')));
    expect(ca.ca).toBe(true);
    const cert = async (base: string) => new X509Certificate(await readFile(join(dir, `${base}.crt`)));
    const serving = await cert('apiserver');
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, DNS:api.example, IP Address:10.1.2.3');
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    const toNodes = await cert('apiserver-svclet-client');
    expect(toNodes.verify(ca.publicKey)).toBe(true);
    expect(toNodes.subject).toBe('CN=svc-apiserver-svclet-client\nO=system:masters');
    expect(toNodes.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect((await cert('admin')).subject).toBe('CN=svc-admin\nO=system:masters');
    // The components as their own users, outside system:masters (RBAC and flow control apply).
    expect((await cert('controller-manager')).subject).toBe('CN=system:svc-controller-manager');
    expect((await cert('scheduler')).subject).toBe('CN=system:svc-scheduler');
    expect((await cert('node-simulator')).subject).toBe('CN=system:node-simulator\nO=system:nodes');
    expect(await readFile(join(dir, 'sa.key'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('keeps what exists: a second run writes nothing and the CA stays the same', async () => {
    const before = await readFile(join(dir, 'ca.crt'), 'utf8');
    expect(await initPki({ certDir: dir, apiserverSans: [] })).toEqual([]);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(before);
  });

  it("writes a node's client certificate per --node-names, with the node's identity, next to what exists", async () => {
    const ca = new X509Certificate(await readFile(join(dir, 'ca.crt')));
    const written = await initPki({ certDir: dir, apiserverSans: [], nodeNames: ['node-1', 'worker.example'] });
    expect(written.map((f) => f.base)).toEqual(['node-client-node-1', 'node-client-worker.example']);
    const node = new X509Certificate(await readFile(join(dir, 'node-client-node-1.crt')));
    expect(node.verify(ca.publicKey)).toBe(true);
    expect(node.subject).toBe('CN=system:node:node-1\nO=system:nodes');
    expect(node.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(await readFile(join(dir, 'node-client-node-1.key'), 'utf8')).toMatch(/PRIVATE KEY/);
    expect(await initPki({ certDir: dir, apiserverSans: [], nodeNames: ['node-1'] })).toEqual([]);
  });

  it('refuses a node name that is not a DNS subdomain before writing anything', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'svcadm-pki-bad-'));
    try {
      await expect(initPki({ certDir: join(empty, 'pki'), apiserverSans: [], nodeNames: ['Node_1'] })).rejects.toThrow(
        '--node-names: "Node_1" is not a valid node name (a lowercase DNS subdomain)',
      );
      await expect(readdir(empty)).resolves.toEqual([]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
