import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import {
  isConflict,
  isNotFound,
  legacyServiceAccountToken,
  serviceAccountTokenSecretKey,
  type Secret,
  type ServiceAccount,
} from '@svc/api';
import { NAMESPACE_INDEX, ResourceClient, objectKey, splitKey } from '@svc/client';
import {
  informer,
  newController,
  runAll,
  type ControllerContext,
  type ControllerDefinition,
} from '../controller-context.js';
import type { ControllerManagerOptions } from '../options.js';
import { R } from '../resources.js';

const NAME = 'serviceaccount-token-controller';
const CURVE_ALGS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** The key legacy tokens are signed with: `--service-account-private-key-file`, its JWS algorithm and key id. */
export interface LegacyTokenKey {
  privateKey: KeyObject;
  alg: string;
  /** Kubernetes' key id: base64url SHA-256 of the public key's DER, as the API server computes it. */
  kid: string;
}

/** Reads `--service-account-private-key-file` (RSA or ECDSA, PEM); a bad file is an Error naming it. */
export function loadLegacyTokenKey(file: string): LegacyTokenKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`error reading key for service account token controller: ${file}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const type = privateKey.asymmetricKeyType;
  const alg =
    type === 'rsa'
      ? 'RS256'
      : type === 'ec'
        ? CURVE_ALGS[privateKey.asymmetricKeyDetails?.namedCurve ?? '']
        : undefined;
  if (!alg)
    throw new Error(
      `error reading key for service account token controller: ${file}: not an RSA or ECDSA (P-256/384/521) private key`,
    );
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  return { privateKey, alg, kid: createHash('sha256').update(spki).digest('base64url') };
}

/** The CA written to `ca.crt`: `--root-ca-file` (PEM certificates), else the CA the manager trusts the API server with. */
function rootCa(o: ControllerManagerOptions, clientCa: string | undefined): string {
  if (!o.rootCaFile) return clientCa ?? '';
  let pem: string;
  try {
    pem = readFileSync(o.rootCaFile, 'utf8');
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length === 0) throw new Error('data does not contain any valid RSA or ECDSA certificates');
    for (const b of blocks) new X509Certificate(b);
  } catch (e) {
    throw new Error(`error parsing root-ca-file at ${o.rootCaFile}: ${(e as Error).message}`, { cause: e });
  }
  return pem;
}

/** Kubernetes' legacy token: `sub` and the legacy private claims, issuer `svc/serviceaccount`, no expiry, no audience. */
export function signLegacyToken(key: LegacyTokenKey, sa: ServiceAccount, secretName: string): Promise<string> {
  const legacy = legacyServiceAccountToken();
  const namespace = sa.metadata.namespace ?? '';
  const name = sa.metadata.name ?? '';
  return new SignJWT({
    [legacy.claim('namespace')]: namespace,
    [legacy.claim('secret.name')]: secretName,
    [legacy.claim('service-account.name')]: name,
    [legacy.claim('service-account.uid')]: sa.metadata.uid ?? '',
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuer(legacy.issuer)
    .setSubject(`system:serviceaccount:${namespace}:${name}`)
    .sign(key.privateKey);
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/**
 * `serviceaccount-token-controller` (Kubernetes' tokens controller, with
 * LegacyServiceAccountTokenNoAutoGeneration: no Secret is made for an account): a Secret of type
 * `serviceAccountTokenSecretKey('type')` naming an existing account in its
 * `serviceAccountTokenSecretKey('service-account.name')` annotation gets `data.token` (a legacy JWT signed with `--service-account-private-key-file`),
 * `data.ca.crt` (`--root-ca-file`, else the manager's own CA), `data.namespace` and the
 * `serviceAccountTokenSecretKey('service-account.uid')` annotation. A token Secret whose account is gone, or has another
 * uid than the annotation, is deleted; so are an account's tokens when it is deleted; a deleted
 * token Secret is dropped from its account's `secrets`. Without a private key file the
 * controller does not run (as Kubernetes, with a log line).
 */
export const serviceAccountTokenController: ControllerDefinition = {
  name: NAME,
  preflight(o) {
    if (!o.serviceAccountPrivateKeyFile) return;
    loadLegacyTokenKey(o.serviceAccountPrivateKeyFile);
    rootCa(o, undefined);
  },
  build(ctx: ControllerContext) {
    const file = ctx.options.serviceAccountPrivateKeyFile;
    if (!file) {
      ctx.logger.info('controller is disabled because there is no private key', { controller: NAME });
      return { run: async () => {} };
    }
    const key = loadLegacyTokenKey(file);
    const ca = rootCa(ctx.options, ctx.client.config.caPem);
    const tokenType = serviceAccountTokenSecretKey('type');
    const nameKey = serviceAccountTokenSecretKey('service-account.name');
    const uidKey = serviceAccountTokenSecretKey('service-account.uid');
    const accounts = informer<ServiceAccount>(ctx, R.serviceAccounts());
    const secrets = informer<Secret>(ctx, R.secrets());
    const secretsApi = (ns: string): ResourceClient<Secret> =>
      new ResourceClient<Secret>(ctx.client, R.secrets()).namespace(ns);
    const accountsApi = (ns: string): ResourceClient<ServiceAccount> =>
      new ResourceClient<ServiceAccount>(ctx.client, R.serviceAccounts()).namespace(ns);
    const workers = ctx.options.concurrentSyncs['serviceaccount-token'];
    /** Accounts of deleted token Secrets, by the Secret's key, until the reference is removed. */
    const deleted = new Map<string, { account: string; uid: string }>();

    /** The account, from the cache or (`live`) the API; undefined when gone or of another uid than `uid`. */
    const account = async (ref: {
      ns: string;
      name: string;
      uid: string;
      live: boolean;
    }): Promise<ServiceAccount | undefined> => {
      const { ns, name, uid, live } = ref;
      const matches = (sa: ServiceAccount | undefined): sa is ServiceAccount =>
        !!sa && (!uid || sa.metadata.uid === uid);
      const cached = accounts.store.get(`${ns}/${name}`);
      if (matches(cached)) return cached;
      if (!live || !name) return undefined;
      const fetched = await accountsApi(ns).find(name);
      return matches(fetched) ? fetched : undefined;
    };

    const ignoreGone = (e: unknown): void => {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    };

    const needs = (s: Secret): { ca: boolean; namespace: boolean; token: boolean } => ({
      ca: ca !== '' && s.data?.['ca.crt'] !== b64(ca),
      namespace: !s.data?.namespace,
      token: !s.data?.token,
    });

    const fillIfNeeded = async (sa: ServiceAccount, cached: Secret): Promise<void> => {
      if (!Object.values(needs(cached)).some(Boolean)) return;
      const ns = cached.metadata.namespace ?? '';
      const live = await secretsApi(ns).find(cached.metadata.name ?? '');
      // Not there any more, or newer than the cache: the coming watch event brings it back here.
      if (!live || live.metadata.resourceVersion !== cached.metadata.resourceVersion) return;
      const n = needs(live);
      if (!Object.values(n).some(Boolean)) return;
      const data = { ...(live.data ?? {}) };
      if (n.ca) data['ca.crt'] = b64(ca);
      if (n.namespace) data.namespace = b64(ns);
      if (n.token) data.token = b64(await signLegacyToken(key, sa, live.metadata.name ?? ''));
      const annotations = {
        ...(live.metadata.annotations ?? {}),
        [nameKey]: sa.metadata.name ?? '',
        [uidKey]: sa.metadata.uid ?? '',
      };
      await secretsApi(ns)
        .update({ ...live, metadata: { ...live.metadata, annotations }, data })
        .catch(ignoreGone);
    };

    const removeReference = async (ns: string, secretName: string, ref: { account: string; uid: string }) => {
      const sa = await account({ ns, name: ref.account, uid: ref.uid, live: true });
      if (!sa || !(sa.secrets ?? []).some((s) => s.name === secretName)) return;
      // A conflict throws: the key is retried with a fresh read.
      await accountsApi(ns)
        .update({ ...sa, secrets: (sa.secrets ?? []).filter((s) => s.name !== secretName) })
        .catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
    };

    const secretController = newController(ctx, {
      name: NAME,
      queueName: 'serviceaccount_tokens_secret',
      workers,
      reconcile: async (key) => {
        const { namespace = '', name } = splitKey(key);
        const secret = secrets.store.get(key);
        if (!secret || secret.type !== tokenType) {
          const ref = deleted.get(key);
          if (ref && !secret) await removeReference(namespace, name, ref);
          deleted.delete(key);
          return;
        }
        const annotations = secret.metadata.annotations ?? {};
        const sa = await account({
          ns: namespace,
          name: annotations[nameKey] ?? '',
          uid: annotations[uidKey] ?? '',
          live: true,
        });
        if (sa) {
          await fillIfNeeded(sa, secret);
          return;
        }
        await secretsApi(namespace)
          .delete(name, { preconditions: { uid: secret.metadata.uid } })
          .catch(ignoreGone);
      },
    });
    secretController.watch(secrets, () => []);
    secrets.addEventHandler({
      onAdd: (s) => {
        if (s.type === tokenType) secretController.enqueue(objectKey(s));
      },
      onUpdate: (_old, s) => {
        if (s.type === tokenType) secretController.enqueue(objectKey(s));
      },
      onDelete: (s) => {
        if (s.type !== tokenType) return;
        const a = s.metadata.annotations ?? {};
        deleted.set(objectKey(s), { account: a[nameKey] ?? '', uid: a[uidKey] ?? '' });
        secretController.enqueue(objectKey(s));
      },
    });

    const accountController = newController(ctx, {
      name: NAME,
      queueName: 'serviceaccount_tokens_service',
      workers,
      reconcile: async (key) => {
        if (accounts.store.get(key)) return;
        const { namespace = '', name } = splitKey(key);
        for (const s of secrets.store.byIndex(NAMESPACE_INDEX, namespace)) {
          if (s.type !== tokenType || s.metadata.annotations?.[nameKey] !== name) continue;
          await secretsApi(namespace)
            .delete(s.metadata.name ?? '', { preconditions: { uid: s.metadata.uid } })
            .catch(ignoreGone);
        }
      },
    });
    accountController.watch(accounts);
    accountController.watch(secrets, () => []);
    return runAll([secretController, accountController]);
  },
};
