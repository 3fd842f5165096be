import type { Request, Response } from 'express';
import {
  badRequest,
  groupSpellings,
  groupVersion,
  invalid,
  methodNotAllowed,
  notAcceptable,
  statusError,
  type ApiObject,
  type ObjectSchema,
  type ResourceType,
} from '@svc/api';
import { checkSchema, decodeProtobufObject } from '@svc/machinery';
import type { RequestContext } from '../registry/store.js';
import type { UserInfo } from '@svc/component-base';
import { bodyCodec, decodeBody, readBody } from './codec.js';
import { advertisedMediaTypes, negotiate } from './media-types.js';
import type { RequestInfo } from './request-info.js';
import { dryRunOf, fieldValidationOf } from './handlers/decode.js';
import { sendObject } from './handlers/respond.js';

/** One create of a create-only endpoint, decoded and checked against the handler's kind. */
export interface CreateOnlyRequest {
  namespace: string;
  /** The parent's name for a subresource (`serviceaccounts/<name>/token`); empty otherwise. */
  name: string;
  /** The body with `apiVersion` (as the client spelled it, or the URL's) and `kind` set. */
  body: ApiObject;
  user: UserInfo;
  dryRun: boolean;
}

/**
 * A create-only endpoint that is not a stored type's create: a virtual type (reviews) or a
 * subresource of another kind (`serviceaccounts/token` → TokenRequest). Nothing is stored by
 * the generic store; the handler answers from the request.
 */
export interface CreateOnlyHandler {
  /** The kind read and answered; its schema types the body (and decodes Protobuf bodies). */
  kind: { group: string; version: string; kind: string; schema: ObjectSchema };
  create(req: CreateOnlyRequest): Promise<object>;
}

/** Key of a create-only endpoint: `<group>/<version>/<plural>[/<subresource>]`. */
export function createOnlyKey(r: Pick<ResourceType, 'group' | 'version' | 'plural'>, subresource = ''): string {
  return `${r.group}/${r.version}/${r.plural}${subresource ? `/${subresource}` : ''}`;
}

/**
 * Serves a create-only endpoint: POST only (405 otherwise), JSON, YAML or Protobuf body of the
 * handler's kind (apiVersion in any accepted spelling; the answer uses the client's), typed by
 * the schema (422), unknown and duplicate fields per `fieldValidation`; answers 201 with the
 * handler's object.
 */
export async function serveCreateOnly(
  h: CreateOnlyHandler,
  req: Request,
  res: Response,
  info: RequestInfo,
  ctx: RequestContext,
): Promise<void> {
  if (info.parts.length > 3) throw statusError('NotFound', 'the server could not find the requested resource');
  const sub = info.subresource !== '';
  if (info.verb !== 'create' || (!sub && info.name)) throw methodNotAllowed();
  const format = negotiate(req.headers.accept);
  if (!format) throw notAcceptable(advertisedMediaTypes());
  const query = info.query;
  const dryRun = dryRunOf(query);
  const level = fieldValidationOf(query);

  const { codec } = bodyCodec(req.headers['content-type']);
  const buf = await readBody(req);
  const { value, duplicates } =
    codec === 'protobuf' ? { value: decodeProtobufObject(buf, h.kind.schema), duplicates: [] } : decodeBody(buf, codec);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(`the body of the request must be a ${h.kind.kind} object`);
  }
  const obj = value as Record<string, unknown>;
  const spellings = groupSpellings(h.kind.group).map((g) => groupVersion({ group: g, version: h.kind.version }));
  if (obj.apiVersion !== undefined && !spellings.includes(String(obj.apiVersion))) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${spellings[0] ?? ''})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== h.kind.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${h.kind.kind})`);
  }
  const { errors, unknownFields, value: pruned } = checkSchema(obj, h.kind.schema);
  if (errors.length > 0) throw invalid({ group: h.kind.group, kind: h.kind.kind }, info.name, errors);
  const warnings: string[] = [];
  const problems = [
    ...duplicates.map((f) => `duplicate field ${JSON.stringify(f)}`),
    ...unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`),
  ];
  if (problems.length > 0) {
    if (level === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
    if (level === 'Warn') warnings.push(...problems);
  }
  const body = {
    ...(pruned as Record<string, unknown>),
    apiVersion: obj.apiVersion ?? spellings[0],
    kind: h.kind.kind,
  } as ApiObject;
  body.metadata ??= {};
  ctx.dryRun = dryRun;
  const result = await h.create({
    namespace: info.namespace,
    name: sub ? info.name : '',
    body,
    user: ctx.user ?? { name: '', groups: [] },
    dryRun,
  });
  sendObject(res, 201, result, format.codec, warnings);
}
