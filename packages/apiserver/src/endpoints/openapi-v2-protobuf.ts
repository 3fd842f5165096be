import { createHash } from 'node:crypto';
import protobuf from 'protobufjs';
import { notAcceptable, type Catalog } from '@svc/api';

/**
 * `/openapi/v2` in its two forms, as Kubernetes' kube-openapi handler serves it: the Swagger
 * 2.0 JSON document, or the same document as gnostic's `openapi.v2.Document` Protobuf message
 * (what client-go's discovery client asks for, and kubectl's client-side validation reads).
 *
 * The message is written from the JSON text the way gnostic's `ParseDocument` reads it:
 * `x-*` keys become `NamedAny` vendor extensions whose `Any.yaml` holds the value, objects
 * keyed by name (paths, definitions, properties, responses, ...) become repeated `Named*`
 * entries in document order, and `type`/`items`/`additionalProperties`/parameters/responses
 * pick their oneof branch by shape. Keys Swagger 2.0 has no field for (OpenAPI v3's
 * `nullable`, `oneOf`, ...) are left out: gnostic rejects them, and Kubernetes never publishes
 * them in v2. proto3 zero values (`false`, `""`, `0`, empty lists) are not written, as Go's
 * marshaller does not write them.
 */

/** The media type of the Protobuf form; answers always carry it. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The older spelling client-go (kubectl 1.32 included) sends; kube-openapi answers it as above. */
export const OPENAPI_V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Json = Record<string, unknown>;

// Our own declaration of the part of gnostic's OpenAPIv2.proto (package openapi.v2) a Swagger
// 2.0 document reaches. Facts checked against gnostic-models' openapiv2/OpenAPIv2.proto: every
// message numbers its fields 1, 2, 3, ... in the order listed here, and oneofs are named `oneof`.
const PRIMITIVE_CONSTRAINTS = [
  'Any default',
  'double maximum',
  'bool exclusive_maximum',
  'double minimum',
  'bool exclusive_minimum',
  'int64 max_length',
  'int64 min_length',
  'string pattern',
  'int64 max_items',
  'int64 min_items',
  'bool unique_items',
  'repeated Any enum',
  'double multiple_of',
];
const PRIMITIVE = ['string type', 'string format', 'PrimitivesItems items', 'string collection_format'];
const EXT = 'repeated NamedAny vendor_extension';
const PARAMETER_HEAD = ['bool required', 'string in', 'string description', 'string name'];

