import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { legacyServiceAccountToken, serviceAccountTokenSecretKey, type Secret } from '@svc/api';
import type { AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';
import type { ObjectGetter } from '../object-getter.js';
import { serviceAccountGroups, serviceAccountUsername } from './claims.js';
import type { ServiceAccountAlg, VerificationKey } from './keys.js';

const ALGORITHMS: readonly ServiceAccountAlg[] = ['RS256', 'ES256', 'ES384', 'ES512'];

export interface LegacyServiceAccountTokenAuthenticatorOptions {
  /** The `--service-account-key-file` keys (the same as for bound tokens). */
  keys: readonly VerificationKey[];
  /** `--service-account-lookup`: the Secret must still hold this token and the account must exist with the claimed uid. */
  lookup: boolean;
  getObject: ObjectGetter;
}

/**
 * Legacy service-account tokens, as the serviceaccount-token-controller writes them into
 * Secrets (Kubernetes' legacy validator): issued by `svc/serviceaccount` (Kubernetes'
 * `kubernetes/serviceaccount`), no expiry and no audience (so good for the server's own
 * audiences only: wrap with `audienceAgnostic`), the namespace, secret name, account name and
 * uid in private claims, `sub` naming the same account. With lookup the Secret must exist, not
 * be deleting, hold exactly this token and carry no legacy-token-invalid-since label; the
 * account must exist, not be deleting, with the claimed uid.
 */
export class LegacyServiceAccountTokenAuthenticator implements AudienceAgnosticTokenAuthenticator {
  constructor(private readonly o: LegacyServiceAccountTokenAuthenticatorOptions) {}

  async authenticateToken(token: string): Promise<UserInfo | null> {
    const legacy = legacyServiceAccountToken();
    let header: { alg?: string; kid?: string };
    try {
      if (decodeJwt(token).iss !== legacy.issuer) return null;
      header = decodeProtectedHeader(token);
    } catch {
      return null; // not a JWT
    }
    if (!ALGORITHMS.includes(header.alg as ServiceAccountAlg))
      throw new Error(`service account token: signing algorithm ${JSON.stringify(header.alg)} is not allowed`);
    const byKid = header.kid ? this.o.keys.filter((k) => k.kid === header.kid) : [];
    let payload: JWTPayload | undefined;
    for (const k of (byKid.length > 0 ? byKid : this.o.keys).filter((c) => c.alg === header.alg)) {
      try {
        ({ payload } = await jwtVerify(token, k.key, { issuer: legacy.issuer, algorithms: [k.alg] }));
        break;
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') continue;
        throw new Error(`service account token: ${(e as Error).message}`, { cause: e });
      }
    }
    if (!payload) throw new Error('service account token: invalid signature');
    const claim = (name: Parameters<typeof legacy.claim>[0]): string => {
      const v = payload?.[legacy.claim(name)];
      if (typeof v !== 'string' || v === '')
        throw new Error(`service account token: claim ${legacy.claim(name)} is missing`);
      return v;
    };
    const namespace = claim('namespace');
    const secretName = claim('secret.name');
    const name = claim('service-account.name');
    const uid = claim('service-account.uid');
    if (payload.sub !== serviceAccountUsername(namespace, name))
      throw new Error('service account token: sub claim is invalid');
    if (this.o.lookup) await this.check({ token, namespace, secretName, name, uid });
    return { name: serviceAccountUsername(namespace, name), uid, groups: serviceAccountGroups(namespace) };
  }

  private async check(c: {
    token: string;
    namespace: string;
    secretName: string;
    name: string;
    uid: string;
  }): Promise<void> {
    const ref = { resource: 'secrets', namespace: c.namespace, name: c.secretName } as const;
    const holds = (s: Secret | undefined): boolean =>
      s?.data?.token !== undefined && Buffer.from(s.data.token, 'base64').toString('utf8') === c.token;
    let secret = (await this.o.getObject(ref)) as Secret | undefined;
    // The watch cache may not have the controller's write yet: read storage before refusing.
    if (!holds(secret)) secret = (await this.o.getObject(ref, { fresh: true })) as Secret | undefined;
    if (!secret || secret.metadata.deletionTimestamp) throw new Error('service account token has been invalidated');
    if (!holds(secret)) throw new Error("service account token does not match the server's copy");
    const invalidSince = serviceAccountTokenSecretKey('legacy-token-invalid-since');
    if (secret.metadata.labels?.[invalidSince])
      throw new Error(
        `the token in secret ${c.namespace}/${c.secretName} for service account ${c.namespace}/${c.name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${invalidSince}' label from the secret to temporarily allow use of this token`,
      );
    const account = await this.o.getObject({ resource: 'serviceaccounts', namespace: c.namespace, name: c.name });
    if (!account || account.metadata.deletionTimestamp) throw new Error('service account has been deleted');
    if (account.metadata.uid !== c.uid)
      throw new Error(`service account UID (${account.metadata.uid ?? ''}) does not match claim (${c.uid})`);
  }
}
