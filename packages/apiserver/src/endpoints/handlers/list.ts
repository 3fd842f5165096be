import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { readListParams } from './list-params.js';
import { includeObjectOf, toTable } from '../table.js';

export async function handleList(s: HandlerScope): Promise<void> {
  const include = s.format.as === 'Table' ? includeObjectOf(s.query) : undefined;
  const params = readListParams(s.query, s.resource);
  const list = await s.store.list(s.info.namespace, params);
  const body = include ? toTable(s.resource, list.items, { group: s.format.group ?? '', include, listMeta: list.metadata }) : list;
  sendObject(s.res, 200, body, s.format.codec);
}
