import type { VerificationKey } from './keys.js';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/**
 * Service-account issuer discovery (OIDC discovery document), as Kubernetes serves it so that
 * other parties can verify the cluster's tokens. Served only for an `https` issuer URL.
 */
export function openIdConfiguration(issuer: string, jwksUri: string, keys: readonly VerificationKey[]): object {
  return {
    issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
  };
}

/** The public keys tokens are verified with, as a JWK set (one entry per key id). */
export function jwks(keys: readonly VerificationKey[]): object {
  const seen = new Set<string>();
  const out: object[] = [];
  for (const k of keys) {
    if (seen.has(k.kid)) continue;
    seen.add(k.kid);
    out.push({ use: 'sig', ...k.key.export({ format: 'jwk' }), kid: k.kid, alg: k.alg });
  }
  return { keys: out };
}

export function isHttpsUrl(s: string): boolean {
  try {
    return new URL(s).protocol === 'https:';
  } catch {
    return false;
  }
}
