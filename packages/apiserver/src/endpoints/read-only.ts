import { methodNotAllowed, notAcceptable, statusError } from '@svc/api';
import type { ReadOnlyHandler } from '../registry/read-only.js';
import { advertisedMediaTypes, negotiate } from './media-types.js';
import type { ServedRequest } from './resource-router.js';
import { objectSchemaOf, sendObject } from './handlers/respond.js';
import { readGetParams, readListParams } from './handlers/list-params.js';
import { includeObjectOf, toTable } from './table.js';

/**
 * Serves a read-only type that is not stored (Kubernetes' REST storages with only Getter and
 * Lister, such as componentstatuses): get and list in JSON, YAML, Protobuf or as a Table;
 * every other verb 405 (no watch: Kubernetes installs no watch route for them). The handler's
 * deprecation warning goes out with each answer.
 */
export async function serveReadOnly(
  h: ReadOnlyHandler,
  r: ServedRequest & { onDeprecated?: () => void },
): Promise<void> {
  const { req, res, info } = r;
  if (info.subresource || info.parts.length > 3)
    throw statusError('NotFound', 'the server could not find the requested resource');
  if (info.verb !== 'get' && info.verb !== 'list') throw methodNotAllowed();
  const format = negotiate(req.headers.accept, ['Table']);
  if (!format) throw notAcceptable(advertisedMediaTypes());
  const warnings = h.warning === undefined ? [] : [h.warning];
  if (h.warning !== undefined) r.onDeprecated?.();
  const include = format.as === 'Table' ? includeObjectOf(info.query) : undefined;
  const schema = objectSchemaOf({ resource: h.type });
  let value: object;
  if (info.verb === 'get') {
    readGetParams(info.query);
    const obj = await h.get(info.name);
    value = include ? toTable(h.type, [obj], { group: format.group ?? '', include }) : obj;
  } else {
    const items = await h.list(readListParams(info.query, h.type));
    value = include
      ? toTable(h.type, items, { group: format.group ?? '', include, listMeta: {} })
      : { kind: h.type.listKind, apiVersion: h.type.version, metadata: {}, items };
  }
  sendObject(res, { code: 200, value, format, warnings, schema });
}
