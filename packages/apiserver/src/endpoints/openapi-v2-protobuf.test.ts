import protobuf from 'protobufjs';
import YAML from 'yaml';
import { builtinCatalog, defineResource, naming, operationExtensionPrefixes, s, type Catalog } from '@svc/api';
import { openApiV2Answer, openApiV2Document } from './openapi.js';
import {
  OPENAPI_V2_PROTOBUF,
  OPENAPI_V2_PROTOBUF_DEPRECATED,
  encodeOpenApiV2,
  openApiV2Form,
  openApiV2ProtoRoot,
} from './openapi-v2-protobuf.js';

type Json = Record<string, unknown>;

const gvkExt = (): string => `${naming().schemaExtensionPrefix}group-version-kind`;

/** A custom resource publishing a schema as written, with keys Swagger 2.0 has no field for. */
function widgets(): ReturnType<typeof defineResource> {
  return defineResource({
    group: 'example.com',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    singular: 'widget',
    namespaced: true,
    schema: s.obj({ spec: s.any() }),
    custom: {
      crdName: 'widgets.example.com',
      crdUid: 'uid-1',
      storageVersion: 'v1',
      openApiSchema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            required: ['size'],
            additionalProperties: false,
            properties: {
              size: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
              port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              color: { type: 'string', enum: ['red', 'green'], nullable: true, maxLength: 8 },
              tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
            },
            'x-kubernetes-validations': [{ rule: 'self.size < 10', message: 'too big' }],
          },
        },
      },
    },
  });
}

function decode(bytes: Uint8Array): Json {
  const type = openApiV2ProtoRoot().lookupType('openapi.v2.Document');
  return type.toObject(type.decode(bytes), { longs: Number, defaults: false, arrays: false }) as Json;
}

const jsonKey = (field: string): string =>
  field.replace(/^_ref$/, '$ref').replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** gnostic's message (as protobufjs's toObject gives it) back as the Swagger JSON it was read from. */
function toJson(type: protobuf.Type, m: Json): unknown {
  const sub = (name: string): protobuf.Type => type.fields[name]?.resolvedType as protobuf.Type;
  switch (type.name) {
    case 'Any':
      return YAML.parse(m.yaml as string) as unknown;
    case 'TypeItem':
    case 'StringArray': {
      const v = (m.value as string[] | undefined) ?? [];
      return type.name === 'TypeItem' && v.length === 1 ? v[0] : v;
    }
    case 'ItemsItem': {
      const v = ((m.schema as Json[] | undefined) ?? []).map((x) => toJson(sub('schema'), x));
      return v.length === 1 ? v[0] : v;
    }
  }
  if (type.oneofsArray.length > 0) {
    const [name, value] = Object.entries(m)[0] ?? [];
    if (name === undefined) return undefined;
    const f = type.fields[name];
    return f?.resolvedType ? toJson(f.resolvedType as protobuf.Type, value as Json) : value;
  }
  const out: Json = {};
  for (const [name, value] of Object.entries(m)) {
    const f = type.fields[name];
    if (!f) throw new Error(`${type.name}.${name}: no such field`);
    const named = f.repeated && f.resolvedType?.name.startsWith('Named');
    if (named) {
      const valueType = (f.resolvedType as protobuf.Type).fields.value?.resolvedType as protobuf.Type | null;
      for (const e of value as { name: string; value?: Json }[]) {
        out[e.name] = valueType ? toJson(valueType, e.value ?? {}) : e.value;
      }
    } else if (f.resolvedType) {
      const t = f.resolvedType as protobuf.Type;
      out[jsonKey(name)] = f.repeated ? (value as Json[]).map((x) => toJson(t, x)) : toJson(t, value as Json);
    } else {
      out[jsonKey(name)] = value;
    }
  }
  return out;
}

/** What proto3 can carry: zero values (`false`, `""`, `0`, empty lists) are not on the wire. */
function proto3Visible(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(proto3Visible);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== false && x !== '' && x !== 0 && !(Array.isArray(x) && x.length === 0))
      .map(([k, x]) => [k, proto3Visible(x)]),
  );
}

/** Swagger 2.0 has no field for these OpenAPI v3 keywords: gnostic (and so the Protobuf form) leaves them out. */
function withoutV3Keywords(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutV3Keywords);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !['nullable', 'anyOf', 'oneOf', 'not'].includes(k))
      .map(([k, x]) => [k, k.startsWith('x-') ? x : withoutV3Keywords(x)]),
  );
}

function catalogWithWidgets(): Catalog {
  const c = builtinCatalog();
  c.add(widgets());
  return c;
}

