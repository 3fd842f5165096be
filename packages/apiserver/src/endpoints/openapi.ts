import { createHash } from 'node:crypto';
import {
  definitionNamespace,
  groupVersion,
  naming,
  operationExtensionPrefixes,
  objectMeta,
  listMeta,
  type Catalog,
  type ResourceType,
  type Schema,
} from '@svc/api';
import { answerOpenApiV2, type OpenApiV2Answer } from './openapi-v2-protobuf.js';

/**
 * OpenAPI v3 documents generated from the types' schemas: one per group-version, listed
 * at `/openapi/v3`. Operations carry the group-version-kind and action extensions, and
 * schemas the merge markers (`x-svc-list-type`, `-list-map-keys`, `-map-type`,
 * `-patch-strategy`, `-patch-merge-key`) that clients use for validation and apply.
 */
type Json = Record<string, unknown>;

function ext(name: string): string {
  return `${naming().schemaExtensionPrefix}${name}`;
}

function defName(r: { group: string; version: string }, kind: string): string {
  const g = r.group === '' ? 'core' : r.group.split('.')[0];
  return `${definitionNamespace()}.api.${g}.${r.version}.${kind}`;
}

const META_DEF = (): string => `${definitionNamespace()}.apimachinery.pkg.apis.meta.v1.ObjectMeta`;
const LIST_META_DEF = (): string => `${definitionNamespace()}.apimachinery.pkg.apis.meta.v1.ListMeta`;
const STATUS_DEF = (): string => `${definitionNamespace()}.apimachinery.pkg.apis.meta.v1.Status`;

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

/** One schema of the DSL as an OpenAPI v3 schema (nested types inline). */
export function toOpenApi(schema: Schema): Json {
  const out: Json = {};
  if (schema.description) out.description = schema.description;
  if (schema.default !== undefined) out.default = schema.default;
  switch (schema.type) {
    case 'string':
      out.type = 'string';
      if (schema.format) out.format = schema.format;
      if (schema.enum) out.enum = [...schema.enum];
      break;
    case 'integer':
      out.type = 'integer';
      out.format = schema.format ?? 'int64';
      break;
    case 'number':
      out.type = 'number';
      out.format = 'double';
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'int-or-string':
      out[ext('int-or-string')] = true;
      if (schema.format === 'quantity') out.format = 'quantity';
      break;
    case 'any':
      out[ext('preserve-unknown-fields')] = true;
      break;
    case 'object': {
      out.type = 'object';
      out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toOpenApi(v)]));
      if (schema.required?.length) out.required = [...schema.required];
      if (schema.structType) out[ext('map-type')] = schema.structType;
      if (schema.preserveUnknownFields) out[ext('preserve-unknown-fields')] = true;
      break;
    }
    case 'map':
      out.type = 'object';
      out.additionalProperties = toOpenApi(schema.values);
      if (schema.mapType) out[ext('map-type')] = schema.mapType;
      break;
    case 'array':
      out.type = 'array';
      out.items = toOpenApi(schema.items);
      if (schema.listType) out[ext('list-type')] = schema.listType;
      if (schema.listMapKeys) out[ext('list-map-keys')] = [...schema.listMapKeys];
      if (schema.patchStrategy) out[ext('patch-strategy')] = schema.patchStrategy;
      if (schema.patchMergeKey) out[ext('patch-merge-key')] = schema.patchMergeKey;
      break;
  }
  return out;
}

function gvk(r: ResourceType, kind = r.kind): Json {
  return { group: r.group, version: r.version, kind };
}

function kindSchema(r: ResourceType): Json {
  // A custom resource publishes its version's schema as written (constraints, CEL rules and
  // all), with apiVersion, kind and metadata as every kind has them.
  const custom = r.custom?.openApiSchema as Json | undefined;
  const s = custom
    ? {
        ...custom,
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          ...((custom.properties as Json | undefined) ?? {}),
        },
      }
    : toOpenApi(r.schema);
  const props = { ...(s.properties as Json) };
  props.metadata = { ...ref(META_DEF()), description: "Standard object's metadata." };
  return { ...s, properties: props, ...gvkExtensions(gvk(r)) };
}

