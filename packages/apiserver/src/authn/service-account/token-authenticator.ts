import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { ApiObject } from '@svc/api';
import type { TokenAuthenticator, TokenAuthResult } from '@svc/component-base';
import type { AuthnObjectResource, ObjectGetter } from '../object-getter.js';
import { privateClaimsOf, serviceAccountUser, type ObjectClaim, type PrivateClaims } from './claims.js';
import type { ServiceAccountAlg, VerificationKey } from './keys.js';

/** Clock skew allowed on `exp` and `nbf` (go-jose's default leeway, which Kubernetes uses). */
const LEEWAY_SECONDS = 60;
/** A pod deleted longer ago than this no longer backs its tokens (Kubernetes' grace). */
const POD_DELETION_GRACE_MS = 60_000;
const ALGORITHMS: readonly ServiceAccountAlg[] = ['RS256', 'ES256', 'ES384', 'ES512'];

export interface ServiceAccountTokenAuthenticatorOptions {
  /** `--service-account-issuer` values; tokens of other issuers are not this authenticator's. */
  issuers: readonly string[];
  keys: readonly VerificationKey[];
  /** `--service-account-lookup`: the account (and bound objects) must still exist with the same uid. */
  lookup: boolean;
  getObject: ObjectGetter;
  now?: () => number;
}

/**
 * Service-account JWTs: signed by one of the keys, issued by one of the issuers, for one of
 * the wanted audiences, not expired, with Kubernetes' private claim; with lookup, the account,
 * a bound Secret, Pod or Node must still exist with the uid of the claim.
 */
export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  private readonly o: ServiceAccountTokenAuthenticatorOptions;

  constructor(o: ServiceAccountTokenAuthenticatorOptions) {
    this.o = o;
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthResult | null> {
    let unverified: JWTPayload;
    let header: { alg?: string; kid?: string };
    try {
      unverified = decodeJwt(token);
      header = decodeProtectedHeader(token);
    } catch {
      return null; // not a JWT
    }
    if (typeof unverified.iss !== 'string' || !this.o.issuers.includes(unverified.iss)) return null;
    if (!ALGORITHMS.includes(header.alg as ServiceAccountAlg))
      throw new Error(`service account token: signing algorithm ${JSON.stringify(header.alg)} is not allowed`);
    const byKid = header.kid ? this.o.keys.filter((k) => k.kid === header.kid) : [];
    const candidates = (byKid.length > 0 ? byKid : this.o.keys).filter((k) => k.alg === header.alg);
    const nowSeconds = Math.floor((this.o.now?.() ?? Date.now()) / 1000);
    let payload: JWTPayload | undefined;
    for (const k of candidates) {
      try {
        ({ payload } = await jwtVerify(token, k.key, {
          issuer: [...this.o.issuers],
          audience: [...audiences],
          algorithms: [k.alg],
          clockTolerance: LEEWAY_SECONDS,
          requiredClaims: ['exp', 'sub'],
          currentDate: new Date(nowSeconds * 1000),
        }));
        break;
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') continue;
        throw new Error(`service account token: ${(e as Error).message}`, { cause: e });
      }
    }
    if (!payload) throw new Error('service account token: invalid signature');
    const claims = privateClaimsOf(payload);
    if (this.o.lookup) await this.checkObjects(claims);
    const tokenAud = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    return {
      user: serviceAccountUser(claims, typeof payload.jti === 'string' ? payload.jti : undefined),
      audiences: audiences.filter((a) => tokenAud.includes(a)),
    };
  }

  private async checkObjects(c: PrivateClaims): Promise<void> {
    const check = async (resource: AuthnObjectResource, namespace: string, claim: ObjectClaim): Promise<ApiObject> => {
      const what = `${resource.replace(/s$/, '')} ${namespace ? `${namespace}/` : ''}${claim.name}`;
      const obj = await this.o.getObject({ resource, namespace, name: claim.name });
      if (!obj) throw new Error(`service account token has been invalidated: ${what} no longer exists`);
      if (obj.metadata.uid !== claim.uid)
        throw new Error(
          `service account token has been invalidated: the uid of ${what} (${obj.metadata.uid ?? ''}) does not match the claim (${claim.uid})`,
        );
      return obj;
    };
    const sa = await check('serviceaccounts', c.namespace, c.serviceaccount);
    if (sa.metadata.deletionTimestamp)
      throw new Error(
        `service account token has been invalidated: serviceaccount ${c.namespace}/${c.serviceaccount.name} is being deleted`,
      );
    if (c.secret) {
      const s = await check('secrets', c.namespace, c.secret);
      if (s.metadata.deletionTimestamp)
        throw new Error(
          `service account token has been invalidated: secret ${c.namespace}/${c.secret.name} is being deleted`,
        );
    }
    if (c.pod) {
      const p = await check('pods', c.namespace, c.pod);
      const deleted = p.metadata.deletionTimestamp ? Date.parse(p.metadata.deletionTimestamp) : undefined;
      if (deleted !== undefined && deleted < (this.o.now?.() ?? Date.now()) - POD_DELETION_GRACE_MS) {
        throw new Error(`service account token has been invalidated: pod ${c.namespace}/${c.pod.name} was deleted`);
      }
    } else if (c.node) {
      // A pod's node is information only; a token bound to the node itself needs the node.
      const n = await check('nodes', '', c.node);
      if (n.metadata.deletionTimestamp)
        throw new Error(`service account token has been invalidated: node ${c.node.name} is being deleted`);
    }
  }
}
