import { flattenedVerify } from 'jose';
import { naming, type ApiObject } from '@svc/api';
import { RestClient, type ClientConfig } from '@svc/client';
import { formatDuration, sleep } from '@svc/machinery';
import { CLUSTER_INFO, JWS_KEY_PREFIX, KUBECONFIG_KEY, clusterOfKubeconfig } from './cluster-info.js';
import { certificatesOfPem, type PublicKeyPins } from './pubkey-pin.js';

/** A failure that retrying cannot mend (a bad signature, an unpinned CA). */
export class DiscoveryError extends Error {}

/**
 * Whether `jws` is the spec's detached JWS over `content` for the token: compact form with an
 * empty payload, header `kid` = the token id, HS256 with the full token `<id>.<secret>` as the
 * key. Nothing else verifies.
 */
export async function verifyDetachedJws(
  jws: string,
  content: string,
  token: { id: string; secret: string },
): Promise<boolean> {
  const parts = jws.split('.');
  const [header = '', payload, signature = ''] = parts;
  if (parts.length !== 3 || payload !== '' || !header || !signature) return false;
  try {
    const h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid?: unknown };
    if (h.kid !== token.id) return false;
    await flattenedVerify(
      { protected: header, payload: Buffer.from(content).toString('base64url'), signature },
      new TextEncoder().encode(`${token.id}.${token.secret}`),
      { algorithms: ['HS256'] },
    );
    return true;
  } catch {
    return false;
  }
}

/** `host:port` or an https URL → the API server's URL. */
export function serverUrl(endpoint: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
}

export interface DiscoveryOptions {
  /** The API server as given on the command line (`host:port` or a URL). */
  endpoint: string;
  token: { id: string; secret: string };
  pins: PublicKeyPins;
  unsafeSkipCaVerification: boolean;
  /** How long cluster-info may take to be reachable and signed for the token. */
  timeoutMs: number;
  /**
   * Between tries (default 250 ms; kubeadm waits 5 s): a node started with the control plane
   * finds cluster-info signed as soon as the controller manager's bootstrap signer has run.
   */
  retryIntervalMs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface DiscoveredCluster {
  /** The server and CA cluster-info names; the CA is now trusted. */
  server: string;
  caPem: string;
}

function clientFor(server: string, caPem?: string): RestClient {
  const config: ClientConfig = {
    server,
    caPem,
    insecureSkipTlsVerify: caPem === undefined,
    namespace: 'default',
    user: {},
    clusterEntry: { server },
  };
  return new RestClient(config);
}

/** GETs cluster-info anonymously; throws on anything but a ConfigMap. */
async function fetchClusterInfo(client: RestClient): Promise<Record<string, string>> {
  const r = await client.request('GET', `/api/v1/namespaces/${naming().publicNamespace}/configmaps/${CLUSTER_INFO}`);
  if (r.status !== 200) {
    let message = r.body.toString('utf8');
    try {
      message = r.json<{ message?: string }>().message ?? message;
    } catch {
      /* not a Status */
    }
    throw new Error(`reading the ${CLUSTER_INFO} ConfigMap anonymously: ${r.status}: ${message}`);
  }
  return (r.json<ApiObject>().data ?? {}) as Record<string, string>;
}

/**
 * Token discovery as kubeadm does it. cluster-info is fetched anonymously over TLS without
 * trusting the server, until it is there and signed for the token (or the timeout passes);
 * the signature must then verify (no retry), the CA it names must match a pin (unless pins
 * are waived), and a second fetch, now verifying the server with that CA, must return the
 * same kubeconfig. Throws `DiscoveryError` with the reason otherwise.
 */
export async function discoverCluster(o: DiscoveryOptions): Promise<DiscoveredCluster> {
  if (o.pins.empty && !o.unsafeSkipCaVerification) {
    throw new DiscoveryError(
      'using token-based discovery without --discovery-token-ca-cert-hash can be unsafe; pass --discovery-token-ca-cert-hash sha256:<hash> (see "svcadm token ca-cert-hash"), or --discovery-token-unsafe-skip-ca-verification to continue',
    );
  }
  const server = serverUrl(o.endpoint);
  const deadline = Date.now() + o.timeoutMs;
  const log = o.log ?? ((): void => undefined);
  let kubeconfig: string | undefined;
  let lastWhy = '';
  const insecure = clientFor(server);
  try {
    for (;;) {
      let why: string;
      try {
        const data = await fetchClusterInfo(insecure);
        const content = data[KUBECONFIG_KEY];
        const jws = data[`${JWS_KEY_PREFIX}${o.token.id}`];
        if (content === undefined) {
          why = `there is no ${KUBECONFIG_KEY} key in the ${CLUSTER_INFO} ConfigMap: this API server is not set up for token bootstrapping ("svcadm init cluster-info")`;
        } else if (jws === undefined) {
          why = `no signature for token ${JSON.stringify(o.token.id)} in the ${CLUSTER_INFO} ConfigMap: the token is unknown to this cluster, expired, or not for signing; create one with "svcadm token create"`;
        } else {
          if (!(await verifyDetachedJws(jws, content, o.token))) {
            throw new DiscoveryError(
              `failed to verify the JWS signature of the ${CLUSTER_INFO} ConfigMap for token ${JSON.stringify(o.token.id)}: wrong token secret, or the content was altered; can't trust this API server`,
            );
          }
          kubeconfig = content;
          break;
        }
      } catch (e) {
        if (e instanceof DiscoveryError) throw e;
        why = (e as Error).message;
      }
      if (Date.now() >= deadline || o.signal?.aborted)
        throw new DiscoveryError(`${why} (gave up after ${formatDuration(o.timeoutMs)})`);
      // Each reason once while it lasts, not a line per try.
      if (why !== lastWhy) log(`[discovery] ${why}; trying again`);
      lastWhy = why;
      await sleep(Math.min(o.retryIntervalMs ?? 250, Math.max(0, deadline - Date.now())), o.signal);
    }
  } finally {
    insecure.close();
  }
  log(`[discovery] cluster-info is signed for token ${JSON.stringify(o.token.id)}`);
  let cluster: DiscoveredCluster;
  try {
    cluster = clusterOfKubeconfig(kubeconfig);
  } catch (e) {
    throw new DiscoveryError((e as Error).message);
  }
  const certs = certificatesOfPem(cluster.caPem);
  if (certs.length === 0) throw new DiscoveryError(`the ${CLUSTER_INFO} ConfigMap names no CA certificate`);
  if (!o.pins.empty) {
    try {
      o.pins.checkAny(certs);
    } catch (e) {
      throw new DiscoveryError(`cluster CA found in the ${CLUSTER_INFO} ConfigMap is invalid: ${(e as Error).message}`);
    }
    log('[discovery] the cluster CA matches a pinned public key');
  }
  const secure = clientFor(server, cluster.caPem);
  try {
    const again = (await fetchClusterInfo(secure))[KUBECONFIG_KEY];
    if (again !== kubeconfig)
      throw new DiscoveryError(
        `the second ${KUBECONFIG_KEY} of the ${CLUSTER_INFO} ConfigMap (over verified TLS) differs from the first`,
      );
  } catch (e) {
    if (e instanceof DiscoveryError) throw e;
    throw new DiscoveryError(
      `failed to fetch the ${CLUSTER_INFO} ConfigMap a second time, verifying the server with the cluster CA: ${(e as Error).message}`,
    );
  } finally {
    secure.close();
  }
  return cluster;
}
