import type { Request, Response } from 'express';
import {
  fieldErrors,
  invalid,
  metaGroup,
  methodNotAllowed,
  notAcceptable,
  statusError,
  type Catalog,
  type ResourceType,
  type Verb,
} from '@svc/api';
import { FIELD_MANAGER_MAX_LENGTH, managerFromUserAgent } from '@svc/machinery';
import type { GenericStore, RequestContext } from '../registry/store.js';
import { scaleView } from '../registry/scale.js';
import type { RequestInfo } from './request-info.js';
import { advertisedMediaTypes, negotiate } from './media-types.js';
import type { HandlerScope } from './handlers/scope.js';
import { handleGet } from './handlers/get.js';
import { handleList } from './handlers/list.js';
import { handleCreate } from './handlers/create.js';
import { handleUpdate } from './handlers/update.js';
import { handlePatch } from './handlers/patch.js';
import { handleDelete, handleDeleteCollection } from './handlers/delete.js';
import { dryRunOf } from './handlers/decode.js';
import { createOnlyKey, serveCreateOnly, type CreateOnlyHandler } from './create-only.js';

type Handler = (s: HandlerScope) => Promise<void>;

const HANDLERS: Partial<Record<string, Handler>> = {
  get: handleGet,
  list: handleList,
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
};

/** Verbs a subresource serves (`status` is generic; `scale` is the workloads'; `finalize` is the namespace's; `approval` a CSR's). */
const SUBRESOURCE_VERBS: Record<string, readonly string[]> = {
  status: ['get', 'update', 'patch'],
  scale: ['get', 'update', 'patch'],
  finalize: ['update'],
  approval: ['get', 'update', 'patch'],
};

/** Verbs that need a name in the path, and the one that must not have one. */
const NAMED_VERBS = new Set(['update', 'patch']);

export interface ResourceRouterDeps {
  catalog: Catalog;
  storeFor: (r: ResourceType) => GenericStore;
  /** Verbs served elsewhere (watch). */
  extraHandlers?: Partial<Record<string, Handler>>;
  /** APIResponseCompression: gzip get and list answers for clients that accept it. */
  responseCompression?: boolean;
  /** Create-only endpoints (virtual types, subresources of another kind) by `createOnlyKey`. */
  createOnly?: ReadonlyMap<string, CreateOnlyHandler>;
  /** GET-only subresources answered by a handler of their own (`pods/log`), by `createOnlyKey`. */
  connect?: ReadonlyMap<string, ConnectHandler>;
}

/** Serves a GET of a subresource that is not a stored object (Kubernetes' connecters and streamers). */
export type ConnectHandler = (req: Request, res: Response, info: RequestInfo) => Promise<void>;

/**
 * The writer's manager name: `fieldManager`, else inferred from the User-Agent (Kubernetes'
 * rule: its first path segment). Longer than 128 characters → 422.
 */
function fieldManagerOf(query: URLSearchParams, userAgent: string | undefined): string | undefined {
  const given = query.get('fieldManager');
  if (given !== null && given !== '') {
    if (given.length > FIELD_MANAGER_MAX_LENGTH) {
      throw invalid({ group: metaGroup(), kind: 'PatchOptions' }, '', [
        fieldErrors.tooLong('fieldManager', given, FIELD_MANAGER_MAX_LENGTH),
      ]);
    }
    return given;
  }
  return userAgent ? managerFromUserAgent(userAgent) || undefined : undefined;
}

function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((p) => {
    const [coding, ...params] = p.trim().toLowerCase().split(';');
    const q = params.map((x) => x.trim()).find((x) => x.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** Resolves the resource type of a resource request; 404 when the group, version or resource is unknown. */
export function resolveResource(catalog: Catalog, info: RequestInfo): ResourceType {
  const r = catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!r)
    throw statusError('NotFound', 'the server could not find the requested resource', {
      causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }],
    });
  return r;
}

/** Serves one resource request: picks the verb handler, checks it is allowed, negotiates the answer. */
export async function serveResource(
  deps: ResourceRouterDeps,
  req: Request,
  res: Response,
  info: RequestInfo,
  ctx: RequestContext,
): Promise<void> {
  const r = resolveResource(deps.catalog, info);
  if (info.namespace && !r.namespaced && info.resource !== 'namespaces') {
    throw statusError('NotFound', 'the server could not find the requested resource');
  }
  const createOnly = deps.createOnly?.get(createOnlyKey(r, info.subresource));
  if (createOnly) {
    await serveCreateOnly(createOnly, req, res, info, ctx);
    return;
  }
  if (r.virtual) throw statusError('NotFound', 'the server could not find the requested resource');
  const connect = info.subresource ? deps.connect?.get(createOnlyKey(r, info.subresource)) : undefined;
  if (connect && info.parts.length === 3) {
    if (info.verb !== 'get') throw methodNotAllowed();
    await connect(req, res, info);
    return;
  }
  if (info.parts.length > 3 || (info.subresource && !r.subresources.includes(info.subresource))) {
    throw statusError('NotFound', 'the server could not find the requested resource');
  }
  const verb = info.verb;
  // POST to an object, PUT/PATCH to a collection: no such route (Kubernetes answers 405).
  if ((verb === 'create' && info.name) || (NAMED_VERBS.has(verb) && !info.name)) throw methodNotAllowed();
  const allowed = info.subresource ? (SUBRESOURCE_VERBS[info.subresource] ?? []) : r.verbs;
  if (!allowed.includes(verb as Verb)) throw methodNotAllowed();
  const handler = deps.extraHandlers?.[verb] ?? HANDLERS[verb];
  if (!handler) throw methodNotAllowed();
  const readVerb = verb === 'get' || verb === 'list' || verb === 'watch';
  const format = negotiate(req.headers.accept, readVerb && !info.subresource ? ['Table'] : []);
  if (!format) throw notAcceptable(advertisedMediaTypes());
  const query = info.query;
  if (['create', 'update', 'patch', 'delete', 'deletecollection'].includes(verb)) ctx.dryRun = dryRunOf(query);
  if (['create', 'update', 'patch'].includes(verb)) ctx.fieldManager = fieldManagerOf(query, req.headers['user-agent']);
  const gzip =
    !!deps.responseCompression && (verb === 'get' || verb === 'list') && acceptsGzip(req.headers['accept-encoding']);
  const view = info.subresource === 'scale' ? scaleView(r) : undefined;
  const scope: HandlerScope = {
    req,
    res,
    info,
    query,
    resource: r,
    store: deps.storeFor(r),
    ctx,
    format,
    warnings: [],
    gzip,
    view,
  };
  await handler(scope);
}