const MESSAGES: Record<string, string[]> = {
  Document: [
    'string swagger',
    'Info info',
    'string host',
    'string base_path',
    'repeated string schemes',
    'repeated string consumes',
    'repeated string produces',
    'Paths paths',
    'Definitions definitions',
    'ParameterDefinitions parameters',
    'ResponseDefinitions responses',
    'repeated SecurityRequirement security',
    'SecurityDefinitions security_definitions',
    'repeated Tag tags',
    'ExternalDocs external_docs',
    EXT,
  ],
  Info: [
    'string title',
    'string version',
    'string description',
    'string terms_of_service',
    'Contact contact',
    'License license',
    EXT,
  ],
  Contact: ['string name', 'string url', 'string email', EXT],
  License: ['string name', 'string url', EXT],
  ExternalDocs: ['string description', 'string url', EXT],
  Tag: ['string name', 'string description', 'ExternalDocs external_docs', EXT],
  Xml: ['string name', 'string namespace', 'string prefix', 'bool attribute', 'bool wrapped', EXT],
  // gnostic's Any: field 1 is a google.protobuf.Any it fills only for registered extensions.
  Any: ['PackedAny value', 'string yaml'],
  PackedAny: ['string type_url', 'bytes value'],
  NamedAny: ['string name', 'Any value'],
  Paths: [EXT, 'repeated NamedPathItem path'],
  NamedPathItem: ['string name', 'PathItem value'],
  PathItem: [
    'string _ref',
    'Operation get',
    'Operation put',
    'Operation post',
    'Operation delete',
    'Operation options',
    'Operation head',
    'Operation patch',
    'repeated ParametersItem parameters',
    EXT,
  ],
  Operation: [
    'repeated string tags',
    'string summary',
    'string description',
    'ExternalDocs external_docs',
    'string operation_id',
    'repeated string produces',
    'repeated string consumes',
    'repeated ParametersItem parameters',
    'Responses responses',
    'repeated string schemes',
    'bool deprecated',
    'repeated SecurityRequirement security',
    EXT,
  ],
  'oneof ParametersItem': ['Parameter parameter', 'JsonReference json_reference'],
  JsonReference: ['string _ref', 'string description'],
  'oneof Parameter': ['BodyParameter body_parameter', 'NonBodyParameter non_body_parameter'],
  BodyParameter: ['string description', 'string name', 'string in', 'bool required', 'Schema schema', EXT],
  'oneof NonBodyParameter': [
    'HeaderParameterSubSchema header_parameter_sub_schema',
    'FormDataParameterSubSchema form_data_parameter_sub_schema',
    'QueryParameterSubSchema query_parameter_sub_schema',
    'PathParameterSubSchema path_parameter_sub_schema',
  ],
  HeaderParameterSubSchema: [...PARAMETER_HEAD, ...PRIMITIVE, ...PRIMITIVE_CONSTRAINTS, EXT],
  PathParameterSubSchema: [...PARAMETER_HEAD, ...PRIMITIVE, ...PRIMITIVE_CONSTRAINTS, EXT],
  QueryParameterSubSchema: [...PARAMETER_HEAD, 'bool allow_empty_value', ...PRIMITIVE, ...PRIMITIVE_CONSTRAINTS, EXT],
  FormDataParameterSubSchema: [
    ...PARAMETER_HEAD,
    'bool allow_empty_value',
    ...PRIMITIVE,
    ...PRIMITIVE_CONSTRAINTS,
    EXT,
  ],
  PrimitivesItems: [...PRIMITIVE, ...PRIMITIVE_CONSTRAINTS, EXT],
  Header: [...PRIMITIVE, ...PRIMITIVE_CONSTRAINTS, 'string description', EXT],
  Headers: ['repeated NamedHeader additional_properties'],
  NamedHeader: ['string name', 'Header value'],
  Responses: ['repeated NamedResponseValue response_code', EXT],
  NamedResponseValue: ['string name', 'ResponseValue value'],
  'oneof ResponseValue': ['Response response', 'JsonReference json_reference'],
  Response: ['string description', 'SchemaItem schema', 'Headers headers', 'Examples examples', EXT],
  Examples: ['repeated NamedAny additional_properties'],
  'oneof SchemaItem': ['Schema schema', 'FileSchema file_schema'],
  FileSchema: [
    'string format',
    'string title',
    'string description',
    'Any default',
    'repeated string required',
    'string type',
    'bool read_only',
    'ExternalDocs external_docs',
    'Any example',
    EXT,
  ],
  Schema: [
    'string _ref',
    'string format',
    'string title',
    'string description',
    'Any default',
    'double multiple_of',
    'double maximum',
    'bool exclusive_maximum',
    'double minimum',
    'bool exclusive_minimum',
    'int64 max_length',
    'int64 min_length',
    'string pattern',
    'int64 max_items',
    'int64 min_items',
    'bool unique_items',
    'int64 max_properties',
    'int64 min_properties',
    'repeated string required',
    'repeated Any enum',
    'AdditionalPropertiesItem additional_properties',
    'TypeItem type',
    'ItemsItem items',
    'repeated Schema all_of',
    'Properties properties',
    'string discriminator',
    'bool read_only',
    'Xml xml',
    'ExternalDocs external_docs',
    'Any example',
    EXT,
  ],
  'oneof AdditionalPropertiesItem': ['Schema schema', 'bool boolean'],
  TypeItem: ['repeated string value'],
  ItemsItem: ['repeated Schema schema'],
  Properties: ['repeated NamedSchema additional_properties'],
  NamedSchema: ['string name', 'Schema value'],
  Definitions: ['repeated NamedSchema additional_properties'],
  ParameterDefinitions: ['repeated NamedParameter additional_properties'],
  NamedParameter: ['string name', 'Parameter value'],
  ResponseDefinitions: ['repeated NamedResponse additional_properties'],
  NamedResponse: ['string name', 'Response value'],
  SecurityRequirement: ['repeated NamedStringArray additional_properties'],
  NamedStringArray: ['string name', 'StringArray value'],
  StringArray: ['repeated string value'],
  SecurityDefinitions: ['repeated NamedSecurityDefinitionsItem additional_properties'],
  NamedSecurityDefinitionsItem: ['string name', 'SecurityDefinitionsItem value'],
  'oneof SecurityDefinitionsItem': [
    'BasicAuthenticationSecurity basic_authentication_security',
    'ApiKeySecurity api_key_security',
    'Oauth2ImplicitSecurity oauth2_implicit_security',
    'Oauth2PasswordSecurity oauth2_password_security',
    'Oauth2ApplicationSecurity oauth2_application_security',
    'Oauth2AccessCodeSecurity oauth2_access_code_security',
  ],
  BasicAuthenticationSecurity: ['string type', 'string description', EXT],
  ApiKeySecurity: ['string type', 'string name', 'string in', 'string description', EXT],
  Oauth2ImplicitSecurity: [
    'string type',
    'string flow',
    'Oauth2Scopes scopes',
    'string authorization_url',
    'string description',
    EXT,
  ],
  Oauth2PasswordSecurity: [
    'string type',
    'string flow',
    'Oauth2Scopes scopes',
    'string token_url',
    'string description',
    EXT,
  ],
  Oauth2ApplicationSecurity: [
    'string type',
    'string flow',
    'Oauth2Scopes scopes',
    'string token_url',
    'string description',
    EXT,
  ],
  Oauth2AccessCodeSecurity: [
    'string type',
    'string flow',
    'Oauth2Scopes scopes',
    'string authorization_url',
    'string token_url',
    'string description',
    EXT,
  ],
  Oauth2Scopes: ['repeated NamedString additional_properties'],
  NamedString: ['string name', 'string value'],
};

