import type { Request, Response } from 'express';
import {
  auditAnnotationKey,
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
import { serveCreateOnly } from './create-only.js';
import { serveReadOnly } from './read-only.js';
import type { ReadOnlyHandler } from '../registry/read-only.js';
import { endpointKey, type CreateOnlyHandler } from '../registry/create-only.js';
import { handleWatch, type WatchSettings } from './handlers/watch.js';
import { answerErrorsInJson, setWarnings } from './handlers/respond.js';

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
  ephemeralcontainers: ['get', 'update', 'patch'],
};

/** Verbs that need a name in the path, and the one that must not have one. */
const NAMED_VERBS = new Set(['update', 'patch']);

const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** One request as the router sees it (the chain's request, minus what only the chain needs). */
export interface ServedRequest {
  req: Request;
  res: Response;
  info: RequestInfo;
  ctx: RequestContext;
}

/** Serves a GET of a subresource that is not a stored object (Kubernetes' connecters and streamers). */
export type ConnectHandler = (r: ServedRequest) => Promise<void>;

/**
 * An endpoint of its own at `<resource>[/<subresource>]` instead of a stored type's verbs: a
 * create-only kind (reviews, `serviceaccounts/token`, `pods/binding`) or a connect GET (`pods/log`).
 */
export type OwnEndpoint =
  | { create: CreateOnlyHandler }
  /** A read-only type that is not stored (componentstatuses): get and list only. */
  | { read: ReadOnlyHandler }
  | {
      connect: ConnectHandler;
      connectPost?: boolean;
      /** `proxy`: every method (each authorized as its own verb) and paths below the subresource. */
      anyMethod?: boolean;
    };

export interface ResourceRouterDeps {
  catalog: Catalog;
  storeFor: (r: ResourceType) => GenericStore;
  watch: WatchSettings;
  /** APIResponseCompression: gzip get and list answers for clients that accept it. */
  responseCompression?: boolean;
  /** Endpoints of their own, by `endpointKey`. */
  endpoints: ReadonlyMap<string, OwnEndpoint>;
  /** A request reached a deprecated version (`apiserver_requested_deprecated_apis`). */
  onDeprecated?: (r: ResourceType, subresource: string) => void;
}

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
export async function serveResource(deps: ResourceRouterDeps, r: ServedRequest): Promise<void> {
  const { req, res, info, ctx } = r;
  const resource = resolveResource(deps.catalog, info);
  if (info.namespace && !resource.namespaced && info.resource !== 'namespaces') {
    throw statusError('NotFound', 'the server could not find the requested resource');
  }
  const own = deps.endpoints.get(endpointKey(resource, info.subresource));
  if (own && 'create' in own) {
    await serveCreateOnly(own.create, r);
    return;
  }
  if (own && 'read' in own) {
    await serveReadOnly(own.read, {
      ...r,
      onDeprecated: () => {
        deps.onDeprecated?.(resource, info.subresource);
        (ctx.annotations ??= {})[auditAnnotationKey('deprecated')] = 'true';
      },
    });
    return;
  }
  if (resource.virtual) throw statusError('NotFound', 'the server could not find the requested resource');
  if (own && info.subresource && (info.parts.length === 3 || (own.anyMethod && info.parts.length > 3))) {
    // exec, attach and portforward are also served to POST (SPDY), authorized as create.
    if (!own.anyMethod && info.verb !== 'get' && !(own.connectPost && info.verb === 'create')) throw methodNotAllowed();
    await own.connect(r);
    return;
  }
  if (info.parts.length > 3 || (info.subresource && !resource.subresources.includes(info.subresource))) {
    throw statusError('NotFound', 'the server could not find the requested resource');
  }
  const verb = info.verb;
  // POST to an object, PUT/PATCH to a collection: no such route (Kubernetes answers 405).
  if ((verb === 'create' && info.name) || (NAMED_VERBS.has(verb) && !info.name)) throw methodNotAllowed();
  const allowed = info.subresource ? (SUBRESOURCE_VERBS[info.subresource] ?? []) : resource.verbs;
  if (!allowed.includes(verb as Verb)) throw methodNotAllowed();
  const handler = verb === 'watch' ? (s: HandlerScope) => handleWatch(s, deps.watch) : HANDLERS[verb];
  if (!handler) throw methodNotAllowed();
  const readVerb = verb === 'get' || verb === 'list' || verb === 'watch';
  const view = info.subresource === 'scale' ? scaleView(resource) : undefined;
  let format = negotiate(req.headers.accept, readVerb && !info.subresource ? ['Table'] : []);
  if (!format) throw notAcceptable(advertisedMediaTypes());
  // Custom resources have no Protobuf form (spec: media types): the client's JSON or YAML
  // fallback, else 406 before anything is done.
  if (resource.custom && !view) answerErrorsInJson(res);
  if (resource.custom && !view && format.codec === 'protobuf') {
    if (!format.fallback) throw notAcceptable(['application/json', 'application/yaml']);
    format = format.fallback;
  }
  const deprecation = resource.custom?.deprecationWarning;
  if (deprecation !== undefined) {
    setWarnings(res, [deprecation]);
    deps.onDeprecated?.(resource, info.subresource);
    (ctx.annotations ??= {})[auditAnnotationKey('deprecated')] = 'true';
  }
  const query = info.query;
  if (MUTATING_VERBS.has(verb)) ctx.dryRun = dryRunOf(query);
  if (verb === 'create' || verb === 'update' || verb === 'patch') {
    ctx.fieldManager = fieldManagerOf(query, req.headers['user-agent']);
  }
  const gzip =
    !!deps.responseCompression && (verb === 'get' || verb === 'list') && acceptsGzip(req.headers['accept-encoding']);
  const store = deps.storeFor(resource);
  // Admission's warnings go out with the answer's own.
  const warnings: string[] = (ctx.warnings ??= []);
  await handler({ req, res, info, query, resource, store, ctx, format, warnings, gzip, view });
}
