import { CompactSign } from 'jose';
import { bootstrapTokenSecretType, isConflict, isNotFound, naming, type ConfigMap, type Secret } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { bootstrapTokenExpiry, secretDataString } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

export const CLUSTER_INFO = 'cluster-info';
/** The spec's literal keys (shared/spec/NOTES.md 5). */
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/**
 * The spec's detached JWS: HS256 over `content` with the full token `<id>.<secret>` as the
 * key and the token id as `kid`; the payload part of the compact form is left empty.
 */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const jws = await new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS256', kid: tokenId })
    .sign(new TextEncoder().encode(`${tokenId}.${tokenSecret}`));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

interface SigningToken {
  id: string;
  secret: string;
  /** ms since the epoch; undefined: never. */
  expiry?: number;
}

/** Tokens of the system namespace that may sign: usage-bootstrap-signing, well-formed, not expired. */
function signingTokens(secrets: readonly Secret[], now: number): SigningToken[] {
  const out: SigningToken[] = [];
  for (const s of secrets) {
    if (s.type !== bootstrapTokenSecretType() || s.metadata.deletionTimestamp) continue;
    if (secretDataString(s, 'usage-bootstrap-signing') !== 'true') continue;
    const id = secretDataString(s, 'token-id') ?? '';
    const secret = secretDataString(s, 'token-secret') ?? '';
    if (!/^[a-z0-9]{6}$/.test(id) || !/^[a-z0-9]{16}$/.test(secret) || s.metadata.name !== `bootstrap-token-${id}`)
      continue;
    const expiry = bootstrapTokenExpiry(s);
    if (expiry !== undefined && (Number.isNaN(expiry) || expiry <= now)) continue;
    out.push({ id, secret, expiry });
  }
  return out;
}

/**
 * `bootstrap-signer-controller` (`bootstrapsigner`): keeps `cluster-info` in the public
 * namespace signed: one `jws-kubeconfig-<id>` per valid signing token, none for expired or
 * deleted tokens. It writes only when the signatures change, and looks again when the next
 * token expires.
 */
export const bootstrapSigner: ControllerDefinition = {
  name: 'bootstrap-signer-controller',
  build(ctx) {
    const publicNs = naming().publicNamespace;
    const configMaps = informer<ConfigMap>(ctx, R.configMaps(), publicNs);
    const secrets = informer<Secret>(ctx, R.secrets(), naming().systemNamespace);
    const api = new ResourceClient<ConfigMap>(ctx.client, R.configMaps()).namespace(publicNs);
    const key = `${publicNs}/${CLUSTER_INFO}`;
    const controller = newController(ctx, {
      name: 'bootstrap-signer-controller',
      queueName: 'bootstrap_signer_queue',
      reconcile: async () => {
        const cm = configMaps.store.get(key);
        if (!cm || cm.metadata.deletionTimestamp) return;
        const data = { ...cm.data };
        const content = data[KUBECONFIG_KEY];
        if (content === undefined) return;
        const now = Date.now();
        const tokens = signingTokens(secrets.store.list(), now);
        const wanted: Record<string, string> = {};
        for (const t of tokens) wanted[`${JWS_KEY_PREFIX}${t.id}`] = await detachedSignature(content, t.id, t.secret);
        const next: Record<string, string> = {};
        for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) next[k] = v;
        Object.assign(next, wanted);
        const changed = JSON.stringify(Object.entries(next).sort()) !== JSON.stringify(Object.entries(data).sort());
        if (changed) {
          try {
            await api.update({ ...cm, data: next });
          } catch (e) {
            if (isNotFound(e)) return;
            if (!isConflict(e)) throw e;
            return { requeueAfter: 0 };
          }
        }
        const nextExpiry = Math.min(...tokens.map((t) => t.expiry ?? Infinity));
        return Number.isFinite(nextExpiry) ? { requeueAfter: Math.max(0, nextExpiry - now) + 1 } : undefined;
      },
    });
    controller.watch(configMaps, (o) => (o.metadata.name === CLUSTER_INFO ? [key] : []));
    controller.watch(secrets, (o) => (o.type === bootstrapTokenSecretType() ? [key] : []));
    return controller;
  },
};
