/**
 * Field paths as Kubernetes' `field.Path` prints them: `child` joins with a dot, `key` and
 * `index` append a subscript (`properties[spec]`, `items[0]`). The empty string is the nil path.
 */
export function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}

export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** How Kubernetes prints a nil path in an error: `<nil>`. */
export function shown(path: string): string {
  return path === '' ? '<nil>' : path;
}
