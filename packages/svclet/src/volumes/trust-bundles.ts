import { group } from '@svc/api';
import type { RestClient } from '@svc/client';
import type { ClusterTrustBundleProjection } from './volume-sources.js';

interface TrustBundle {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { signerName?: string; trustBundle?: string };
}

/**
 * The PEM of a `clusterTrustBundle` projection (feature gate ClusterTrustBundleProjection):
 * the named ClusterTrustBundle's bundle, or the bundles of every one with the signer and
 * labels asked for, joined; undefined when none is found.
 */
export async function readTrustBundles(
  client: RestClient,
  p: ClusterTrustBundleProjection,
): Promise<string | undefined> {
  const base = `/apis/${group('certificates')}/v1alpha1/clustertrustbundles`;
  if (p.name) {
    const r = await client.request('GET', `${base}/${encodeURIComponent(p.name)}`);
    return r.status === 200 ? r.json<TrustBundle>().spec?.trustBundle : undefined;
  }
  const r = await client.request('GET', base);
  if (r.status !== 200) return undefined;
  const want = p.labelSelector?.matchLabels ?? {};
  const found = (r.json<{ items?: TrustBundle[] }>().items ?? []).filter(
    (b) => b.spec?.signerName === p.signerName && Object.entries(want).every(([k, v]) => b.metadata?.labels?.[k] === v),
  );
  return found.length > 0 ? found.map((b) => b.spec?.trustBundle ?? '').join('') : undefined;
}
