import type { Request, Response } from 'express';
import type { ApiObject, ResourceType } from '@svc/api';
import type { GenericStore, RequestContext } from '../../registry/store.js';
import type { RequestInfo } from '../request-info.js';
import type { ResponseFormat } from '../media-types.js';
import type { ScaleView } from '../../registry/scale.js';

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
  /** A subresource served as another kind (`scale`): bodies and answers are in its kind. */
  view?: ScaleView;
}

/** The kind a handler decodes and answers: the view's, else the resource's own. */
export function bodyKind(
  s: Pick<HandlerScope, 'resource' | 'view'>,
): Pick<ResourceType, 'group' | 'version' | 'kind' | 'schema'> {
  return s.view?.kind ?? s.resource;
}

/** A stored object as the handler answers it (through the view, if any). */
export function viewed(s: Pick<HandlerScope, 'view'>, obj: ApiObject): ApiObject {
  return s.view ? s.view.read(obj) : obj;
}
