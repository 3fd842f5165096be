import { DescribeWriter, annotationsMultiline, asObj, labelsMultiline, str } from './writer.js';
import { describeEvents } from './events.js';
import type { DescribeContext } from './describers.js';

type Obj = Record<string, unknown>;

/** fatih/camelcase's Split: runs of lower, upper, digit and other characters; an upper run gives its last letter to a following lower run. */
function camelSplit(s: string): string[] {
  const cls = (c: string): number => (/[a-z]/.test(c) ? 1 : /[A-Z]/.test(c) ? 2 : /[0-9]/.test(c) ? 3 : 4);
  const runs: string[] = [];
  let last = 0;
  for (const ch of s) {
    const c = cls(ch);
    if (c === last && runs.length > 0) runs[runs.length - 1] += ch;
    else runs.push(ch);
    last = c;
  }
  for (let i = 0; i < runs.length - 1; i++) {
    const a = runs[i] ?? '';
    const b = runs[i + 1] ?? '';
    if (cls(a[0] ?? '') === 2 && cls(b[0] ?? '') === 1 && a.length > 0) {
      runs[i + 1] = a.slice(-1) + b;
      runs[i] = a.slice(0, -1);
    }
  }
  return runs.filter((r) => r !== '');
}

/** kubectl's smartLabelFor: `apiVersion` → `API Version`, `creationTimestamp` → `Creation Timestamp`. */
export function smartLabelFor(field: string): string {
  if (/[^A-Za-z-]/.test(field)) return field;
  const acronyms = ['API', 'URL', 'UID', 'OSB', 'GUID'];
  return camelSplit(field)
    .filter((p) => p !== '_')
    .map((p) => (acronyms.includes(p.toUpperCase()) ? p.toUpperCase() : p.charAt(0).toUpperCase() + p.slice(1)))
    .join(' ');
}

/** Go's `%v` of a JSON value. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Obj;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goValue(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

function unstructured(w: DescribeWriter, o: { level: number; content: Obj; prefix: string; skip: string[] }): void {
  for (const field of Object.keys(o.content).sort()) {
    const v = o.content[field];
    const expr = `${o.prefix}.${field}`;
    if (o.skip.includes(expr)) continue;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      w.write(o.level, `${smartLabelFor(field)}:\n`);
      unstructured(w, { level: o.level + 1, content: v as Obj, prefix: expr, skip: o.skip });
    } else if (Array.isArray(v)) {
      w.write(o.level, `${smartLabelFor(field)}:\n`);
      for (const child of v) {
        if (child && typeof child === 'object' && !Array.isArray(child)) {
          unstructured(w, { level: o.level + 1, content: child as Obj, prefix: expr, skip: o.skip });
        } else w.write(o.level + 1, `${goValue(child)}\n`);
      }
    } else w.write(o.level, `${smartLabelFor(field)}:\t${goValue(v)}\n`);
  }
}

/** kubectl's generic describer, for kinds without their own: the object's fields as labelled lines. */
export function describeGeneric(obj: Obj, c: DescribeContext): string {
  const w = new DescribeWriter();
  const meta = asObj(obj.metadata);
  w.write(0, `Name:\t${str(meta.name)}\n`);
  w.write(0, `Namespace:\t${str(meta.namespace)}\n`);
  labelsMultiline(w, { title: 'Labels', labels: meta.labels });
  annotationsMultiline(w, { title: 'Annotations', annotations: meta.annotations, skip: c.skipAnnotations });
  unstructured(w, {
    level: 0,
    content: obj,
    prefix: '',
    skip: [
      '.metadata.managedFields',
      '.metadata.name',
      '.metadata.namespace',
      '.metadata.labels',
      '.metadata.annotations',
    ],
  });
  if (c.events) describeEvents(w, c.events);
  return w.toString();
}
