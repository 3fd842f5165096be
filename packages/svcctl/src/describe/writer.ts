/**
 * kubectl's PrefixWriter over its describe tabwriter (min width 0, padding 2): text is
 * collected with tabs between cells and aligned once at the end.
 */
import { tabwrite } from '../printers/tabwriter.js';

export class DescribeWriter {
  private text = '';

  /** Writes `s` indented by `level` steps of two spaces. */
  write(level: number, s: string): void {
    this.text += '  '.repeat(level) + s;
  }

  /** Go's Fprintln of one value. */
  line(s: string): void {
    this.text += `${s}\n`;
  }

  toString(): string {
    return tabwrite(this.text, { minWidth: 0, padding: 2 });
  }

  /** The text with its tabs left in (kubectl's `rollout history --revision` writes it so). */
  raw(): string {
    return this.text;
  }
}

type Obj = Record<string, unknown>;

export function asObj(v: unknown): Obj {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
}

export function asList(v: unknown): Obj[] {
  return Array.isArray(v) ? (v as Obj[]) : [];
}

export function str(v: unknown): string {
  return v === undefined || v === null ? '' : String(v);
}

/** Go's RFC1123Z in local time: `Mon, 02 Jan 2006 15:04:05 -0700`. */
export function rfc1123z(iso: unknown): string {
  const t = new Date(str(iso));
  if (Number.isNaN(t.getTime())) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number): string => String(n).padStart(2, '0');
  const off = -t.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return `${days[t.getDay()] ?? ''}, ${p(t.getDate())} ${months[t.getMonth()] ?? ''} ${t.getFullYear()} ${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())} ${sign}${p(Math.floor(abs / 60))}${p(abs % 60)}`;
}

/** kubectl's printLabelsMultilineWithIndent. */
export function labelsMultiline(
  w: DescribeWriter,
  o: { title: string; labels: unknown; initial?: string; inner?: string; skip?: string[] },
): void {
  const initial = o.initial ?? '';
  const inner = o.inner ?? '\t';
  w.write(0, `${initial}${o.title}:${inner}`);
  const labels = asObj(o.labels);
  const keys = Object.keys(labels)
    .filter((k) => !(o.skip ?? []).includes(k))
    .sort();
  if (keys.length === 0) {
    w.line('<none>');
    return;
  }
  keys.forEach((k, i) => {
    if (i !== 0) w.write(0, `${initial}${inner}`);
    w.write(0, `${k}=${str(labels[k])}\n`);
  });
}

const MAX_ANNOTATION = 140;

/** kubectl's printAnnotationsMultiline (long or multi-line values on their own lines, the last-applied annotation skipped). */
export function annotationsMultiline(
  w: DescribeWriter,
  o: { title: string; annotations: unknown; skip: string[] },
): void {
  w.write(0, `${o.title}:\t`);
  const a = asObj(o.annotations);
  const keys = Object.keys(a)
    .filter((k) => !o.skip.includes(k))
    .sort();
  if (keys.length === 0) {
    w.line('<none>');
    return;
  }
  keys.forEach((k, i) => {
    if (i !== 0) w.write(0, '\t');
    const value = str(a[k]).replace(/\n$/, '');
    if (value.length + k.length + 2 > MAX_ANNOTATION || value.includes('\n')) {
      w.write(0, `${k}:\n`);
      for (const s of value.split('\n'))
        w.write(0, `\t  ${s.length > MAX_ANNOTATION - 2 ? `${s.slice(0, MAX_ANNOTATION - 2)}...` : s}\n`);
    } else w.write(0, `${k}: ${value}\n`);
  });
}

/** kubectl's printTolerationsMultilineWithIndent. */
export function tolerationsMultiline(
  w: DescribeWriter,
  o: { title: string; tolerations: unknown; initial?: string },
): void {
  const initial = o.initial ?? '';
  w.write(0, `${initial}${o.title}:\t`);
  const list = [...asList(o.tolerations)].sort((a, b) =>
    str(a.key) < str(b.key) ? -1 : str(a.key) > str(b.key) ? 1 : 0,
  );
  if (list.length === 0) {
    w.line('<none>');
    return;
  }
  list.forEach((t, i) => {
    if (i !== 0) w.write(0, `${initial}\t`);
    let s = str(t.key);
    if (str(t.value)) s += `=${str(t.value)}`;
    if (str(t.effect)) s += `:${str(t.effect)}`;
    if (t.operator === 'Exists' && !str(t.value)) s += str(t.key) || str(t.effect) ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) s += ` for ${str(t.tolerationSeconds)}s`;
    w.write(0, `${s}\n`);
  });
}

/** kubectl's printTaintsMultilineWithIndent (taints sorted by effect, then key). */
export function taintsMultiline(w: DescribeWriter, o: { title: string; taints: unknown }): void {
  w.write(0, `${o.title}:\t`);
  const key = (t: Obj): string => `${str(t.effect)},${str(t.key)}`;
  const list = [...asList(o.taints)].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if (list.length === 0) {
    w.line('<none>');
    return;
  }
  list.forEach((t, i) => {
    if (i !== 0) w.write(0, '\t');
    w.write(0, `${str(t.key)}${str(t.value) ? `=${str(t.value)}` : ''}:${str(t.effect)}\n`);
  });
}

/** `a=b,c=d` for a label map (sorted), `<none>` when empty (labels.FormatLabels). */
export function formatLabelMap(m: unknown): string {
  const o = asObj(m);
  const keys = Object.keys(o).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${str(o[k])}`).join(',');
}

/** A label selector as labels.Selector.String() prints it (requirements sorted by key): `a=b,c in (x,y)`; `` for an empty one. */
export function formatLabelSelector(sel: unknown): string {
  const s = asObj(sel);
  const reqs: Array<{ key: string; text: string }> = [];
  for (const k of Object.keys(asObj(s.matchLabels)))
    reqs.push({ key: k, text: `${k}=${str(asObj(s.matchLabels)[k])}` });
  for (const r of asList(s.matchExpressions)) {
    const key = str(r.key);
    const values = (Array.isArray(r.values) ? (r.values as string[]) : []).slice().sort();
    const text =
      r.operator === 'In'
        ? `${key} in (${values.join(',')})`
        : r.operator === 'NotIn'
          ? `${key} notin (${values.join(',')})`
          : r.operator === 'Exists'
            ? key
            : `!${key}`;
    reqs.push({ key, text });
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}
