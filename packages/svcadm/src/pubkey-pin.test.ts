import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa } from '@svc/testing';
import { PublicKeyPins, certificatesOfPem, publicKeyPin, subjectPublicKeyInfo } from './pubkey-pin.js';

/** A self-signed RSA CA made by openssl (another encoder than the test CA's). */
function opensslRsaCa(dir: string): string {
  const key = join(dir, 'ca.key');
  writeFileSync(
    key,
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  return execFileSync('openssl', ['req', '-x509', '-new', '-key', key, '-subj', '/CN=rsa-ca', '-days', '1'], {
    encoding: 'utf8',
  });
}

/** The pin as kubeadm's documentation computes it with openssl. */
function opensslPin(pem: string, dir: string): string {
  const file = join(dir, 'c.pem');
  writeFileSync(file, pem);
  const pub = execFileSync('openssl', ['x509', '-pubkey', '-noout', '-in', file]);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pub });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

describe('public-key pins', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcadm-pin-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("hash the certificate's own SubjectPublicKeyInfo bytes, as openssl and Node see them (ECDSA and RSA)", async () => {
    const ec = (await createTestCa('ec-ca')).certPem;
    const rsa = opensslRsaCa(dir);
    for (const pem of [ec, rsa]) {
      const [der] = certificatesOfPem(pem);
      if (!der) throw new Error('no certificate');
      const spki = subjectPublicKeyInfo(der);
      expect(spki.equals(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
      expect(der.includes(spki)).toBe(true);
      expect(publicKeyPin(der)).toBe(opensslPin(pem, dir));
    }
  });

  it("accept sha256 pins in any case and refuse other forms with kubeadm's messages", async () => {
    const [der] = certificatesOfPem((await createTestCa('ca')).certPem);
    const [other] = certificatesOfPem((await createTestCa('other')).certPem);
    if (!der || !other) throw new Error('no certificate');
    const pin = publicKeyPin(der);
    expect(() =>
      new PublicKeyPins([pin.toUpperCase().replace('SHA256', 'sha256')]).checkAny([other, der]),
    ).not.toThrow();
    expect(() => new PublicKeyPins([pin]).checkAny([other])).toThrow(
      `none of the public keys "${publicKeyPin(other)}" are pinned`,
    );
    expect(new PublicKeyPins([]).empty).toBe(true);
    expect(() => new PublicKeyPins(['abc'])).toThrow(
      'invalid hash, expected "format:hex-value". Known format(s) are: sha256',
    );
    expect(() => new PublicKeyPins(['md5:abc'])).toThrow('unknown hash format "md5". Known format(s) are: sha256');
    expect(() => new PublicKeyPins(['sha256:abcd'])).toThrow(
      'invalid hash "sha256:abcd", expected a 32 byte SHA-256 hash, found 2 bytes',
    );
    expect(() => new PublicKeyPins([`sha256:${'g'.repeat(64)}`])).toThrow(/could not decode SHA-256 from hex/);
  });
});
