import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { readParams } from './list-params.js';

export async function handleGet(s: HandlerScope): Promise<void> {
  readParams(s.query, 'get');
  const obj = await s.store.get(s.info.namespace, s.info.name);
  sendObject(s.res, 200, s.info.subresource === 'status' ? obj : obj, s.format.codec);
}
