import { badRequest, unsupportedMediaType, type ApiObject } from '@svc/api';
import { applyJsonPatch, applyMergePatch } from '@svc/machinery';
import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { admitObjectShape, checkName, checkNamespace, readJsonValue } from './decode.js';
import type { BodyCodec } from '../codec.js';

const PATCH_TYPES: Record<string, BodyCodec> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'json',
};

const SUPPORTED = Object.keys(PATCH_TYPES);

/** PATCH with JSON patch (RFC 6902) or JSON merge patch (RFC 7386), applied to the current object on every retry. */
export async function handlePatch(s: HandlerScope): Promise<void> {
  let read: Awaited<ReturnType<typeof readJsonValue>>;
  try {
    read = await readJsonValue(s, PATCH_TYPES);
  } catch (e) {
    if ((e as { status?: { code?: number } }).status?.code === 415) throw unsupportedMediaType(s.req.headers['content-type'] ?? '', SUPPORTED);
    throw e;
  }
  const { value: patch, mediaType } = read;
  if (mediaType === 'application/merge-patch+json' && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) {
    throw badRequest('the merge patch must be a JSON object');
  }
  const apply = (current: ApiObject): ApiObject => {
    let patched: unknown;
    if (mediaType === 'application/json-patch+json') {
      // A failed operation (including a `test`) is a 422 Invalid StatusError from machinery.
      patched = applyJsonPatch(current, patch);
    } else {
      patched = applyMergePatch(current, patch);
    }
    const obj = admitObjectShape(s, patched);
    checkNamespace(s, obj);
    checkName(s, obj);
    return obj;
  };
  const { object } = await s.store.update(s.info.namespace, s.info.name, (current) => {
    s.warnings.length = 0;
    return apply(current);
  }, s.ctx, { subresource: s.info.subresource });
  sendObject(s.res, 200, object, s.format.codec, s.warnings);
}
