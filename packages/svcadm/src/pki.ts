import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { naming } from '@svc/api';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority } from '@svc/component-base';

/** One file pair `svcadm init pki` writes, and who uses it. */
export interface PkiFile {
  base: string;
  purpose: string;
}

export interface PkiOptions {
  certDir: string;
  /** Extra DNS names and IPs of the API server's serving certificate (localhost and 127.0.0.1 are always in). */
  apiserverSans: string[];
  /** Nodes of the control plane's own machine: each gets a node client pair, `node-client-<name>`. */
  nodeNames?: string[];
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * kubeadm's `init phase certs`, smaller: under `certDir`, the cluster CA (`ca.crt`/`ca.key`,
 * which signs everything here and, in the controller manager, node client certificates),
 * the API server's serving pair, its client pair towards the node agents
 * (`system:masters`), an admin client pair, client pairs of the controller manager, the
 * scheduler and the node simulator, one per named node (`nodeNames`, `node-client-<name>`), and
 * the service-account signing key. Files that exist are kept, so running it again changes
 * nothing. Answers what was written.
 */
export async function initPki(o: PkiOptions): Promise<PkiFile[]> {
  const { controllerManagerName, schedulerName } = naming();
  const badNode = o.nodeNames?.find((n) => !DNS_SUBDOMAIN.test(n));
  if (badNode !== undefined)
    throw new Error(`--node-names: ${JSON.stringify(badNode)} is not a valid node name (a lowercase DNS subdomain)`);
  await mkdir(o.certDir, { recursive: true, mode: 0o700 });
  const path = (f: string): string => join(o.certDir, f);
  const written: PkiFile[] = [];
  const put = async (base: string, purpose: string, pair: { certPem: string; keyPem: string }): Promise<void> => {
    await writeFile(path(`${base}.key`), pair.keyPem, { mode: 0o600 });
    await writeFile(path(`${base}.crt`), pair.certPem);
    written.push({ base, purpose });
  };
  let ca: CertificateAuthority;
  if (existsSync(path('ca.crt')) && existsSync(path('ca.key'))) {
    ca = { certPem: await readFile(path('ca.crt'), 'utf8'), keyPem: await readFile(path('ca.key'), 'utf8') };
  } else {
    ca = await createCertificateAuthority('svc-ca');
    await put('ca', 'cluster CA', ca);
  }
  const leaves: Array<{
    base: string;
    purpose: string;
    cn: string;
    orgs?: string[];
    usages: Array<'client' | 'server'>;
    hosts?: string[];
  }> = [
    {
      base: 'apiserver',
      purpose: 'API server serving certificate',
      cn: 'svc-apiserver',
      usages: ['server'],
      hosts: ['localhost', '127.0.0.1', ...o.apiserverSans],
    },
    {
      base: 'apiserver-svclet-client',
      purpose: 'API server client certificate towards node agents',
      cn: 'svc-apiserver-svclet-client',
      orgs: ['system:masters'],
      usages: ['client'],
    },
    {
      base: 'admin',
      purpose: 'admin client certificate',
      cn: 'svc-admin',
      orgs: ['system:masters'],
      usages: ['client'],
    },
    // As kubeadm's controller-manager.conf and scheduler.conf: each component as its own user,
    // so RBAC gives it only its role and priority and fairness classifies its requests
    // (system:masters would be exempt from both).
    {
      base: 'controller-manager',
      purpose: 'controller manager client certificate',
      cn: `system:${controllerManagerName}`,
      usages: ['client'],
    },
    { base: 'scheduler', purpose: 'scheduler client certificate', cn: `system:${schedulerName}`, usages: ['client'] },
    // Simulated nodes (`svclet --simulate-nodes`) share one client for every node, so not a
    // node's own identity; in the nodes' group so flow control treats them as nodes.
    {
      base: 'node-simulator',
      purpose: 'simulated nodes client certificate',
      cn: 'system:node-simulator',
      orgs: ['system:nodes'],
      usages: ['client'],
    },
    // As kubeadm init's kubelet.conf: the node agent of the control plane's machine starts with
    // a client certificate of its node's identity (rotated later by certificate requests, as
    // any node's), instead of a bootstrap token and a request the controller manager signs.
    ...(o.nodeNames ?? []).map((node) => ({
      base: `node-client-${node}`,
      purpose: `client certificate of node ${node}`,
      cn: `system:node:${node}`,
      orgs: ['system:nodes'],
      usages: ['client' as const],
    })),
  ];
  // Keys are made on libuv's thread pool: issue them all at once, write them in order.
  const missing = leaves.filter((l) => !(existsSync(path(`${l.base}.crt`)) && existsSync(path(`${l.base}.key`))));
  const [pairs, sa] = await Promise.all([
    Promise.all(
      missing.map(async (l) =>
        issueCertificate(ca, { commonName: l.cn, organizations: l.orgs, usages: l.usages, hosts: l.hosts }),
      ),
    ),
    // The service-account signing key: any key pair does; the CA machinery makes one.
    existsSync(path('sa.key')) ? undefined : createCertificateAuthority('service-account-signer'),
  ]);
  for (const [i, l] of missing.entries()) await put(l.base, l.purpose, pairs[i] as { certPem: string; keyPem: string });
  if (sa) {
    await writeFile(path('sa.key'), sa.keyPem, { mode: 0o600 });
    written.push({ base: 'sa', purpose: 'service-account signing key' });
  }
  return written;
}
