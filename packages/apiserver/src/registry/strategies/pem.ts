import 'reflect-metadata';
import { webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

export interface PemBlock {
  type: string;
  hasHeaders: boolean;
  der: Buffer;
}

/**
 * The PEM blocks of `text` in order, as Go's `pem.Decode` finds them: text around blocks
 * is ignored, and so is a block whose body is not base64.
 */
export function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of text.matchAll(/-----BEGIN ([^\r\n]*?)-----\r?\n([\s\S]*?)-----END \1-----/g)) {
    const lines = (m[2] ?? '').split(/\r?\n/);
    const hasHeaders = lines.some((l) => l.includes(':'));
    const body = hasHeaders ? lines.slice(lines.findIndex((l) => l.trim() === '') + 1) : lines;
    const b64 = body.join('').replace(/[ \t]/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) continue;
    out.push({ type: m[1] ?? '', hasHeaders, der: Buffer.from(b64, 'base64') });
  }
  return out;
}

/**
 * Why a PEM PKCS#10 request is unusable (Kubernetes' ParseCSR + CheckSignature): the first
 * block must be a CERTIFICATE REQUEST that parses and is signed by its own key.
 */
export async function certificateRequestProblem(pem: string): Promise<string | undefined> {
  const [block] = pemBlocks(pem);
  if (block?.type !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(block.der);
  } catch {
    return 'x509: malformed certificate request';
  }
  try {
    return (await csr.verify()) ? undefined : 'x509: signature verification failure';
  } catch {
    return 'x509: cannot verify signature: algorithm unimplemented';
  }
}

/** Why a certificate bundle is unusable: only CERTIFICATE blocks, no headers, at least one (Kubernetes' rules). */
export function certificateBundleProblem(pem: string): string | undefined {
  const blocks = pemBlocks(pem);
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(b.type)}`;
    if (b.hasHeaders) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(b.der);
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return blocks.length === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}