/** The declarations above as .proto text (fields numbered from 1 in order). */
function protoText(): string {
  const lines = ['syntax = "proto3";', 'package openapi.v2;'];
  for (const [head, fields] of Object.entries(MESSAGES)) {
    const oneof = head.startsWith('oneof ');
    const body = fields.map((f, i) => `${f} = ${i + 1};`).join(' ');
    lines.push(`message ${head.replace(/^oneof /, '')} { ${oneof ? `oneof oneof { ${body} }` : body} }`);
  }
  return lines.join('\n');
}

let root: protobuf.Root | undefined;

/** gnostic's `openapi.v2` messages as protobufjs reflection (`lookupType('openapi.v2.Document')`). */
export function openApiV2ProtoRoot(): protobuf.Root {
  if (!root) {
    root = protobuf.parse(protoText(), { keepCase: true }).root;
    root.resolveAll();
  }
  return root;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** gnostic keeps extension and free-form values as YAML; JSON text is YAML that no YAML 1.1 reader misreads. */
const anyOf = (v: unknown): Json => ({ yaml: `${JSON.stringify(v)}\n` });

/** Swagger's keys as gnostic's field names, memoised (a bounded set: the keys of Swagger's objects). */
const fieldNames = new Map<string, string>();

/** `operationId` → `operation_id`, `$ref` → `_ref`: gnostic's field names for Swagger's keys. */
function fieldName(key: string): string {
  let name = fieldNames.get(key);
  if (name === undefined) {
    name = key.replace(/^\$/, '_').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (fieldNames.size < 1000) fieldNames.set(key, name);
  }
  return name;
}

const NON_BODY = new Map([
  ['header', 'header_parameter_sub_schema'],
  ['formData', 'form_data_parameter_sub_schema'],
  ['query', 'query_parameter_sub_schema'],
  ['path', 'path_parameter_sub_schema'],
]);
const OAUTH2 = new Map([
  ['implicit', 'oauth2_implicit_security'],
  ['password', 'oauth2_password_security'],
  ['application', 'oauth2_application_security'],
  ['accessCode', 'oauth2_access_code_security'],
]);

/** The oneof branch (field name) a JSON value takes, for the messages that are a choice. */
const BRANCH: Record<string, (v: Json) => string | undefined> = {
  ParametersItem: (v) => ('$ref' in v ? 'json_reference' : 'parameter'),
  ResponseValue: (v) => ('$ref' in v ? 'json_reference' : 'response'),
  Parameter: (v) => (v.in === 'body' ? 'body_parameter' : 'non_body_parameter'),
  NonBodyParameter: (v) => NON_BODY.get(String(v.in)),
  SchemaItem: (v) => (v.type === 'file' ? 'file_schema' : 'schema'),
  SecurityDefinitionsItem: (v) =>
    v.type === 'basic'
      ? 'basic_authentication_security'
      : v.type === 'apiKey'
        ? 'api_key_security'
        : v.type === 'oauth2'
          ? OAUTH2.get(String(v.flow))
          : undefined,
};

/** A field of `type` by name (own fields only: JSON keys such as `constructor` name none). */
function field(type: protobuf.Type, name: string | undefined): protobuf.Field | undefined {
  return name !== undefined && Object.hasOwn(type.fields, name) ? type.fields[name] : undefined;
}

const entriesFields = new Map<protobuf.Type, protobuf.Field | undefined>();

/** The repeated `Named*` field holding a message's entries when its JSON is an object keyed by name. */
function entriesField(type: protobuf.Type): protobuf.Field | undefined {
  if (!entriesFields.has(type)) {
    const f = type.fieldsArray.find(
      (x) => x.repeated && x.name !== 'vendor_extension' && x.resolvedType?.name.startsWith('Named') === true,
    );
    entriesFields.set(type, f);
  }
  return entriesFields.get(type);
}

/** One JSON value as the plain object of field `f` (protobufjs's encoder takes plain objects); undefined = not written. */
function fieldValue(f: protobuf.Field, v: unknown): unknown {
  if (f.repeated) {
    if (!Array.isArray(v)) return undefined;
    const items = v.map((item) => single(f, item)).filter((item) => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  return single(f, v);
}

function single(f: protobuf.Field, v: unknown): unknown {
  if (f.resolvedType instanceof protobuf.Type) return message(f.resolvedType, v);
  switch (f.type) {
    case 'string':
      return typeof v === 'string' && v !== '' ? v : undefined;
    case 'bool':
      return v === true ? true : undefined;
    case 'double':
      return typeof v === 'number' && v !== 0 ? v : undefined;
    case 'int64':
      return typeof v === 'number' && Number.isInteger(v) && v !== 0 ? v : undefined;
    default:
      return undefined;
  }
}

/** The message type of `type`'s field `name` (a field declared above as a message). */
function typeOf(type: protobuf.Type, name: string): protobuf.Type {
  return field(type, name)?.resolvedType as protobuf.Type;
}

/** A JSON value as a plain object of message `type`; undefined when it has no such form. */
function message(type: protobuf.Type, v: unknown): Json | undefined {
  switch (type.name) {
    case 'Any':
      return anyOf(v);
    case 'TypeItem':
      return { value: (Array.isArray(v) ? v : [v]).filter((t) => typeof t === 'string') };
    case 'ItemsItem':
      return {
        schema: (Array.isArray(v) ? v : [v])
          .map((s) => message(typeOf(type, 'schema'), s))
          .filter((s) => s !== undefined),
      };
    case 'StringArray':
      return Array.isArray(v) ? { value: v.filter((s) => typeof s === 'string') } : undefined;
    case 'AdditionalPropertiesItem':
      // A oneof member has presence: `false` is written (it forbids other properties).
      return typeof v === 'boolean' ? { boolean: v } : { schema: message(typeOf(type, 'schema'), v) };
  }
  if (!isObject(v)) return undefined;
  const choose = BRANCH[type.name];
  if (choose) {
    const f = field(type, choose(v));
    const value = f?.resolvedType instanceof protobuf.Type ? message(f.resolvedType, v) : undefined;
    return f && value ? { [f.name]: value } : undefined;
  }
  const out: Json = {};
  const entries = entriesField(type);
  const ext = field(type, 'vendor_extension');
  for (const [key, value] of Object.entries(v)) {
    if (key.startsWith('x-') && ext) {
      ((out.vendor_extension ??= []) as Json[]).push({ name: key, value: anyOf(value) });
    } else if (entries) {
      const named = field(entries.resolvedType as protobuf.Type, 'value');
      const entry = named && fieldValue(named, value);
      ((out[entries.name] ??= []) as Json[]).push(entry === undefined ? { name: key } : { name: key, value: entry });
    } else {
      const f = field(type, fieldName(key));
      const converted = f && fieldValue(f, value);
      if (f && converted !== undefined) out[f.name] = converted;
    }
  }
  return out;
}

/** The Swagger 2.0 document as the bytes of gnostic's `openapi.v2.Document`. */
export function encodeOpenApiV2(doc: Json): Uint8Array {
  const type = openApiV2ProtoRoot().lookupType('openapi.v2.Document');
  return type.encode(message(type, doc) ?? {}).finish();
}

/** One representation of `/openapi/v2`: its bytes, Content-Type and validators. */
export interface OpenApiV2Answer {
  contentType: string;
  body: Buffer;
  /** Hex SHA-512 of the JSON form, shared by both forms (answers vary by Accept), as kube-openapi does. */
  etag: string;
  lastModified: Date;
}

type Form = 'json' | 'protobuf';

/**
 * The form an Accept header picks, as kube-openapi picks it: clauses by q, then concrete before
 * wildcard; the first that names (or wildcards) JSON or a Protobuf spelling wins, so any type
 * and an absent or empty header mean JSON. Unlike kube-openapi, a clause with q=0 (or a q that
 * is no number) refuses its types, as everywhere else in this server. Undefined = 406.
 */
export function openApiV2Form(accept: string | undefined): Form | undefined {
  const offered: [string, Form][] = [
    ['application/json', 'json'],
    [OPENAPI_V2_PROTOBUF_DEPRECATED, 'protobuf'],
    [OPENAPI_V2_PROTOBUF, 'protobuf'],
  ];
  for (const [type, subtype] of acceptClauses(accept?.trim() ? accept : '*/*')) {
    for (const [mediaType, form] of offered) {
      const [t, s] = mediaType.split('/');
      if ((type === t || type === '*') && (subtype === s || subtype === '*')) return form;
    }
  }
  return undefined;
}

/** Accept clauses as [type, subtype], most preferred first (higher q, then concrete before `*`, then order). */
function acceptClauses(header: string): [string, string][] {
  const clauses: { type: string; subtype: string; q: number; i: number }[] = [];
  header.split(',').forEach((part, i) => {
    const [range = '', ...params] = part.split(';');
    const [type = '', subtype, ...more] = range.trim().toLowerCase().split('/');
    if (more.length > 0 || (subtype === undefined && type !== '*')) return;
    const qParam = params.map((p) => p.split('=')).find(([k]) => k?.trim().toLowerCase() === 'q');
    const q = qParam ? Number(qParam[1]?.trim()) : 1;
    if (!Number.isFinite(q) || q <= 0) return;
    clauses.push({ type: type.trim(), subtype: (subtype ?? '*').trim(), q, i });
  });
  const wild = (s: string): number => (s === '*' ? 1 : 0);
  return clauses
    .sort((a, b) => b.q - a.q || wild(a.type) - wild(b.type) || wild(a.subtype) - wild(b.subtype) || a.i - b.i)
    .map((c) => [c.type, c.subtype]);
}

interface Cached {
  revision: number;
  json: Buffer;
  etag: string;
  lastModified: Date;
  protobuf?: Buffer;
}

/** Both forms per catalog, rebuilt when the catalog's revision moved (custom resources come and go). */
const cache = new WeakMap<Catalog, Cached>();

export interface OpenApiV2AnswerOptions {
  catalog: Catalog;
  accept: string | undefined;
  /** Builds the JSON document (called at most once per catalog revision). */
  document: () => Json;
}

/** The `/openapi/v2` representation an Accept header asks for; a 406 when it accepts neither form. */
export function answerOpenApiV2(o: OpenApiV2AnswerOptions): OpenApiV2Answer {
  const form = openApiV2Form(o.accept);
  if (!form) throw notAcceptable(['application/json', OPENAPI_V2_PROTOBUF]);
  let c = cache.get(o.catalog);
  if (!c || c.revision !== o.catalog.revision) {
    const json = Buffer.from(JSON.stringify(o.document()));
    const etag = createHash('sha512').update(json).digest('hex').toUpperCase();
    c = { revision: o.catalog.revision, json, etag, lastModified: new Date() };
    cache.set(o.catalog, c);
  }
  if (form === 'json')
    return { contentType: 'application/json', body: c.json, etag: c.etag, lastModified: c.lastModified };
  // The Protobuf form is made from the JSON text every JSON client gets, as kube-openapi makes it.
  c.protobuf ??= Buffer.from(encodeOpenApiV2(JSON.parse(c.json.toString('utf8')) as Json));
  return { contentType: OPENAPI_V2_PROTOBUF, body: c.protobuf, etag: c.etag, lastModified: c.lastModified };
}