function listSchema(r: ResourceType): Json {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: ref(LIST_META_DEF()),
      items: { type: 'array', items: ref(defName(r, r.kind)) },
    },
    ...gvkExtensions(gvk(r, r.listKind)),
  };
}

const param = (name: string, description: string, type = 'string'): Json => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});
const DRY_RUN = param(
  'dryRun',
  'When present, indicates that modifications should not be persisted. Valid values: All.',
);
const FIELD_MANAGER = param(
  'fieldManager',
  'fieldManager is a name associated with the actor or entity that is making these changes.',
);
const FIELD_VALIDATION = param(
  'fieldValidation',
  'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values: Ignore, Warn (default), Strict.',
);
const FORCE = param('force', 'Force is going to "force" Apply requests.', 'boolean');
const LIST_PARAMS = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
].map((n) =>
  param(
    n,
    n,
    n === 'limit' || n === 'timeoutSeconds'
      ? 'integer'
      : n === 'watch' || n === 'allowWatchBookmarks' || n === 'sendInitialEvents'
        ? 'boolean'
        : 'string',
  ),
);

/**
 * A definition's group-version-kind extension, in every spelling operations carry (stock
 * kubectl looks definitions up by the `x-kubernetes-` one, so `kubectl explain` works under
 * either naming).
 */
function gvkExtensions(k: Json): Json {
  return Object.fromEntries(operationExtensionPrefixes().map((p) => [`${p}group-version-kind`, [k]]));
}

/** One operation on `r`: `spec` with tags (after operationId) and Kubernetes' action and GVK extensions. */
function operation(r: ResourceType, action: string, spec: Json & { operationId: string }): Json {
  const { operationId, ...rest } = spec;
  const op: Json = { operationId, tags: [groupVersion(r).replace(/[./]/g, '_')], ...rest };
  for (const p of operationExtensionPrefixes()) {
    op[`${p}action`] = action;
    op[`${p}group-version-kind`] = gvk(r);
  }
  return op;
}

function body(schemaRef: Json, types: string[]): Json {
  return { required: true, content: Object.fromEntries(types.map((t) => [t, { schema: schemaRef }])) };
}

function okResponse(schemaRef: Json, code = '200'): Json {
  return {
    [code]: {
      description: 'OK',
      content: { 'application/json': { schema: schemaRef }, 'application/yaml': { schema: schemaRef } },
    },
  };
}

