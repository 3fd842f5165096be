import { badRequest } from '@svc/api';
import type { HandlerScope } from './scope.js';
import { objectSchemaOf, sendObject } from './respond.js';
import { admitObjectShape, checkNamespace, readJsonValue } from './decode.js';

export async function handleCreate(s: HandlerScope): Promise<void> {
  if (s.info.name) throw badRequest('create requests must be made to the collection path, not to a named object');
  if (s.resource.namespaced && !s.info.namespace)
    throw badRequest('the namespace of the object must be set in the URL for a namespaced resource');
  const { value, duplicates } = await readJsonValue(s);
  const obj = admitObjectShape(s, value, duplicates);
  checkNamespace(s, obj);
  const created = await s.store.create(s.info.namespace, obj, s.ctx);
  sendObject(s.res, 201, created, s.format, s.warnings, false, objectSchemaOf(s));
}
