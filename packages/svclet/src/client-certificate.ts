import 'reflect-metadata';
import { createHash, webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as x509 from '@peculiar/x509';
import YAML from 'yaml';
import { group, isAlreadyExists, naming, type CertificateSigningRequest } from '@svc/api';
import { ResourceClient, loadSvcconfig, type ClientConfig, type RestClient } from '@svc/client';
import { sleep } from '@svc/machinery';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Kubernetes' usages for an ECDSA node client certificate (no key encipherment). */
const USAGES = ['digital signature', 'client auth'];
const NODES_GROUP = 'system:nodes';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

const csrResource = () => ({ group: group('certificates'), version: 'v1', resource: 'certificatesigningrequests' });

function pemKey(der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKeyPair> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
  // The public half from the private JWK (x, y) without `d`.
  const { kty, crv, x, y } = await webcrypto.subtle.exportKey('jwk', privateKey);
  const publicKey = await webcrypto.subtle.importKey('jwk', { kty, crv, x, y }, ALG, true, ['verify']);
  return { privateKey, publicKey } as CryptoKeyPair;
}

async function newKeyPem(): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  return pemKey(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as CryptoKey));
}

/** A PKCS#10 request for the node's client certificate: CN `system:node:<node>`, O `system:nodes`. */
async function nodeCsrPem(nodeName: string, keyPem: string): Promise<string> {
  const keys = await importKey(keyPem);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [`system:node:${nodeName}`] }, { O: [NODES_GROUP] }],
    keys,
    signingAlgorithm: ALG,
  });
  return `${csr.toString('pem')}\n`;
}

export interface RequestCertificateOptions {
  client: RestClient;
  nodeName: string;
  keyPem: string;
  /**
   * The request's name: the bootstrap uses `node-csr-<digest of the request>`, so a restarted
   * bootstrap with the same key waits for the same request; renewals let the server pick one.
   */
  name?: string;
  signal?: AbortSignal;
  /** How often the request is read back while waiting (default 100 ms: approval and signing take a few hundred). */
  pollMs?: number;
}

/**
 * Creates a CertificateSigningRequest for the node's client certificate (signer of node agent
 * client certificates) and waits until it is approved and issued; resolves with the issued
 * certificate (PEM). Throws when the request is denied or fails, or when `signal` fires.
 */
export async function requestNodeClientCertificate(o: RequestCertificateOptions): Promise<string> {
  const csrPem = await nodeCsrPem(o.nodeName, o.keyPem);
  const request = Buffer.from(csrPem).toString('base64');
  const api = new ResourceClient<CertificateSigningRequest>(o.client, csrResource());
  const body: CertificateSigningRequest = {
    apiVersion: `${group('certificates')}/v1`,
    kind: 'CertificateSigningRequest',
    metadata: o.name ? { name: o.name } : { generateName: 'csr-' },
    spec: { request, signerName: naming().signerNames.apiserverClientNodeAgent, usages: USAGES },
  };
  let name: string;
  try {
    name = (await api.create(body, { signal: o.signal })).metadata.name ?? '';
  } catch (e) {
    if (!o.name || !isAlreadyExists(e)) throw e;
    // Our own earlier request (same name = same digest) survives a restart.
    name = o.name;
  }
  for (;;) {
    if (o.signal?.aborted) throw new Error(`waiting for certificate signing request ${name}: aborted`);
    const csr = await api.get(name, { signal: o.signal });
    const conds = csr.status?.conditions ?? [];
    const bad = conds.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (bad)
      throw new Error(
        `certificate signing request ${name} is ${bad.type === 'Denied' ? 'denied' : 'failed'}, reason: ${bad.reason ?? ''}, message: ${bad.message ?? ''}`,
      );
    if (csr.status?.certificate && conds.some((c) => c.type === 'Approved'))
      return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    await sleep(o.pollMs ?? 100, o.signal);
  }
}

