import { groupSpellings, groupVersion, methodNotAllowed, notAcceptable, statusError } from '@svc/api';
import type { CreateOnlyHandler } from '../registry/create-only.js';
import { advertisedMediaTypes, negotiate } from './media-types.js';
import type { ServedRequest } from './resource-router.js';
import { checkObjectShape, dryRunOf, fieldValidationOf, readBodyValue } from './handlers/decode.js';
import { sendObject } from './handlers/respond.js';

/**
 * Serves a create-only endpoint: POST only (405 otherwise); the body is decoded and checked
 * as every create's is (JSON, YAML or Protobuf; apiVersion in any accepted spelling, and the
 * answer uses the client's; types → 422; unknown and duplicate fields per `fieldValidation`);
 * answers 201 with the handler's object.
 */
export async function serveCreateOnly(h: CreateOnlyHandler, r: ServedRequest): Promise<void> {
  const { req, res, info, ctx } = r;
  if (info.parts.length > 3) throw statusError('NotFound', 'the server could not find the requested resource');
  const sub = info.subresource !== '';
  if (info.verb !== 'create' || (!sub && info.name)) throw methodNotAllowed();
  const format = negotiate(req.headers.accept);
  if (!format) throw notAcceptable(advertisedMediaTypes());
  const dryRun = dryRunOf(info.query);
  const level = fieldValidationOf(info.query);
  const read = await readBodyValue(req, { schema: h.kind.schema });
  const versions = [h.kind.version, ...(h.alsoVersions ?? [])];
  const apiVersions = groupSpellings(h.kind.group).flatMap((g) =>
    versions.map((version) => groupVersion({ group: g, version })),
  );
  const warnings: string[] = [];
  const body = checkObjectShape({ kind: h.kind, apiVersions, level, warnings }, read);
  ctx.dryRun = dryRun;
  const user = ctx.user ?? { name: '', groups: [] };
  const notes = { warnings, auditAnnotations: {} as Record<string, string> };
  const result = await h.create({ namespace: info.namespace, name: sub ? info.name : '', body, user, dryRun, notes });
  for (const [k, v] of Object.entries(notes.auditAnnotations)) (ctx.annotations ??= {})[k] ??= v;
  sendObject(res, { code: 201, value: result, format: format.codec, warnings });
}
