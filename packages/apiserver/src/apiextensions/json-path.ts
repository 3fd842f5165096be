/**
 * The simple JSONPath of printer columns, selectable fields and scale paths (`.spec.replicas`,
 * `.status.conditions[0].type`, `.metadata.labels['app.example.com/name']`, `.items[*].name`,
 * `.status.conditions[?(@.type=="Ready")].status`): a chain of fields, indexes and simple
 * filters, no recursion or unions.
 */
export type PathStep = { field: string } | { index: number } | { all: true } | { filter: Filter };

/** `[?(@.a.b == "x")]`, `!=`, `<`, `<=`, `>`, `>=`, or `[?(@.a)]` (the field exists). */
interface Filter {
  path: string[];
  op?: '==' | '!=' | '<' | '<=' | '>' | '>=';
  value?: string | number | boolean;
}

const FILTER = /^\?\(\s*@((?:\.[\w-]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$/;

function parseFilter(inner: string): Filter | undefined {
  const m = FILTER.exec(inner);
  if (!m) return undefined;
  const path = (m[1] ?? '').split('.').slice(1);
  if (m[2] === undefined) return { path };
  const raw = (m[3] ?? '').trim();
  const quoted = /^'(.*)'$|^"(.*)"$/.exec(raw);
  const value = quoted
    ? (quoted[1] ?? quoted[2] ?? '')
    : raw === 'true' || raw === 'false'
      ? raw === 'true'
      : Number.isNaN(Number(raw))
        ? undefined
        : Number(raw);
  if (value === undefined) return undefined;
  return { path, op: m[2] as Filter['op'], value };
}

function matches(item: unknown, f: Filter): boolean {
  let v: unknown = item;
  for (const k of f.path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  if (f.op === undefined) return v !== undefined;
  const x = f.value;
  switch (f.op) {
    case '==':
      return v === x;
    case '!=':
      return v !== x;
    default: {
      if (typeof v !== typeof x || (typeof v !== 'number' && typeof v !== 'string')) return false;
      const a = v as number | string;
      const b = x as number | string;
      return f.op === '<' ? a < b : f.op === '<=' ? a <= b : f.op === '>' ? a > b : a >= b;
    }
  }
}

/** Parses a path; undefined when it is not a simple path. */
export function parseJsonPath(path: string): PathStep[] | undefined {
  const steps: PathStep[] = [];
  let i = 0;
  const text = path.trim();
  if (!text.startsWith('.')) return undefined;
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      let name = '';
      i++;
      while (i < text.length && text[i] !== '.' && text[i] !== '[') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        name += text[i];
        i++;
      }
      if (name === '') return undefined;
      steps.push({ field: name });
    } else if (c === '[') {
      const end = text.indexOf(']', i);
      if (end < 0) return undefined;
      const inner = text.slice(i + 1, end).trim();
      i = end + 1;
      const quoted = /^'(.*)'$|^"(.*)"$/.exec(inner);
      const filter = inner.startsWith('?') ? parseFilter(inner) : undefined;
      if (inner.startsWith('?')) {
        if (!filter) return undefined;
        steps.push({ filter });
      } else if (quoted) steps.push({ field: quoted[1] ?? quoted[2] ?? '' });
      else if (inner === '*') steps.push({ all: true });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else return undefined;
    } else {
      return undefined;
    }
  }
  return steps;
}

/** Every value the path reaches in `obj` (none when a step is missing). */
export function jsonPathValues(obj: unknown, steps: readonly PathStep[]): unknown[] {
  let current: unknown[] = [obj];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if ('field' in step) {
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && step.field in v) {
          next.push((v as Record<string, unknown>)[step.field]);
        }
      } else if (Array.isArray(v)) {
        if ('filter' in step) next.push(...v.filter((item) => matches(item, step.filter)));
        else if ('all' in step) next.push(...v);
        else {
          const at = step.index < 0 ? v.length + step.index : step.index;
          if (at >= 0 && at < v.length) next.push(v[at]);
        }
      }
    }
    current = next;
  }
  return current;
}

/** The dotted form of a simple field path (`spec.replicas`), as scale paths and field selectors name it. */
export function dottedPath(steps: readonly PathStep[]): string | undefined {
  const names: string[] = [];
  for (const s of steps) {
    if (!('field' in s)) return undefined;
    names.push(s.field);
  }
  return names.join('.');
}