describe('the Protobuf form of /openapi/v2', () => {
  const catalog = catalogWithWidgets();
  const json = JSON.parse(JSON.stringify(openApiV2Document(catalog))) as Json & {
    paths: Record<string, Json>;
    definitions: Record<string, Json>;
  };
  const bytes = encodeOpenApiV2(json);
  const decoded = decode(bytes);
  const documentType = openApiV2ProtoRoot().lookupType('openapi.v2.Document');

  it('decodes back to the JSON document (proto3 zero values and v3-only keywords aside)', () => {
    expect(proto3Visible(toJson(documentType, decoded))).toEqual(proto3Visible(withoutV3Keywords(json)));
  });

  it('keeps paths and definitions in document order', () => {
    const paths = (decoded.paths as { path: { name: string }[] }).path.map((p) => p.name);
    expect(paths).toEqual(Object.keys(json.paths));
    const defs = (decoded.definitions as { additional_properties: { name: string }[] }).additional_properties;
    expect(defs.map((d) => d.name)).toEqual(Object.keys(json.definitions));
  });

  it("writes gnostic's field numbers (read with an independent declaration of them)", () => {
    // Facts from gnostic-models' openapiv2/OpenAPIv2.proto, only the fields read here.
    const check = protobuf.parse(
      `syntax = "proto3"; package check;
      message Document { string swagger = 1; Info info = 2; Paths paths = 8; Definitions definitions = 9; }
      message Info { string title = 1; string version = 2; }
      message Paths { repeated NamedPathItem path = 2; }
      message NamedPathItem { string name = 1; PathItem value = 2; }
      message PathItem { Operation get = 2; Operation patch = 8; repeated ParametersItem parameters = 9; }
      message Operation { string operation_id = 5; repeated string consumes = 7; repeated ParametersItem parameters = 8;
        Responses responses = 9; repeated NamedAny vendor_extension = 13; }
      message ParametersItem { Parameter parameter = 1; }
      message Parameter { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; }
      message BodyParameter { string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
      message NonBodyParameter { PathParameterSubSchema path_parameter_sub_schema = 4; }
      message PathParameterSubSchema { bool required = 1; string in = 2; string name = 4; string type = 5; }
      message Responses { repeated NamedResponseValue response_code = 1; }
      message NamedResponseValue { string name = 1; ResponseValue value = 2; }
      message ResponseValue { Response response = 1; }
      message Response { string description = 1; SchemaItem schema = 2; }
      message SchemaItem { Schema schema = 1; }
      message Definitions { repeated NamedSchema additional_properties = 1; }
      message NamedSchema { string name = 1; Schema value = 2; }
      message Schema { string _ref = 1; repeated string required = 19; AdditionalPropertiesItem additional_properties = 21;
        TypeItem type = 22; ItemsItem items = 23; Properties properties = 25; repeated NamedAny vendor_extension = 31; }
      message AdditionalPropertiesItem { Schema schema = 1; bool boolean = 2; }
      message TypeItem { repeated string value = 1; }
      message ItemsItem { repeated Schema schema = 1; }
      message Properties { repeated NamedSchema additional_properties = 1; }
      message NamedAny { string name = 1; Any value = 2; }
      message Any { string yaml = 2; }`,
      { keepCase: true },
    ).root;
    const type = check.lookupType('check.Document');
    interface NamedAny {
      name: string;
      value: { yaml: string };
    }
    interface Schema {
      _ref?: string;
      type?: { value: string[] };
      properties?: { additional_properties: { name: string; value: Schema }[] };
      additional_properties?: { schema?: Schema; boolean?: boolean };
      vendor_extension?: NamedAny[];
    }
    const doc = type.toObject(type.decode(bytes)) as {
      swagger: string;
      info: { title: string };
      paths: { path: { name: string; value: { patch?: Json; parameters?: Json[] } }[] };
      definitions: { additional_properties: { name: string; value: Schema }[] };
    };
    expect(doc.swagger).toBe('2.0');
    expect(doc.info.title).toBe(json.info && (json.info as Json).title);

    const configMap = doc.definitions.additional_properties.find((d) => d.name.endsWith('.api.core.v1.ConfigMap'));
    const props = new Map(configMap?.value.properties?.additional_properties.map((p) => [p.name, p.value]));
    expect(configMap?.value.type?.value).toEqual(['object']);
    expect(props.get('metadata')?._ref).toMatch(/^#\/definitions\/.*\.ObjectMeta$/);
    expect(props.get('data')?.additional_properties?.schema?.type?.value).toEqual(['string']);
    const gvk = configMap?.value.vendor_extension?.find((e) => e.name === gvkExt());
    expect(YAML.parse(gvk?.value.yaml ?? '')).toEqual([{ group: '', version: 'v1', kind: 'ConfigMap' }]);

    const item = doc.paths.path.find((p) => p.name === '/api/v1/namespaces/{namespace}/configmaps/{name}')?.value;
    const patch = item?.patch as { operation_id: string; vendor_extension: NamedAny[]; parameters: Json[] };
    expect(patch.operation_id).toBe('patchConfigMapNamespaced');
    for (const prefix of operationExtensionPrefixes()) {
      const ext = patch.vendor_extension.find((e) => e.name === `${prefix}group-version-kind`);
      expect(YAML.parse(ext?.value.yaml ?? '')).toEqual({ group: '', version: 'v1', kind: 'ConfigMap' });
      const action = patch.vendor_extension.find((e) => e.name === `${prefix}action`);
      expect(YAML.parse(action?.value.yaml ?? '')).toBe('patch');
    }
    expect(patch.parameters[0]).toEqual({
      parameter: {
        body_parameter: { name: 'body', in: 'body', required: true, schema: { type: { value: ['object'] } } },
      },
    });
    expect(item?.parameters).toContainEqual({
      parameter: {
        non_body_parameter: { path_parameter_sub_schema: { required: true, in: 'path', name: 'name', type: 'string' } },
      },
    });

    // `additionalProperties: false` is a oneof member: written although it is proto3's zero value.
    const widget = doc.definitions.additional_properties.find((d) => d.name.endsWith('.Widget'));
    const spec = widget?.value.properties?.additional_properties.find((p) => p.name === 'spec')?.value;
    expect(spec?.additional_properties).toEqual({ boolean: false });
  });

  it('starts with field 1 (swagger) and is the same bytes for the same document', () => {
    expect(Buffer.from(bytes.subarray(0, 5))).toEqual(Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]));
    expect(Buffer.from(encodeOpenApiV2(json))).toEqual(Buffer.from(bytes));
  });

  it('leaves out what Swagger 2.0 has no field for, and keeps vendor extensions as YAML', () => {
    const widget = (toJson(documentType, decoded) as { definitions: Record<string, Json> }).definitions;
    const spec = Object.entries(widget).find(([k]) => k.endsWith('.Widget'))?.[1].properties as Record<string, Json>;
    const props = (spec.spec as { properties: Record<string, Json> }).properties;
    expect(props.port).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(props.color).toEqual({ type: 'string', enum: ['red', 'green'], maxLength: 8 });
    expect(props.size).toEqual({ type: 'integer', minimum: 1, maximum: 10, default: 3 });
    expect(spec.spec?.['x-kubernetes-validations']).toEqual([{ rule: 'self.size < 10', message: 'too big' }]);
  });
});

