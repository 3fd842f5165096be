import {
  RestClient,
  type ClientConfig,
  type RequestOptions,
  type Response,
  type RestClientOptions,
  type StreamResponse,
} from '@svc/client';

/**
 * A `RestClient` whose client certificate can be replaced while it is in use (certificate
 * rotation). Each request goes through the client of the current certificate; replacing it
 * closes the old client's connections, so open watches end and their informers reconnect with
 * the new certificate (as Kubernetes' kubelet closes its connections after a rotation).
 */
export class RotatingRestClient extends RestClient {
  private current: RestClient;

  constructor(
    config: ClientConfig,
    private readonly clientOptions: RestClientOptions = {},
  ) {
    super(config, clientOptions);
    this.current = new RestClient(config, clientOptions);
  }

  /** Uses `certPem`/`keyPem` from the next request on. */
  setClientCertificate(certPem: string, keyPem: string): void {
    const old = this.current;
    this.current = new RestClient(
      { ...this.config, user: { ...this.config.user, clientCertPem: certPem, clientKeyPem: keyPem } },
      this.clientOptions,
    );
    old.close();
  }

  override request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    return this.current.request(method, path, opts);
  }

  override stream(method: string, path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    return this.current.stream(method, path, opts);
  }

  override close(): void {
    this.current.close();
    super.close();
  }
}