function pathsFor(r: ResourceType): Record<string, Json> {
  const base = r.group ? `/apis/${r.group}/${r.version}` : '/api/v1';
  const kindRef = ref(defName(r, r.kind));
  const listRef = ref(defName(r, r.listKind));
  const scoped = r.namespaced ? `${base}/namespaces/{namespace}/${r.plural}` : `${base}/${r.plural}`;
  const nsParam = r.namespaced
    ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }]
    : [];
  const nameParam = [{ name: 'name', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }];
  const patchTypes = [
    'application/json-patch+json',
    'application/merge-patch+json',
    ...(r.strategicMerge ? ['application/strategic-merge-patch+json'] : []),
    'application/apply-patch+yaml',
  ];
  const suffix = `${r.kind}${r.namespaced ? 'Namespaced' : ''}`;
  const has = (v: string): boolean => r.verbs.includes(v as never);
  const collection: Json = { parameters: nsParam };
  if (has('list'))
    collection.get = operation(r, 'list', {
      operationId: `list${suffix}`,
      parameters: LIST_PARAMS,
      responses: okResponse(listRef),
    });
  if (has('create'))
    collection.post = operation(r, 'post', {
      operationId: `create${suffix}`,
      parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
      requestBody: body(kindRef, ['application/json', 'application/yaml']),
      responses: { ...okResponse(kindRef), ...okResponse(kindRef, '201') },
    });
  if (has('deletecollection'))
    collection.delete = operation(r, 'deletecollection', {
      operationId: `deleteCollection${suffix}`,
      parameters: [DRY_RUN, ...LIST_PARAMS],
      responses: okResponse(ref(STATUS_DEF())),
    });
  const item: Json = { parameters: [...nameParam, ...nsParam] };
  if (has('get')) item.get = operation(r, 'get', { operationId: `read${suffix}`, responses: okResponse(kindRef) });
  if (has('update'))
    item.put = operation(r, 'put', {
      operationId: `replace${suffix}`,
      parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
      requestBody: body(kindRef, ['application/json', 'application/yaml']),
      responses: okResponse(kindRef),
    });
  if (has('patch'))
    item.patch = operation(r, 'patch', {
      operationId: `patch${suffix}`,
      parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE],
      requestBody: body({ type: 'object' }, patchTypes),
      responses: okResponse(kindRef),
    });
  if (has('delete'))
    item.delete = operation(r, 'delete', {
      operationId: `delete${suffix}`,
      parameters: [
        DRY_RUN,
        param('gracePeriodSeconds', 'gracePeriodSeconds', 'integer'),
        param('propagationPolicy', 'propagationPolicy'),
      ],
      responses: okResponse(kindRef),
    });
  const paths: Record<string, Json> = { [scoped]: collection, [`${scoped}/{name}`]: item };
  if (r.namespaced && has('list'))
    paths[`${base}/${r.plural}`] = {
      get: operation(r, 'list', {
        operationId: `list${r.kind}ForAllNamespaces`,
        parameters: LIST_PARAMS,
        responses: okResponse(listRef),
      }),
    };
  // Subresources that answer with the object itself.
  for (const sub of r.subresources.filter((x) => x === 'status' || x === 'approval')) {
    const op = suffix + sub.charAt(0).toUpperCase() + sub.slice(1);
    paths[`${scoped}/{name}/${sub}`] = {
      parameters: [...nameParam, ...nsParam],
      get: operation(r, 'get', { operationId: `read${op}`, responses: okResponse(kindRef) }),
      put: operation(r, 'put', {
        operationId: `replace${op}`,
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        requestBody: body(kindRef, ['application/json', 'application/yaml']),
        responses: okResponse(kindRef),
      }),
      patch: operation(r, 'patch', {
        operationId: `patch${op}`,
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE],
        requestBody: body({ type: 'object' }, patchTypes),
        responses: okResponse(kindRef),
      }),
    };
  }
  return paths;
}

/** The OpenAPI v3 document of one group-version, or undefined when it is not served. */
export function openApiV3Document(catalog: Catalog, group: string, version: string): Json | undefined {
  const resources = catalog.resources(group, version);
  if (resources.length === 0) return undefined;
  const schemas: Json = {
    [META_DEF()]: toOpenApi(objectMeta),
    [LIST_META_DEF()]: toOpenApi(listMeta),
    [STATUS_DEF()]: {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        code: { type: 'integer' },
        message: { type: 'string' },
        reason: { type: 'string' },
        status: { type: 'string' },
        details: { type: 'object', [ext('preserve-unknown-fields')]: true },
        metadata: ref(LIST_META_DEF()),
      },
    },
  };
  let paths: Record<string, Json> = {};
  for (const r of resources) {
    schemas[defName(r, r.kind)] = kindSchema(r);
    schemas[defName(r, r.listKind)] = listSchema(r);
    paths = { ...paths, ...pathsFor(r) };
  }
  return {
    openapi: '3.0.0',
    info: { title: naming().scheme === 'svc' ? 'svc' : 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
  };
}

/** Content hashes per group-version, computed once per catalog revision (custom resources come and go). */
const hashes = new WeakMap<Catalog, { revision: number; byGroupVersion: Map<string, string> }>();

