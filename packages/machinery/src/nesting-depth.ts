/**
 * How deeply a request body may nest objects and arrays. Kubernetes' JSON and YAML decoders
 * stop at 10,000 levels; ours stop at 256, because the YAML composer and our schema check,
 * merges, apply and Protobuf code recurse on the JS stack, and a stack overflow there is a
 * 500 at best (V8 may even abort the process when one lands in its regexp compiler).
 */
export const MAX_NESTING_DEPTH = 256;

/**
 * Whether a JSON text nests objects and arrays deeper than `max`. One pass, no recursion;
 * brackets inside strings do not count. Meant for text JSON.parse has accepted.
 */
export function jsonNestingExceeds(text: string, max = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * How deeply a JSON value nests objects and arrays (`[]` is 1), counted no further than just
 * past `max`; `Infinity` for a value that contains itself (a YAML alias inside its own anchor).
 * Shared objects (aliases) are measured once, so the work is linear in the distinct objects.
 * No recursion.
 */
export function valueNestingDepth(value: unknown, max = MAX_NESTING_DEPTH): number {
  if (typeof value !== 'object' || value === null) return 0;
  /** Levels at and below each finished object. */
  const height = new Map<object, number>();
  const open = new Set<object>();
  const path: Array<{ node: object; children: object[]; next: number }> = [];
  const enter = (node: object): void => {
    open.add(node);
    const children = (Array.isArray(node) ? node : Object.values(node)).filter(
      (c): c is object => typeof c === 'object' && c !== null,
    );
    path.push({ node, children, next: 0 });
  };
  enter(value);
  let deepest = 1;
  while (path.length > 0) {
    if (path.length > max) return path.length;
    const top = path[path.length - 1] as (typeof path)[number];
    const child = top.children[top.next++];
    if (child === undefined) {
      path.pop();
      open.delete(top.node);
      let h = 1;
      for (const c of top.children) h = Math.max(h, 1 + (height.get(c) ?? 0));
      height.set(top.node, h);
      continue;
    }
    if (open.has(child)) return Infinity;
    const known = height.get(child);
    if (known !== undefined) deepest = Math.max(deepest, path.length + known);
    else enter(child);
    deepest = Math.max(deepest, path.length);
    if (deepest > max) return deepest;
  }
  return deepest;
}
