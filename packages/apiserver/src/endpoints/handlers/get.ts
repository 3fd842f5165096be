import type { HandlerScope } from './scope.js';
import { sendObject } from './respond.js';
import { readGetParams } from './list-params.js';

export async function handleGet(s: HandlerScope): Promise<void> {
  const obj = await s.store.get(s.info.namespace, s.info.name, readGetParams(s.query));
  sendObject(s.res, 200, obj, s.format.codec);
}
