/**
 * `next` with every part equal to the same part of `prev` replaced by `prev`'s: `prev`
 * itself when the two are equal throughout. Objects are compared key by key, arrays index by
 * index, scalars by value. `next` must be a freshly decoded value nobody else holds yet (it
 * is changed in place); `prev` is only read.
 *
 * The watch cache decodes each version of an object from the store; consecutive versions of
 * a pod differ in a few fields (its status, resourceVersion, a managedFields time), so the
 * versions its 75 s window holds then share everything else instead of each costing a whole
 * object. Kubernetes' watch cache keeps whole versions; this is only how we hold them.
 */
export function shareUnchanged<T>(prev: unknown, next: T): T {
  return share(prev, next) as T;
}

function share(prev: unknown, next: unknown): unknown {
  if (prev === next) return prev;
  if (typeof next !== 'object' || next === null || typeof prev !== 'object' || prev === null) return next;
  // A frozen part (interned, `SubtreeInterner`) is small and cannot be changed: compared whole.
  if (Object.isFrozen(next))
    return Object.isFrozen(prev) && JSON.stringify(prev) === JSON.stringify(next) ? prev : next;
  if (Array.isArray(next)) {
    if (!Array.isArray(prev)) return next;
    let same = prev.length === next.length;
    for (let i = 0; i < next.length; i++) {
      const v = share(prev[i], next[i]);
      if (v !== prev[i]) same = false;
      next[i] = v;
    }
    return same ? prev : next;
  }
  if (Array.isArray(prev)) return next;
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  let same = true;
  let keys = 0;
  for (const k of Object.keys(n)) {
    keys++;
    // A decoded "__proto__" is an own property; assigning to it would set the prototype.
    if (k === '__proto__') {
      same = false;
      continue;
    }
    const pv = p[k];
    const v = share(pv, n[k]);
    if (v !== pv || !Object.hasOwn(p, k)) same = false;
    if (v !== n[k]) n[k] = v;
  }
  return same && keys === Object.keys(p).length ? prev : next;
}
