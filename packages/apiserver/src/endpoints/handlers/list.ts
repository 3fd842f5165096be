import type { HandlerScope } from './scope.js';
import { sendList, sendObject } from './respond.js';
import { readListParams } from './list-params.js';
import { includeObjectOf, toTable } from '../table.js';

export async function handleList(s: HandlerScope): Promise<void> {
  const include = s.format.as === 'Table' ? includeObjectOf(s.query) : undefined;
  const params = readListParams(s.query, s.resource);
  const list = await s.store.list(s.info.namespace, params);
  if (include) {
    const table = toTable(s.resource, list.items, { group: s.format.group ?? '', include, listMeta: list.metadata });
    sendObject(s.res, { code: 200, value: table, format: s.format.codec, warnings: s.warnings, gzip: s.gzip });
    return;
  }
  await sendList(s, list as unknown as { items: object[] } & Record<string, unknown>);
}
