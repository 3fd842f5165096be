import { createHash } from 'node:crypto';

/** One DER element: its tag, where its content starts, and where the element ends. */
function element(der: Buffer, offset: number): { tag: number; start: number; end: number } {
  const tag = der[offset];
  const first = der[offset + 1];
  if (tag === undefined || first === undefined) throw new Error('truncated DER');
  let length = first;
  let start = offset + 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n === 0 || n > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + (der[start + i] ?? 0);
    start += n;
  }
  const end = start + length;
  if (end > der.length) throw new Error('truncated DER');
  return { tag, start, end };
}

/**
 * The DER SubjectPublicKeyInfo of an X.509 certificate, byte for byte as the certificate
 * carries it (Go's RawSubjectPublicKeyInfo): the seventh field of tbsCertificate, counting
 * the optional version.
 */
export function subjectPublicKeyInfo(certDer: Buffer): Buffer {
  const tbs = element(certDer, element(certDer, 0).start);
  let offset = tbs.start;
  if (element(certDer, offset).tag === 0xa0) offset = element(certDer, offset).end;
  // serialNumber, signature, issuer, validity, subject
  for (let i = 0; i < 5; i++) offset = element(certDer, offset).end;
  const spki = element(certDer, offset);
  if (spki.tag !== 0x30) throw new Error('certificate has no SubjectPublicKeyInfo');
  return certDer.subarray(offset, spki.end);
}

/** The DER of every CERTIFICATE block of a PEM bundle. */
export function certificatesOfPem(pem: string): Buffer[] {
  const out: Buffer[] = [];
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)) {
    out.push(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64'));
  }
  return out;
}

/** kubeadm's public-key pin of a certificate: `sha256:<hex of SHA-256 over its DER SubjectPublicKeyInfo>`. */
export function publicKeyPin(certDer: Buffer): string {
  return `sha256:${createHash('sha256').update(subjectPublicKeyInfo(certDer)).digest('hex')}`;
}

/**
 * A set of pins (`--discovery-token-ca-cert-hash`), checked as kubeadm's pubkeypin.Set:
 * `sha256:<64 hex>`, any case, each other form refused with kubeadm's message.
 */
export class PublicKeyPins {
  private readonly sha256 = new Set<string>();

  constructor(pins: readonly string[]) {
    for (const pin of pins) {
      const parts = pin.split(':');
      if (parts.length !== 2) throw new Error('invalid hash, expected "format:hex-value". Known format(s) are: sha256');
      const [format = '', value = ''] = parts;
      if (format.toLowerCase() !== 'sha256')
        throw new Error(`unknown hash format ${JSON.stringify(format)}. Known format(s) are: sha256`);
      if (value.length !== 64)
        throw new Error(
          `invalid hash ${JSON.stringify(pin)}, expected a 32 byte SHA-256 hash, found ${Math.floor(value.length / 2)} bytes`,
        );
      if (!/^[0-9a-fA-F]{64}$/.test(value))
        throw new Error(`invalid hash ${JSON.stringify(pin)}, could not decode SHA-256 from hex`);
      this.sha256.add(value.toLowerCase());
    }
  }

  get empty(): boolean {
    return this.sha256.size === 0;
  }

  /** Passes when one of `certs` has a pinned key; else throws naming the keys found. */
  checkAny(certs: readonly Buffer[]): void {
    const found = certs.map(publicKeyPin);
    if (found.some((p) => this.sha256.has(p.slice('sha256:'.length)))) return;
    throw new Error(`none of the public keys ${JSON.stringify(found.join(':'))} are pinned`);
  }
}
