import { badRequest } from '@svc/api';
import type { HandlerScope } from './scope.js';
import { answer } from './respond.js';
import { admitObjectShape, checkNamespace, readJsonValue } from './decode.js';

export async function handleCreate(s: HandlerScope): Promise<void> {
  if (s.info.name) throw badRequest('create requests must be made to the collection path, not to a named object');
  if (s.resource.namespaced && !s.info.namespace)
    throw badRequest('the namespace of the object must be set in the URL for a namespaced resource');
  const { value, duplicates } = await readJsonValue(s);
  const obj = admitObjectShape(s, value, duplicates);
  checkNamespace(s, obj);
  const created = await s.store.create(s.info.namespace, obj, { ctx: s.ctx });
  answer(s, 201, created);
}
