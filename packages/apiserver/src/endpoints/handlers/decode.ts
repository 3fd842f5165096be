import type { IncomingMessage } from 'node:http';
import {
  badRequest,
  invalid,
  isApiObject,
  unsupportedMediaType,
  type ApiObject,
  type ResourceType,
  type Schema,
} from '@svc/api';
import { checkSchema, decodeProtobufObject, nullListItemsAsEmptyObjects } from '@svc/machinery';
import { auditRequestObject } from '../../audit/request-audit.js';
import { apiVersionOf } from '../../registry/store.js';
import { bodyCodec, decodeBody, readBody, type BodyCodec } from '../codec.js';
import { bodyKind, type HandlerScope } from './scope.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}, must be one of: Ignore, Warn, Strict`);
}

/** A body as decoded: a JSON value, the media type it came in, and keys that occurred twice. */
export interface ReadBody {
  value: unknown;
  mediaType: string;
  duplicates: string[];
}

/**
 * Reads and decodes a request body as a JSON value (any shape): JSON and YAML as they are,
 * Protobuf through `schema` (415 when the kind has no Protobuf form). `accepted` maps media
 * types to codecs (default: whole-object bodies).
 */
export async function readBodyValue(
  req: IncomingMessage,
  o: { schema: Schema; accepted?: Record<string, BodyCodec> },
): Promise<ReadBody> {
  const { codec, mediaType } = bodyCodec(req.headers['content-type'], o.accepted);
  const buf = await readBody(req);
  if (codec === 'protobuf') {
    if (o.schema.type !== 'object') throw unsupportedMediaType(mediaType, ['application/json', 'application/yaml']);
    const value = decodeProtobufObject(buf, o.schema);
    auditRequestObject(req, value);
    return { value, mediaType, duplicates: [] };
  }
  const decoded = decodeBody(buf, codec);
  auditRequestObject(req, decoded.value);
  return { ...decoded, mediaType };
}

/**
 * Reads the body of a verb handler's request, in the handler's kind. Custom resources have no
 * Protobuf form: a Protobuf body is a 415 (spec: media types).
 */
export function readJsonValue(scope: HandlerScope, accepted?: Record<string, BodyCodec>): Promise<ReadBody> {
  const types = accepted ?? (scope.resource.custom && !scope.view ? jsonBodyTypes() : undefined);
  return readBodyValue(scope.req, { schema: bodyKind(scope).schema, accepted: types });
}

function jsonBodyTypes(): Record<string, BodyCodec> {
  return { 'application/json': 'json', 'application/yaml': 'yaml' };
}

/** What a decoded body must be, and where its field problems go. */
export interface ObjectShape {
  kind: Pick<ResourceType, 'group' | 'kind' | 'schema' | 'custom'>;
  /** The apiVersion spellings the body may carry; the first is the one answers use. */
  apiVersions: readonly string[];
  level: FieldValidation;
  /** Where `Warn` puts unknown and duplicate fields. */
  warnings: string[];
}

/**
 * Checks a decoded value against its kind: not an object, or a wrong kind or apiVersion → 400;
 * type errors → 422; unknown and duplicate fields dropped (the last duplicate wins), warned
 * about or refused (400) per fieldValidation. The result has `metadata`, `kind`, and the
 * apiVersion the body gave (else the first accepted one).
 */
export function checkObjectShape(shape: ObjectShape, body: Pick<ReadBody, 'value' | 'duplicates'>): ApiObject {
  const { kind, apiVersions } = shape;
  const { value } = body;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
    throw badRequest(`the body of the request must be a ${kind.kind} object, not ${what}`);
  }
  const obj = value as Record<string, unknown>;
  if (obj.apiVersion !== undefined && !apiVersions.includes(String(obj.apiVersion))) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersions[0] ?? ''})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== kind.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind.kind})`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  // Built-in kinds decode as Go does: a null item of a list of structs is an empty struct.
  const typed = kind.custom ? obj : (nullListItemsAsEmptyObjects(obj, kind.schema) as Record<string, unknown>);
  const { errors, unknownFields, value: pruned } = checkSchema(typed, kind.schema);
  if (errors.length > 0) {
    const meta = isApiObject(obj) ? obj.metadata : {};
    throw invalid({ group: kind.group, kind: kind.kind }, String(meta.name ?? ''), errors);
  }
  const problems = [
    ...body.duplicates.map((f) => `duplicate field ${JSON.stringify(f)}`),
    ...unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`),
  ];
  if (problems.length > 0) {
    if (shape.level === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
    if (shape.level === 'Warn') shape.warnings.push(...problems);
  }
  const { apiVersion, kind: _k, ...rest } = pruned as ApiObject;
  return { apiVersion: apiVersion ?? apiVersions[0], kind: kind.kind, ...rest } as ApiObject;
}

/** A verb handler's body in the URL's kind (`apiVersion` exactly the URL's). */
export function admitObjectShape(scope: HandlerScope, value: unknown, duplicates: readonly string[] = []): ApiObject {
  const kind = bodyKind(scope);
  const shape = {
    kind,
    apiVersions: [apiVersionOf(kind)],
    level: fieldValidationOf(scope.query),
    warnings: scope.warnings,
  };
  return checkObjectShape(shape, { value, duplicates: [...duplicates] });
}

/** The namespace of the body must agree with the URL's (or be empty). */
export function checkNamespace(scope: HandlerScope, obj: ApiObject): void {
  const ns = obj.metadata.namespace;
  if (scope.resource.namespaced && ns && ns !== scope.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}

export function checkName(scope: HandlerScope, obj: ApiObject): void {
  if (obj.metadata.name !== undefined && obj.metadata.name !== '' && obj.metadata.name !== scope.info.name) {
    throw badRequest(
      `the name of the object (${obj.metadata.name}) does not match the name on the URL (${scope.info.name})`,
    );
  }
}

export function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  for (const v of values) {
    if (v !== 'All' && v !== '')
      throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}, supported values are: All`);
  }
  return values.includes('All');
}
