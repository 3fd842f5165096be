/**
 * JSON text of API objects, computed once per object. Objects served from the watch
 * cache are shared and never mutated, so one serialization serves every list and every
 * watcher that sends them; objects read once simply drop out with their last reference.
 */
const cache = new WeakMap<object, string>();

export function jsonOf(obj: object): string {
  let s = cache.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    cache.set(obj, s);
  }
  return s;
}

/** JSON of a list whose items are serialized through the cache. */
export function listJson(list: { items: object[] } & Record<string, unknown>): string {
  const { items, ...rest } = list;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"items":[${items.map(jsonOf).join(',')}]}`;
}
