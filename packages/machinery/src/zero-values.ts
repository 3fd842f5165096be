/**
 * `v` with every false, 0, "", null, {} and [] field left out (recursively; list items stay):
 * the JSON stand-in for Kubernetes comparing typed Go values, where such a field and an absent
 * one decode alike. The deployment, daemonset and statefulset controllers compare and hash
 * templates through it; the StatefulSet strategy compares specs through it.
 */
export function withoutZeroValues(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutZeroValues);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const p = withoutZeroValues(x);
    const empty =
      p === false ||
      p === 0 ||
      p === '' ||
      p === null ||
      p === undefined ||
      (Array.isArray(p) && p.length === 0) ||
      (typeof p === 'object' && p !== null && !Array.isArray(p) && Object.keys(p).length === 0);
    if (!empty) out[k] = p;
  }
  return out;
}
