import type { Catalog } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import type { ApiServerOptions } from '../options.js';
import type { ServingAddress } from './serve.js';

/** What every step of start-up shares. */
export interface Startup {
  opts: ApiServerOptions;
  log: Logger;
  metrics: ApiServerMetrics;
  catalog: Catalog;
  address: ServingAddress;
  startedAt: number;
  /** Aborts when the server stops: open watches, compaction, retries and reloads end. */
  stopping: AbortController;
}