function docHash(catalog: Catalog, gv: string, doc: Json): string {
  let m = hashes.get(catalog);
  if (!m || m.revision !== catalog.revision) {
    m = { revision: catalog.revision, byGroupVersion: new Map() };
    hashes.set(catalog, m);
  }
  let h = m.byGroupVersion.get(gv);
  if (!h) {
    h = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
    m.byGroupVersion.set(gv, h);
  }
  return h;
}

/** `/openapi/v3`: each served group-version's document path with its content hash. */
export function openApiV3Root(catalog: Catalog): Json {
  const paths: Json = {};
  for (const g of catalog.groups()) {
    for (const v of g.versions) {
      const key = g.group ? `apis/${g.group}/${v}` : `api/${v}`;
      const doc = openApiV3Document(catalog, g.group, v);
      if (doc) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${docHash(catalog, key, doc)}` };
    }
  }
  return { paths };
}

/** A v3 parameter (`schema: {type}`) as a v2 one (`type` inline). */
function v2Parameter(p: Json): Json {
  const { schema, ...rest } = p as Json & { schema?: Json };
  return { ...rest, ...(schema ?? {}) };
}

/** A v3 operation as a Swagger 2.0 one: body parameter, `consumes`/`produces`, response schemas. */
function v2Operation(op: Json): Json {
  const { requestBody, responses, parameters, ...rest } = op as Json & {
    requestBody?: { content: Record<string, { schema: Json }> };
    responses?: Record<string, { description: string; content?: Record<string, { schema: Json }> }>;
    parameters?: Json[];
  };
  const out: Json = { ...rest };
  const params = (parameters ?? []).map(v2Parameter);
  if (requestBody) {
    const types = Object.keys(requestBody.content);
    out.consumes = types;
    params.unshift({
      name: 'body',
      in: 'body',
      required: true,
      schema: requestBody.content[types[0] ?? '']?.schema ?? { type: 'object' },
    });
  } else {
    out.consumes = ['*/*'];
  }
  if (params.length > 0) out.parameters = params;
  out.produces = ['application/json', 'application/yaml', naming().protobufMediaType];
  out.schemes = ['https'];
  out.responses = Object.fromEntries(
    Object.entries(responses ?? {}).map(([code, r]) => {
      const schema = r.content?.['application/json']?.schema;
      return [code, schema ? { description: r.description, schema } : { description: r.description }];
    }),
  );
  return out;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/**
 * `/openapi/v2`: one Swagger 2.0 document of every served group-version, built from the same
 * schemas as the v3 documents (definitions with the group-version-kind extension and merge
 * markers; operations with the action and group-version-kind extensions).
 */
export function openApiV2Document(catalog: Catalog): Json {
  const definitions: Json = {};
  const paths: Json = {};
  for (const g of catalog.groups()) {
    for (const v of g.versions) {
      const doc = openApiV3Document(catalog, g.group, v);
      if (!doc) continue;
      Object.assign(definitions, (doc.components as { schemas: Json }).schemas);
      for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
        paths[path] = Object.fromEntries(
          Object.entries(item).map(([k, val]) => [
            k,
            k === 'parameters' ? (val as Json[]).map(v2Parameter) : METHODS.has(k) ? v2Operation(val as Json) : val,
          ]),
        );
      }
    }
  }
  const text = JSON.stringify({
    swagger: '2.0',
    info: { title: naming().scheme === 'svc' ? 'svc' : 'Kubernetes', version: 'v1.32.0' },
    paths,
    definitions,
    securityDefinitions: {
      BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' },
    },
    security: [{ BearerToken: [] }],
  });
  return JSON.parse(text.replaceAll('"#/components/schemas/', '"#/definitions/')) as Json;
}

/**
 * The `/openapi/v2` answer for an Accept header: the JSON document or its Protobuf form
 * (gnostic's `openapi.v2.Document`, which client-go asks for), both built once per catalog
 * revision; a 406 when the header accepts neither.
 */
export function openApiV2Answer(catalog: Catalog, accept: string | undefined): OpenApiV2Answer {
  return answerOpenApiV2({ catalog, accept, document: () => openApiV2Document(catalog) });
}