describe('negotiation of /openapi/v2', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['*', 'json'],
    ['application/*', 'json'],
    ['application/json', 'json'],
    [OPENAPI_V2_PROTOBUF_DEPRECATED, 'protobuf'],
    [OPENAPI_V2_PROTOBUF, 'protobuf'],
    [`${OPENAPI_V2_PROTOBUF_DEPRECATED}, application/json`, 'protobuf'],
    [`application/json, ${OPENAPI_V2_PROTOBUF}`, 'json'],
    [`application/json;q=0.5, ${OPENAPI_V2_PROTOBUF}`, 'protobuf'],
    [`*/*, ${OPENAPI_V2_PROTOBUF}`, 'protobuf'],
    [`application/yaml, */*;q=0.1`, 'json'],
    ['application/yaml', undefined],
    ['application/vnd.kubernetes.protobuf', undefined],
    ['application/json;q=0', undefined],
  ])('Accept %p → %p', (accept, form) => {
    expect(openApiV2Form(accept)).toBe(form);
  });
});

describe('openApiV2Answer', () => {
  it('answers each form with its Content-Type and one ETag, built once per catalog revision', () => {
    const catalog = builtinCatalog();
    const j1 = openApiV2Answer(catalog, 'application/json');
    const p1 = openApiV2Answer(catalog, OPENAPI_V2_PROTOBUF_DEPRECATED);
    expect(j1.contentType).toBe('application/json');
    expect(p1.contentType).toBe(OPENAPI_V2_PROTOBUF);
    expect(p1.etag).toBe(j1.etag);
    expect(j1.etag).toMatch(/^[0-9A-F]{128}$/);
    expect(JSON.parse(j1.body.toString())).toEqual(JSON.parse(JSON.stringify(openApiV2Document(catalog))));
    expect(openApiV2Answer(catalog, OPENAPI_V2_PROTOBUF).body).toBe(p1.body);
    expect(openApiV2Answer(catalog, undefined).body).toBe(j1.body);

    catalog.add(widgets());
    const p2 = openApiV2Answer(catalog, OPENAPI_V2_PROTOBUF);
    expect(p2.etag).not.toBe(p1.etag);
    const paths = (decode(p2.body).paths as { path: { name: string }[] }).path.map((p) => p.name);
    expect(paths).toContain('/apis/example.com/v1/namespaces/{namespace}/widgets/{name}');

    catalog.remove('example.com', 'v1', 'widgets');
    const p3 = openApiV2Answer(catalog, OPENAPI_V2_PROTOBUF);
    expect(p3.etag).toBe(p1.etag);
    expect(Buffer.from(p3.body)).toEqual(Buffer.from(p1.body));
  });

  it('is a 406 naming both forms when the client accepts neither', () => {
    expect(() => openApiV2Answer(builtinCatalog(), 'application/yaml')).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 406 }) }),
    );
  });
});
