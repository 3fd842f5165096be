import { naming } from '@svc/api';
import { RestClient, type ClientConfig, type RestClientOptions, type TokenSource } from '@svc/client';

/**
 * The service account each controller calls the API as under
 * `--use-service-account-credentials`, by canonical controller name (Kubernetes v1.32's names;
 * the bootstrap RBAC policy binds `system:controller:<account>` to each). Controllers not
 * listed (the service-account token controller, which must work before any token does) keep
 * the manager's own credential, as in Kubernetes.
 */
export const CONTROLLER_SERVICE_ACCOUNTS: Readonly<Record<string, string>> = {
  'namespace-controller': 'namespace-controller',
  'serviceaccount-controller': 'service-account-controller',
  'root-ca-certificate-publisher-controller': 'root-ca-cert-publisher',
  'token-cleaner-controller': 'token-cleaner',
  'legacy-serviceaccount-token-cleaner-controller': 'legacy-service-account-token-cleaner',
  'bootstrap-signer-controller': 'bootstrap-signer',
  'garbage-collector-controller': 'generic-garbage-collector',
  'clusterrole-aggregation-controller': 'clusterrole-aggregation-controller',
  'node-lifecycle-controller': 'node-controller',
  'node-ipam-controller': 'node-controller',
  'taint-eviction-controller': 'taint-eviction-controller',
  'replicaset-controller': 'replicaset-controller',
  'replicationcontroller-controller': 'replication-controller',
  'pod-garbage-collector-controller': 'pod-garbage-collector',
  'deployment-controller': 'deployment-controller',
  'daemonset-controller': 'daemon-set-controller',
  'statefulset-controller': 'statefulset-controller',
  'job-controller': 'job-controller',
  'cronjob-controller': 'cronjob-controller',
  'disruption-controller': 'disruption-controller',
  'horizontal-pod-autoscaler-controller': 'horizontal-pod-autoscaler',
  'ttl-after-finished-controller': 'ttl-after-finished-controller',
  'ttl-controller': 'ttl-controller',
  'endpoints-controller': 'endpoint-controller',
  'endpointslice-controller': 'endpointslice-controller',
  'endpointslice-mirroring-controller': 'endpointslicemirroring-controller',
  'certificatesigningrequest-approving-controller': 'certificate-controller',
  'certificatesigningrequest-signing-controller': 'certificate-controller',
  'resourcequota-controller': 'resourcequota-controller',
};

/** Kubernetes' client builder: tokens live an hour and are renewed when a fifth of that is left. */
const EXPIRATION_SECONDS = 3600;
const LEEWAY_FRACTION = 0.2;

/**
 * Bearer tokens for one service account of the system namespace, from the TokenRequest API
 * through the manager's own client: the account is made when missing, a token is requested
 * for an hour and renewed once 80 % of its life has passed (or after a 401). Concurrent callers
 * share one request.
 */
export class ServiceAccountTokenSource implements TokenSource {
  private current?: { token: string; renewAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly root: RestClient,
    private readonly account: string,
  ) {}

  async token(): Promise<string> {
    if (this.current && Date.now() < this.current.renewAt) return this.current.token;
    this.pending ??= this.fetch().finally(() => (this.pending = undefined));
    return this.pending;
  }

  invalidate(): void {
    this.current = undefined;
  }

  private async fetch(): Promise<string> {
    const { systemNamespace: ns, groupSuffix } = naming();
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    await this.ensureAccount(base);
    const res = await this.root.request('POST', `${base}/${this.account}/token`, {
      body: {
        apiVersion: `authentication.${groupSuffix}/v1`,
        kind: 'TokenRequest',
        spec: { expirationSeconds: EXPIRATION_SECONDS },
      },
    });
    if (res.status !== 201 && res.status !== 200) throw this.failure('request a token for', res);
    const { status } = res.json<{ status?: { token?: string; expirationTimestamp?: string } }>();
    if (!status?.token) throw new Error(`service account ${ns}/${this.account}: the token request returned no token`);
    const issued = Date.now();
    const expires = status.expirationTimestamp
      ? Date.parse(status.expirationTimestamp)
      : issued + EXPIRATION_SECONDS * 1000;
    this.current = { token: status.token, renewAt: expires - (expires - issued) * LEEWAY_FRACTION };
    return status.token;
  }

  private async ensureAccount(base: string): Promise<void> {
    const got = await this.root.request('GET', `${base}/${this.account}`);
    if (got.status === 200) return;
    if (got.status !== 404) throw this.failure('read', got);
    const made = await this.root.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: this.account } },
    });
    if (made.status !== 201 && made.status !== 409) throw this.failure('create', made);
  }

  private failure(what: string, res: { status: number; body: Buffer }): Error {
    const { systemNamespace: ns } = naming();
    return new Error(
      `cannot ${what} service account ${ns}/${this.account}: HTTP ${res.status} ${res.body.toString('utf8').slice(0, 300)}`,
    );
  }
}

/**
 * Clients per controller. Without `--use-service-account-credentials` every controller shares
 * `root`; with it, each gets a client of its own that presents its service account's token
 * (the TLS settings of `config`, none of its credentials) and has its own rate limiter, as
 * Kubernetes' controller client builder does. Accounts shared by several controllers share
 * the token source.
 */
export class ControllerClients {
  private readonly sources = new Map<string, ServiceAccountTokenSource>();
  /** By controller name: a controller started again after a lost and regained lease keeps its client. */
  private readonly made = new Map<string, RestClient>();

  constructor(
    private readonly o: {
      /** The manager's own client: controllers without a service account call the API with it. */
      root: RestClient;
      /**
       * Makes the accounts and requests their tokens: Kubernetes' "controller-discovery" client,
       * with a rate limiter of its own, so the tokens of every controller at start are not
       * queued behind the shared informers' lists.
       */
      tokens: RestClient;
      config: ClientConfig;
      options: RestClientOptions;
      useServiceAccountCredentials: boolean;
    },
  ) {}

  /** The client the controller `controllerName` (canonical) calls the API with. */
  clientFor(controllerName: string): RestClient {
    const account = CONTROLLER_SERVICE_ACCOUNTS[controllerName];
    if (!this.o.useServiceAccountCredentials || !account) return this.o.root;
    const existing = this.made.get(controllerName);
    if (existing) return existing;
    let source = this.sources.get(account);
    if (!source) {
      source = new ServiceAccountTokenSource(this.o.tokens, account);
      this.sources.set(account, source);
    }
    const client = new RestClient(
      { ...this.o.config, user: {} },
      { ...this.o.options, userAgent: `${this.o.options.userAgent ?? ''}/${account}`, tokenSource: source },
    );
    this.made.set(controllerName, client);
    return client;
  }

  close(): void {
    for (const c of this.made.values()) c.close();
  }
}
