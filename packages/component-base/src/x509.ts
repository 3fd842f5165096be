import 'reflect-metadata';
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { authenticationExtraKey } from '@svc/api';
import type { Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
/** Longest chain searched (leaf, intermediates, root), as a guard against loops. */
const MAX_DEPTH = 10;

/** Splits a PEM bundle into its CERTIFICATE blocks; anything else in the file is an error. */
export function parseCertificateBundle(pem: string, file = 'CA bundle'): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  const certs: X509Certificate[] = [];
  for (const b of blocks) {
    if (!b.startsWith('-----BEGIN CERTIFICATE-----')) continue;
    try {
      certs.push(new X509Certificate(b));
    } catch (e) {
      throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  if (certs.length === 0) throw new Error(`${file}: no certificates found`);
  return certs;
}

function validAt(c: X509Certificate, now: number): string | undefined {
  const from = Date.parse(c.validFrom);
  const to = Date.parse(c.validTo);
  if (now < from || now > to) {
    return `x509: certificate has expired or is not yet valid: current time ${new Date(now).toISOString()} is ${now > to ? `after ${new Date(to).toISOString()}` : `before ${new Date(from).toISOString()}`}`;
  }
  return undefined;
}

/** No extended key usage means any; otherwise client authentication (or any) must be listed. */
function allowsClientAuth(c: X509Certificate): boolean {
  const eku = c.keyUsage as string[] | undefined;
  return !eku || eku.includes(CLIENT_AUTH) || eku.includes(ANY_EKU);
}

function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** What a client certificate chain is verified against (Go's `x509.VerifyOptions`). */
export interface ChainVerifyOptions {
  /** The certificates the client sent after its leaf. */
  intermediates: readonly X509Certificate[];
  roots: readonly X509Certificate[];
  /** The time of verification (ms since the epoch). */
  now: number;
}

/**
 * Verifies `leaf` for client authentication against `roots`, using `intermediates` (as the
 * client sent them) to build the chain; returns the chain leaf first, or throws why not.
 * Every certificate of the chain must be valid at `now`; intermediates must be CAs; as in Go's
 * `x509.Verify`, roots are trusted as they are.
 */
export function verifyClientChain(
  leaf: X509Certificate,
  { intermediates, roots, now }: ChainVerifyOptions,
): X509Certificate[] {
  const expired = validAt(leaf, now);
  if (expired) throw new Error(expired);
  if (!allowsClientAuth(leaf)) throw new Error('x509: certificate specifies an incompatible key usage');
  let reason = 'x509: certificate signed by unknown authority';
  const search = (cert: X509Certificate, depth: number, used: Set<X509Certificate>): X509Certificate[] | undefined => {
    for (const r of roots) {
      if (r.raw.equals(cert.raw)) return [cert];
      if (signedBy(cert, r)) {
        const e = validAt(r, now);
        if (!e) return [cert, r];
        reason = e;
      }
    }
    if (depth >= MAX_DEPTH) return undefined;
    for (const i of intermediates) {
      if (used.has(i) || !i.ca || !signedBy(cert, i)) continue;
      const e = validAt(i, now);
      if (e) {
        reason = e;
        continue;
      }
      if (!allowsClientAuth(i)) {
        reason = 'x509: certificate specifies an incompatible key usage';
        continue;
      }
      const rest = search(i, depth + 1, new Set([...used, i]));
      if (rest) return [cert, ...rest];
    }
    return undefined;
  };
  const chain = search(leaf, 1, new Set());
  if (!chain) throw new Error(reason);
  return chain;
}

/** The certificates the peer presented, leaf first (Node links them through `issuerCertificate`). */
function presentedChain(peer: DetailedPeerCertificate): Buffer[] {
  const out: Buffer[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = peer; c?.raw && out.length < MAX_DEPTH; c = c.issuerCertificate) {
    const id = c.fingerprint256;
    if (seen.has(id)) break;
    seen.add(id);
    out.push(c.raw);
  }
  return out;
}

interface Verified {
  user: UserInfo;
  /** The chain stops being valid at this time (ms). */
  until: number;
}

/**
 * `--client-ca-file`: a client certificate that chains to one of the CAs is the user of its
 * subject's Common Name, in one group per Organization. A certificate that does not verify
 * (unknown CA, expired, wrong key usage, no Common Name) fails the request; no certificate
 * is no opinion. Results are kept per connection until the chain expires.
 */
export class ClientCertAuthenticator implements Authenticator {
  private readonly verified = new WeakMap<TLSSocket, Verified>();

  constructor(
    private readonly roots: readonly X509Certificate[],
    private readonly now: () => number = Date.now,
  ) {}

  static fromPem(pem: string, file?: string): ClientCertAuthenticator {
    return new ClientCertAuthenticator(parseCertificateBundle(pem, file));
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const socket = req.socket;
    if (!(socket instanceof TLSSocket)) return null;
    const now = this.now();
    const known = this.verified.get(socket);
    if (known && now <= known.until) return known.user;
    const peer = socket.getPeerCertificate(true);
    if (!peer?.raw) return null;
    const [leafRaw, ...rest] = presentedChain(peer);
    if (!leafRaw) return null;
    const leaf = new X509Certificate(leafRaw);
    const chain = verifyClientChain(leaf, {
      intermediates: rest.map((r) => new X509Certificate(r)),
      roots: this.roots,
      now,
    });
    const user = userOf(leafRaw);
    this.verified.set(socket, { user, until: Math.min(...chain.map((c) => Date.parse(c.validTo))) });
    return user;
  }
}

/** CN → user name, each O → a group; the certificate's SHA-256 as credential id (as Kubernetes). */
function userOf(der: Buffer): UserInfo {
  const subject = new x509.X509Certificate(der).subjectName;
  const [cn] = subject.getField('CN');
  if (!cn) throw new Error('x509: the client certificate has no subject Common Name');
  const user: UserInfo = { name: cn, groups: subject.getField('O') };
  user.extra = {
    [authenticationExtraKey('credential-id')]: [`X509SHA256=${createHash('sha256').update(der).digest('hex')}`],
  };
  return user;
}
