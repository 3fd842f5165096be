import { badRequest, invalid, isApiObject, unsupportedMediaType, type ApiObject, type FieldError } from '@svc/api';
import { checkSchema, decodeProtobufObject } from '@svc/machinery';
import { apiVersionOf } from '../../registry/store.js';
import { bodyCodec, decodeBody, readBody } from '../codec.js';
import { bodyKind, type HandlerScope } from './scope.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}, must be one of: Ignore, Warn, Strict`);
}

/** Reads and decodes the request body as a JSON value (any shape); Protobuf bodies through the type's schema. */
export async function readJsonValue(
  scope: HandlerScope,
  accepted?: Parameters<typeof bodyCodec>[1],
): Promise<{ value: unknown; mediaType: string; duplicates: string[] }> {
  const { codec, mediaType } = bodyCodec(scope.req.headers['content-type'], accepted);
  const buf = await readBody(scope.req);
  if (codec === 'protobuf') {
    const { schema } = bodyKind(scope);
    if (schema.type !== 'object') throw unsupportedMediaType(mediaType, ['application/json', 'application/yaml']);
    return { value: decodeProtobufObject(buf, schema), mediaType, duplicates: [] };
  }
  return { ...decodeBody(buf, codec), mediaType };
}

/**
 * Checks a decoded object against the URL's type and the schema: wrong kind/apiVersion → 400;
 * type errors → 422; unknown and duplicate fields dropped (the last duplicate wins), warned
 * about or refused (400) per fieldValidation.
 */
export function admitObjectShape(scope: HandlerScope, value: unknown, duplicates: readonly string[] = []): ApiObject {
  const r = bodyKind(scope);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(
      `the body of the request must be a ${r.kind} object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
    );
  }
  const obj = value as Record<string, unknown>;
  const expectedApiVersion = apiVersionOf(r);
  if (obj.apiVersion !== undefined && obj.apiVersion !== expectedApiVersion) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expectedApiVersion})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== r.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${r.kind})`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  const level = fieldValidationOf(scope.query);
  const { errors, unknownFields, value: pruned } = checkSchema(obj, r.schema);
  const typeErrors: FieldError[] = errors;
  if (typeErrors.length > 0) {
    const meta = isApiObject(obj) ? obj.metadata : {};
    throw invalid({ group: r.group, kind: r.kind }, String(meta.name ?? ''), typeErrors);
  }
  const problems = [
    ...duplicates.map((f) => `duplicate field ${JSON.stringify(f)}`),
    ...unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`),
  ];
  if (problems.length > 0) {
    if (level === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
    if (level === 'Warn') scope.warnings.push(...problems);
  }
  const { apiVersion: _a, kind: _k, ...rest } = pruned as ApiObject;
  return { apiVersion: expectedApiVersion, kind: r.kind, ...rest } as ApiObject;
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
