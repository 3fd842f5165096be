import type { Request, Response } from 'express';
import type { ResourceType } from '@svc/api';
import type { GenericStore, RequestContext } from '../../registry/store.js';
import type { RequestInfo } from '../request-info.js';
import type { ResponseFormat } from '../media-types.js';

/** Everything a verb handler needs for one request. */
export interface HandlerScope {
  req: Request;
  res: Response;
  info: RequestInfo;
  query: URLSearchParams;
  resource: ResourceType;
  store: GenericStore;
  ctx: RequestContext;
  format: ResponseFormat;
  /** Warnings to send as `Warning: 299 - "..."` headers. */
  warnings: string[];
  /** The client accepts gzip and the answer may be compressed (get and list). */
  gzip: boolean;
}
