import { viewed, type HandlerScope } from './scope.js';
import { answer } from './respond.js';
import { readGetParams } from './list-params.js';
import { includeObjectOf, toTable } from '../table.js';

export async function handleGet(s: HandlerScope): Promise<void> {
  const include = s.format.as === 'Table' ? includeObjectOf(s.query) : undefined;
  const obj = await s.store.get(s.info.namespace, s.info.name, readGetParams(s.query));
  const body = include ? toTable(s.resource, [obj], { group: s.format.group ?? '', include }) : viewed(s, obj);
  answer(s, 200, body);
}
