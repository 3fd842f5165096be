import { RestClient, type ClientConfig, type RequestOptions, type Response, type RestClientOptions } from '@svc/client';

/**
 * A `RestClient` with at most `maxInFlight` requests outstanding (later ones wait their turn, in
 * order); streams (watches) are not counted. The simulator's nodes share one client, so their
 * writes are bounded however many nodes there are. Once closed it refuses requests, so nothing
 * late (an event write) opens a connection after `close`.
 */
export class BoundedRestClient extends RestClient {
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly maxInFlight: number;
  private closed = false;

  constructor(config: ClientConfig, o: RestClientOptions & { maxInFlight: number }) {
    const { maxInFlight, ...options } = o;
    super(config, options);
    this.maxInFlight = Math.max(1, maxInFlight);
  }

  override async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    if (this.closed) throw new Error('client closed');
    if (this.inFlight >= this.maxInFlight) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    try {
      return await super.request(method, path, opts);
    } finally {
      // The slot passes straight to the next waiter (inFlight stays), or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  override close(): void {
    this.closed = true;
    super.close();
  }
}
