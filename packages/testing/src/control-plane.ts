import type { ApiObject, NamingScheme } from '@svc/api';
import {
  RestClient,
  dynamicResource,
  loadSvcconfig,
  resourceFor,
  type ApiResource,
  type ResourceClient,
  type ResourceQuery,
  type ResourceRef,
} from '@svc/client';
import { startTestApiServer, type TestApiServer } from './api-server.js';
import type { EtcdHandle } from './etcd.js';
import type { HttpsClient } from './https-client.js';
import { installCrds, readCrdFiles, type CrdManifest } from './crds.js';

export interface ControlPlaneOptions {
  /**
   * CustomResourceDefinition manifests to install before `startControlPlane` resolves: paths
   * of YAML or JSON files (several `---` documents per file allowed) or objects. Written as
   * apiextensions/v1 under either naming's group suffix; either works under either naming.
   */
  crds?: Array<string | CrdManifest>;
  /** `svc` (default) or `kubernetes` (the API server's `--naming`; it is process-wide). */
  naming?: NamingScheme;
  /** Extra svc-apiserver flags. */
  args?: string[];
  /** Use an etcd started elsewhere (then `stop()` leaves it running). */
  etcd?: EtcdHandle;
  /** How long to wait for the CRDs to be Established and served; default 30 s. */
  crdTimeoutMs?: number;
}

/** A running etcd and API server, and clients of it with an admin (`system:masters`) token. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** The CA that signed the server's certificate (PEM). */
  caPem: string;
  /** The admin bearer token. */
  token: string;
  /** An admin svcconfig (kubeconfig format) for kubectl, `loadSvcconfig` or `@kubernetes/client-node`. */
  svcconfigPath: string;
  /** Raw HTTPS requests with the admin token. */
  client: HttpsClient;
  /** The `@svc/client` REST client with the admin credentials. */
  restClient: RestClient;
  /** The resources the CRDs serve (one entry per served version), in install order. */
  crds: ApiResource[];
  /** `dynamicResource(restClient, ref)`: a typed client of any resource. */
  resource<T extends ApiObject = ApiObject>(ref: ResourceRef): ResourceClient<T>;
  /** `resourceFor(restClient, q)`: resolves a kind (or resource name) through discovery. */
  resourceFor<T extends ApiObject = ApiObject>(q: ResourceQuery): Promise<ResourceClient<T>>;
  /** Installs more CRDs (files or objects); resolves once each is Established and served. */
  installCrds(crds: Array<string | CrdManifest>): Promise<ApiResource[]>;
  /** The underlying test server (etcd handle, store prefix, the in-process server). */
  server: TestApiServer;
  /** Closes the clients, stops the API server and (unless shared) etcd, removes temporary files. Idempotent. */
  stop(): Promise<void>;
}

async function manifests(crds: Array<string | CrdManifest>): Promise<CrdManifest[]> {
  const out: CrdManifest[] = [];
  for (const c of crds) out.push(...(typeof c === 'string' ? await readCrdFiles([c]) : [c]));
  return out;
}

/**
 * Starts a real etcd and API server in this process for a test of a controller or operator,
 * installs the given CRDs and waits until each is Established and its resources are served.
 * Call `stop()` in `afterAll`: it leaves no open handles, so jest exits.
 *
 * ```ts
 * const cp = await startControlPlane({ crds: ['deploy/crds/widget.yaml'] });
 * const widgets = cp.resource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true });
 * ...
 * await cp.stop();
 * ```
 *
 * Needs the `etcd` binary on PATH. The naming (`svc` or `kubernetes`) is process-wide: control
 * planes started in one jest file should use the same one.
 */
export async function startControlPlane(o: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const crdManifests = await manifests(o.crds ?? []);
  const server = await startTestApiServer({
    etcd: o.etcd,
    args: [...(o.naming ? [`--naming=${o.naming}`] : []), ...(o.args ?? [])],
  });
  const restClient = new RestClient(loadSvcconfig(server.svcconfigPath));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      restClient.close();
      await server.stop();
    })();
    return stopping;
  };
  const install = async (crds: Array<string | CrdManifest>): Promise<ApiResource[]> =>
    installCrds(restClient, await manifests(crds), { timeoutMs: o.crdTimeoutMs });
  try {
    const crds = crdManifests.length ? await installCrds(restClient, crdManifests, { timeoutMs: o.crdTimeoutMs }) : [];
    return {
      url: server.server.url,
      caPem: server.server.caPem,
      token: server.adminToken,
      svcconfigPath: server.svcconfigPath,
      client: server.client,
      restClient,
      crds,
      resource: <T extends ApiObject>(ref: ResourceRef) => dynamicResource<T>(restClient, ref),
      resourceFor: <T extends ApiObject>(q: ResourceQuery) => resourceFor<T>(restClient, q),
      installCrds: install,
      server,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
