import {
  badRequest,
  fieldErrors,
  invalid,
  isNotFound,
  metaGroup,
  naming,
  unsupportedMediaType,
  type ApiObject,
} from '@svc/api';
import { applyJsonPatch, applyMergePatch, applyPatch, applyStrategicMergePatch } from '@svc/machinery';
import { apiVersionOf } from '../../registry/store.js';
import { bodyKind, viewed, type HandlerScope } from './scope.js';
import { answer } from './respond.js';
import { optionalBool } from './list-params.js';
import { admitObjectShape, checkName, checkNamespace, readJsonValue } from './decode.js';
import type { BodyCodec } from '../codec.js';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

const PATCH_TYPES: Record<string, BodyCodec> = {
  [JSON_PATCH]: 'json',
  [MERGE_PATCH]: 'json',
  [STRATEGIC_PATCH]: 'json',
  [APPLY_PATCH]: 'yaml',
};

function patchOptionsInvalid(errs: ReturnType<typeof fieldErrors.required>[]): Error {
  return invalid({ group: metaGroup(), kind: 'PatchOptions' }, '', errs);
}

/**
 * PATCH: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch (merge
 * keys and strategies from the type's schema) and server-side apply. Non-apply patches are
 * applied to the current object on every retry; apply merges with field ownership and
 * creates the object when it does not exist.
 */
export async function handlePatch(s: HandlerScope): Promise<void> {
  // Apply to a view (`scale`) is not served: its field ownership would need mapping onto the parent's.
  const supported = Object.keys(PATCH_TYPES).filter(
    (t) => (t !== STRATEGIC_PATCH || s.resource.strategicMerge) && (t !== APPLY_PATCH || !s.view),
  );
  let read: Awaited<ReturnType<typeof readJsonValue>>;
  try {
    read = await readJsonValue(s, Object.fromEntries(supported.map((t) => [t, PATCH_TYPES[t] as BodyCodec])));
  } catch (e) {
    if ((e as { status?: { code?: number } }).status?.code === 415)
      throw unsupportedMediaType(s.req.headers['content-type'] ?? '', supported);
    throw e;
  }
  const { value: patch, mediaType, duplicates } = read;
  const force = s.query.get('force');
  if (mediaType === APPLY_PATCH) {
    await handleApply(s, { body: patch, force: optionalBool(s.query, 'force') === true, duplicates });
    return;
  }
  if (force !== null)
    throw patchOptionsInvalid([fieldErrors.forbidden('force', 'may not be specified for non-apply patch')]);
  if (mediaType !== JSON_PATCH && (typeof patch !== 'object' || patch === null || Array.isArray(patch))) {
    throw badRequest('the patch must be a JSON object');
  }
  const apply = (current: ApiObject): ApiObject => {
    const target = viewed(s, current);
    let patched: unknown;
    // A failed JSON patch operation (including a `test`) is a 422 Invalid StatusError from machinery.
    if (mediaType === JSON_PATCH) patched = applyJsonPatch(target, patch);
    else if (mediaType === STRATEGIC_PATCH) patched = applyStrategicMergePatch(target, patch, bodyKind(s).schema);
    else patched = applyMergePatch(target, patch);
    // Duplicate keys of a merge or strategic patch sit at the object's own paths.
    const obj = admitObjectShape(s, patched, mediaType === JSON_PATCH ? [] : duplicates);
    checkNamespace(s, obj);
    checkName(s, obj);
    return s.view ? s.view.write(obj, current) : obj;
  };
  const { object } = await s.store.update(s.info.namespace, s.info.name, {
    updater: (current) => {
      s.warnings.length = 0;
      return apply(current);
    },
    ctx: s.ctx,
    subresource: s.info.subresource,
  });
  answer(s, 200, viewed(s, object));
}

/** An apply patch as read: its body, the `force` query parameter and the body's duplicate keys. */
interface ApplyRequest {
  body: unknown;
  force: boolean;
  duplicates: string[];
}

/** Server-side apply: the body is the manager's whole intent for the fields it sets. */
async function handleApply(s: HandlerScope, { body, force, duplicates }: ApplyRequest): Promise<void> {
  const manager = s.query.get('fieldManager');
  if (!manager) throw patchOptionsInvalid([fieldErrors.required('fieldManager', 'is required for apply patch')]);
  const applied = admitObjectShape(s, body, duplicates);
  checkNamespace(s, applied);
  if (!applied.metadata.name) throw badRequest('metadata.name is required for apply patch');
  checkName(s, applied);
  const hasStatus = s.resource.subresources.includes('status');
  const sub = s.info.subresource;
  const run = (live: ApiObject | undefined): ApiObject =>
    applyPatch({
      live,
      applied,
      manager,
      force,
      schema: s.resource.schema,
      apiVersion: apiVersionOf(s.resource),
      now: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      subresource: sub || undefined,
      ignoreStatus: hasStatus && sub === '',
      onlyStatus: sub === 'status',
      lastAppliedAnnotation: naming().lastAppliedAnnotation,
    }).object as ApiObject;
  try {
    const { object } = await s.store.update(s.info.namespace, s.info.name, {
      updater: (current) => run(current),
      ctx: s.ctx,
      subresource: sub,
      managedFieldsDone: true,
    });
    answer(s, 200, object);
  } catch (e) {
    if (!isNotFound(e) || sub !== '') throw e;
    // Apply to a missing object creates it (needs `create` permission once RBAC exists).
    const created = await s.store.create(s.info.namespace, run(undefined), { ctx: s.ctx, managedFieldsDone: true });
    answer(s, 201, created);
  }
}
