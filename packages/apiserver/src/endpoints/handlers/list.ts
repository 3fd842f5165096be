import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { readParams } from './list-params.js';

export async function handleList(s: HandlerScope): Promise<void> {
  const params = readParams(s.query, 'list', s.resource);
  const list = await s.store.list(s.info.namespace, params);
  sendObject(s.res, 200, list, s.format.codec);
}
