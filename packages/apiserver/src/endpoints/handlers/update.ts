import { viewed, type HandlerScope } from './scope.js';
import { answer } from './respond.js';
import { admitObjectShape, checkName, checkNamespace, readJsonValue } from './decode.js';

/** PUT: replace the object (or its status, or its scale), creating it when the type allows. */
export async function handleUpdate(s: HandlerScope): Promise<void> {
  const { value, duplicates } = await readJsonValue(s);
  const obj = admitObjectShape(s, value, duplicates);
  checkNamespace(s, obj);
  checkName(s, obj);
  obj.metadata.name = s.info.name;
  const { object, created } = await s.store.update(s.info.namespace, s.info.name, {
    updater: (current) => (s.view ? s.view.write(obj, current) : structuredClone(obj)),
    ctx: s.ctx,
    subresource: s.info.subresource,
    createIfMissing: s.info.subresource === '' ? (ctx) => s.store.create(s.info.namespace, obj, { ctx }) : undefined,
  });
  answer(s, created ? 201 : 200, viewed(s, object));
}
