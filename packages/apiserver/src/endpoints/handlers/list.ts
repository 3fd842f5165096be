import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { readListParams } from './list-params.js';

export async function handleList(s: HandlerScope): Promise<void> {
  const params = readListParams(s.query, s.resource);
  const list = await s.store.list(s.info.namespace, params);
  sendObject(s.res, 200, list, s.format.codec);
}
