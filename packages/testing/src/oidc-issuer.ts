import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { createTestCa } from './pki.js';

export type OidcAlg = 'RS256' | 'ES256';

/** A signing key of the test issuer. */
export interface OidcKey {
  kid: string;
  alg: OidcAlg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface OidcIssuer {
  /** The issuer URL (`https://127.0.0.1:<port>/<path>`), as tokens carry it in `iss`. */
  url: string;
  /** PEM of the CA that signed the issuer's serving certificate (for `--oidc-ca-file`). */
  caPem: string;
  /** Requests served so far, by document. */
  requests: { discovery: number; jwks: number };
  /** The key new tokens are signed with. */
  current: OidcKey;
  /** Makes a new key, publishes it, signs with it from now on; `dropOld` unpublishes the others. */
  rotate(o?: { dropOld?: boolean; alg?: OidcAlg }): Promise<OidcKey>;
  /** A key that is never published (tokens signed with it have an unknown key id). */
  unpublishedKey(alg?: OidcAlg): Promise<OidcKey>;
  /** Signs `payload` as is (no claims added) with `key` (default the current one). */
  sign(payload: JWTPayload, o?: { key?: OidcKey; kid?: string | null }): Promise<string>;
  /** `iss`, `aud`, `sub`, `iat`, `exp` (an hour) filled in, overridden by `claims`. */
  token(claims?: Record<string, unknown>, o?: { key?: OidcKey }): Promise<string>;
  close(): Promise<void>;
}

async function newKey(alg: OidcAlg): Promise<OidcKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomBytes(8).toString('hex');
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/**
 * An OpenID Connect issuer served over HTTPS by the test: discovery at
 * `<url>/.well-known/openid-configuration`, keys at `<url>/keys`, with key rotation.
 */
export async function startOidcIssuer(
  o: { clientId?: string; path?: string; alg?: OidcAlg } = {},
): Promise<OidcIssuer> {
  const ca = await createTestCa('oidc-test-ca');
  const serving = await ca.issue({ commonName: '127.0.0.1', usages: ['server'], hosts: ['127.0.0.1', 'localhost'] });
  let published: OidcKey[] = [await newKey(o.alg ?? 'RS256')];
  const path = o.path ? `/${o.path.replace(/^\/+|\/+$/g, '')}` : '';
  const requests = { discovery: 0, jwks: 0 };
  let url = '';
  const server: Server = createServer({ cert: serving.chainPem, key: serving.keyPem }, (req, res) => {
    const send = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === `${path}/.well-known/openid-configuration`) {
      requests.discovery++;
      send({
        issuer: url,
        jwks_uri: `${url}/keys`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      });
    } else if (req.url === `${path}/keys`) {
      requests.jwks++;
      send({ keys: published.map((k) => k.publicJwk) });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const issuer: OidcIssuer = {
    url,
    caPem: ca.certPem,
    requests,
    current: published[0] as OidcKey,
    async rotate(r = {}) {
      const k = await newKey(r.alg ?? issuer.current.alg);
      published = r.dropOld ? [k] : [...published, k];
      issuer.current = k;
      return k;
    },
    unpublishedKey: (alg) => newKey(alg ?? 'RS256'),
    async sign(payload, s = {}) {
      const key = s.key ?? issuer.current;
      const kid = s.kid === undefined ? key.kid : s.kid;
      return new SignJWT(payload)
        .setProtectedHeader(kid === null ? { alg: key.alg } : { alg: key.alg, kid })
        .sign(key.privateKey);
    },
    token(claims = {}, s = {}) {
      const now = Math.floor(Date.now() / 1000);
      return issuer.sign(
        { iss: url, aud: o.clientId ?? 'svc-client', sub: 'alice', iat: now, exp: now + 3600, ...claims },
        s,
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return issuer;
}
