import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import {
  badRequest,
  conflict,
  fieldErrors,
  invalid,
  notFound,
  serviceAccountClaimKey,
  tokenRequest,
  type ApiObject,
  type FieldError,
} from '@svc/api';
import type { ObjectGetter } from '../object-getter.js';
import { serviceAccountUsername, type PrivateClaims } from './claims.js';
import type { SigningKey } from './keys.js';

export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const BINDABLE_KINDS = ['Pod', 'Secret', 'Node'] as const;

/** Signs service-account tokens with `--service-account-signing-key-file` for the first issuer. */
export class ServiceAccountTokenSigner {
  constructor(
    readonly key: SigningKey,
    readonly issuer: string,
  ) {}

  sign(claims: Record<string, unknown>): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: this.key.alg, kid: this.key.kid }).sign(this.key.privateKey);
  }
}

export interface TokenRequestDeps {
  signer: ServiceAccountTokenSigner;
  /** Audiences of a request that names none (`--api-audiences`). */
  apiAudiences: readonly string[];
  getObject: ObjectGetter;
  now?: () => number;
}

interface BoundObjectRef {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

interface TokenRequestSpec {
  audiences?: string[];
  expirationSeconds?: number;
  boundObjectRef?: BoundObjectRef;
}

function validate(spec: TokenRequestSpec): FieldError[] {
  const errs: FieldError[] = [];
  const exp = spec.expirationSeconds;
  if (exp !== undefined) {
    if (!Number.isInteger(exp)) errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'must be an integer'));
    else if (exp < MIN_EXPIRATION_SECONDS)
      errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes'));
    else if (exp > MAX_EXPIRATION_SECONDS)
      errs.push(
        fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds'),
      );
  }
  (spec.audiences ?? []).forEach((a, i) => {
    if (a === '') errs.push(fieldErrors.invalid(`spec.audiences[${i}]`, a, 'must not be empty'));
  });
  const ref = spec.boundObjectRef;
  if (ref) {
    if (!ref.kind) errs.push(fieldErrors.required('spec.boundObjectRef.kind'));
    if (!ref.name) errs.push(fieldErrors.required('spec.boundObjectRef.name'));
  }
  return errs;
}

/**
 * TokenRequest (`POST .../serviceaccounts/<name>/token`): a signed token for an existing
 * account, for the requested audiences (default `--api-audiences`), valid `expirationSeconds`
 * (default 3600, at least 600), optionally bound to a Pod, Secret (same namespace) or Node
 * whose uid goes into the token. Answers with the request, defaults filled, and its status.
 */
export async function createServiceAccountToken(
  d: TokenRequestDeps,
  req: { namespace: string; name: string; body: ApiObject },
): Promise<ApiObject> {
  const kind = tokenRequest();
  const spec = { ...(req.body.spec as TokenRequestSpec | undefined) };
  const errs = validate(spec);
  if (errs.length > 0) throw invalid({ group: kind.group, kind: kind.kind }, req.name, errs);
  const audiences = spec.audiences?.length ? spec.audiences : [...d.apiAudiences];
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;

  const sa = await d.getObject(
    { resource: 'serviceaccounts', namespace: req.namespace, name: req.name },
    { fresh: true },
  );
  if (!sa) throw notFound({ group: '', resource: 'serviceaccounts' }, req.name);
  const claims: PrivateClaims = {
    namespace: req.namespace,
    serviceaccount: { name: req.name, uid: sa.metadata.uid ?? '' },
  };

  const ref = spec.boundObjectRef;
  if (ref) {
    if (
      !(BINDABLE_KINDS as readonly string[]).includes(ref.kind ?? '') ||
      (ref.apiVersion !== undefined && ref.apiVersion !== '' && ref.apiVersion !== 'v1')
    ) {
      throw badRequest(`cannot bind token to object of type ${ref.apiVersion || 'v1'}, Kind=${ref.kind ?? ''}`);
    }
    const resource = ref.kind === 'Pod' ? 'pods' : ref.kind === 'Secret' ? 'secrets' : 'nodes';
    const obj = await d.getObject(
      { resource, namespace: resource === 'nodes' ? '' : req.namespace, name: ref.name ?? '' },
      { fresh: true },
    );
    if (!obj) throw notFound({ group: '', resource }, ref.name ?? '');
    const uid = obj.metadata.uid ?? '';
    if (ref.uid && ref.uid !== uid) {
      throw conflict(
        { group: '', resource: ref.kind ?? '' },
        ref.name ?? '',
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    const bound = { name: ref.name ?? '', uid };
    if (ref.kind === 'Pod') {
      const podSa = (obj.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName || 'default';
      if (podSa !== req.name)
        throw badRequest(
          `cannot bind token for serviceaccount "${req.name}" to pod running with different serviceaccount name.`,
        );
      claims.pod = bound;
      const nodeName = (obj.spec as { nodeName?: string } | undefined)?.nodeName;
      const node = nodeName ? await d.getObject({ resource: 'nodes', namespace: '', name: nodeName }) : undefined;
      if (node) claims.node = { name: nodeName ?? '', uid: node.metadata.uid ?? '' };
    } else if (ref.kind === 'Secret') {
      claims.secret = bound;
    } else {
      claims.node = bound;
    }
  }

  const now = Math.floor((d.now?.() ?? Date.now()) / 1000);
  const exp = now + expirationSeconds;
  const token = await d.signer.sign({
    aud: audiences,
    exp,
    iat: now,
    iss: d.signer.issuer,
    jti: randomUUID(),
    [serviceAccountClaimKey()]: claims,
    nbf: now,
    sub: serviceAccountUsername(req.namespace, req.name),
  });
  return {
    apiVersion: req.body.apiVersion,
    kind: kind.kind,
    metadata: { name: req.name, namespace: req.namespace, creationTimestamp: null } as unknown as ApiObject['metadata'],
    spec: { audiences, expirationSeconds, ...(ref ? { boundObjectRef: ref } : {}) },
    status: { token, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  };
}