/** Kubernetes' bootstrap request name: `node-csr-` and a digest of the request's key, subject and usages. */
async function bootstrapCsrName(nodeName: string, keyPem: string): Promise<string> {
  const keys = await importKey(keyPem);
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey as CryptoKey));
  const digest = createHash('sha512')
    .update(spki)
    .update(`system:node:${nodeName}\0${NODES_GROUP}\0${USAGES.join(',')}`)
    .digest('base64url');
  return `node-csr-${digest.slice(0, 43)}`;
}

/**
 * Kubernetes' certificate file store: each pair as `<prefix>-<UTC date and time>.pem` (the
 * certificate, then the key) in `dir`, and `<prefix>-current.pem` a symbolic link to the
 * newest. Updates replace the link atomically.
 */
export class CertificateStore {
  readonly currentPath: string;

  constructor(
    readonly dir: string,
    private readonly prefix: string,
  ) {
    this.currentPath = resolve(dir, `${prefix}-current.pem`);
  }

  /** The current pair and when it was stored (ms), or undefined when there is none (or it does not parse). */
  current(): (KeyPair & { cert: X509Certificate; storedAt: number }) | undefined {
    if (!existsSync(this.currentPath)) return undefined;
    try {
      return { ...splitPair(readFileSync(this.currentPath, 'utf8')), storedAt: statSync(this.currentPath).mtimeMs };
    } catch {
      return undefined;
    }
  }

  /** Writes `pair` as the new current one; returns the path of the link. */
  async update(pair: KeyPair): Promise<string> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stamp = new Date()
      .toISOString()
      .replace(/\.\d+Z$/, '')
      .replace(/[T:]/g, '-');
    let file = join(this.dir, `${this.prefix}-${stamp}.pem`);
    for (let i = 1; existsSync(file); i++) file = join(this.dir, `${this.prefix}-${stamp}.${i}.pem`);
    await writeFile(file, pair.certPem.trimEnd() + '\n' + pair.keyPem, { mode: 0o600 });
    const tmp = `${this.currentPath}.tmp`;
    await unlink(tmp).catch(() => undefined);
    await symlink(file, tmp);
    await rename(tmp, this.currentPath);
    return this.currentPath;
  }
}

/** A PEM file holding a certificate and its key. */
export function splitPair(pem: string): KeyPair & { cert: X509Certificate } {
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(pem)?.[0];
  const key = /-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]*?-----END (?:EC |RSA )?PRIVATE KEY-----\n?/.exec(
    pem,
  )?.[0];
  if (!cert || !key) throw new Error('the file does not hold a certificate and a private key');
  return { certPem: cert, keyPem: key, cert: new X509Certificate(cert) };
}

/** True when `c` is valid now. */
export function certificateValid(c: X509Certificate, now = Date.now()): boolean {
  return now >= Date.parse(c.validFrom) && now < Date.parse(c.validTo);
}

/**
 * Whether the `--svcconfig` file can be used as it is: it exists, loads, and any client
 * certificate in it is valid now (Kubernetes' isClientConfigStillValid).
 */
export function svcconfigUsable(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const c = loadSvcconfig(file);
    return !c.user.clientCertPem || certificateValid(new X509Certificate(c.user.clientCertPem));
  } catch {
    return false;
  }
}

/** The svcconfig Kubernetes' bootstrap writes: the bootstrap file's cluster, the store's current pair as the user. */
export function bootstrappedSvcconfig(cluster: ClientConfig, pairFile: string): string {
  const clusterEntry: Record<string, unknown> = { server: cluster.server };
  if (cluster.caPem) clusterEntry['certificate-authority-data'] = Buffer.from(cluster.caPem).toString('base64');
  if (cluster.tlsServerName) clusterEntry['tls-server-name'] = cluster.tlsServerName;
  if (cluster.insecureSkipTlsVerify) clusterEntry['insecure-skip-tls-verify'] = true;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster: clusterEntry }],
    contexts: [
      { name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } },
    ],
    'current-context': 'default-context',
    users: [{ name: 'default-auth', user: { 'client-certificate': pairFile, 'client-key': pairFile } }],
    preferences: {},
  });
}

export interface BootstrapOptions {
  /** Client of `--bootstrap-kubeconfig`. */
  client: RestClient;
  nodeName: string;
  store: CertificateStore;
  svcconfigPath: string;
  signal?: AbortSignal;
  pollMs?: number;
}

/**
 * TLS bootstrap (Kubernetes' LoadClientCert): with the bootstrap credential, requests a node
 * client certificate, waits until it is issued, stores the pair in the store and writes
 * `--svcconfig` pointing at it. The private key is kept in `<cert dir>/<prefix>.key.tmp` until
 * then, so that a restart waits for the same request.
 */
export async function bootstrapClientCertificate(o: BootstrapOptions): Promise<KeyPair> {
  await mkdir(o.store.dir, { recursive: true, mode: 0o700 });
  const keyFile = join(o.store.dir, `${naming().nodeAgentName}-client.key.tmp`);
  let keyPem: string;
  try {
    keyPem = await readFile(keyFile, 'utf8');
    await importKey(keyPem);
  } catch {
    keyPem = await newKeyPem();
    await writeFile(keyFile, keyPem, { mode: 0o600 });
  }
  const certPem = await requestNodeClientCertificate({
    client: o.client,
    nodeName: o.nodeName,
    keyPem,
    name: await bootstrapCsrName(o.nodeName, keyPem),
    signal: o.signal,
    pollMs: o.pollMs,
  });
  const pair = { certPem, keyPem };
  const pairFile = await o.store.update(pair);
  await mkdir(resolve(o.svcconfigPath, '..'), { recursive: true });
  await writeFile(o.svcconfigPath, bootstrappedSvcconfig(o.client.config, pairFile), { mode: 0o600 });
  await unlink(keyFile).catch(() => undefined);
  return pair;
}

/**
 * When to renew a certificate: at a random point between 70 % and 90 % of its lifetime, as
 * Kubernetes does. The lifetime is counted from `obtainedAt` when that is later than NotBefore:
 * signers backdate NotBefore (5 minutes), which would make a short-lived certificate due at once.
 */
export function rotationDeadline(cert: X509Certificate, obtainedAt: number, random = Math.random()): number {
  const start = Math.max(Date.parse(cert.validFrom), obtainedAt);
  const end = Date.parse(cert.validTo);
  return start + (end - start) * (0.7 + 0.2 * random);
}

export interface RotationOptions {
  /** The client to renew with (authenticated with the current certificate) and to give the new one to. */
  client: RestClient & { setClientCertificate(certPem: string, keyPem: string): void };
  nodeName: string;
  store: CertificateStore;
  current: KeyPair;
  /** When the current pair was obtained (ms). */
  obtainedAt: number;
  /** Told every certificate in use (the current one at once, then each new one). */
  onCertificate?: (cert: X509Certificate) => void;
  onError?: (e: unknown) => void;
  signal: AbortSignal;
  pollMs?: number;
}

/**
 * Rotates the node's client certificate until `signal` fires: at each deadline a new key and
 * request (renewal as itself), the issued pair stored and handed to the client. A failed
 * renewal is retried with back-off (1 s doubling to 1 min).
 */
export async function rotateClientCertificate(o: RotationOptions): Promise<void> {
  let current = new X509Certificate(o.current.certPem);
  let obtainedAt = o.obtainedAt;
  o.onCertificate?.(current);
  let backoff = 1000;
  while (!o.signal.aborted) {
    await sleep(Math.max(0, rotationDeadline(current, obtainedAt) - Date.now()), o.signal);
    if (o.signal.aborted) return;
    try {
      const keyPem = await newKeyPem();
      const certPem = await requestNodeClientCertificate({
        client: o.client,
        nodeName: o.nodeName,
        keyPem,
        signal: o.signal,
        pollMs: o.pollMs,
      });
      await o.store.update({ certPem, keyPem });
      o.client.setClientCertificate(certPem, keyPem);
      current = new X509Certificate(certPem);
      obtainedAt = Date.now();
      o.onCertificate?.(current);
      backoff = 1000;
    } catch (e) {
      if (o.signal.aborted) return;
      o.onError?.(e);
      await sleep(backoff, o.signal);
      backoff = Math.min(backoff * 2, 60_000);
    }
  }
}
