/** kubectl's printing of server-side Tables (HumanReadablePrinter over `meta/v1` Table). */

export interface TableColumnDefinition {
  name: string;
  type: string;
  format?: string;
  priority?: number;
}

export interface TableRow {
  cells: unknown[];
  object?: { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } };
}

export interface Table {
  kind: 'Table';
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
  metadata?: { resourceVersion?: string; continue?: string };
}

export interface TablePrintOptions {
  wide?: boolean;
  noHeaders?: boolean;
  /** Prepend NAMESPACE (`-A`). */
  withNamespace?: boolean;
  /** Prefix names with `<kind>/` (several types, `--show-kind`). */
  kindPrefix?: string;
  showLabels?: boolean;
  /** `-L` keys: one column each. */
  labelColumns?: string[];
}

function showColumn(c: TableColumnDefinition, o: TablePrintOptions): boolean {
  return o.wide === true || (c.priority ?? 0) === 0;
}

/** Go's fmt of a JSON cell value (`%v`). */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') {
    const br = v.search(/[\f\n\r]/);
    return br >= 0 ? `${v.slice(0, br)}...` : v;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(cellText).join(' ')}]`;
  if (typeof v === 'object') {
    const entries = Object.keys(v as object)
      .sort()
      .map((k) => `${k}:${cellText((v as Record<string, unknown>)[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(v);
}

/** `a=b,c=d` (sorted), or `<none>`. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels?.[k] ?? ''}`).join(',');
}

/** The header of a `-L` column: the key's last path segment, upper case. */
function labelHeader(key: string): string {
  const i = key.lastIndexOf('/');
  return (i >= 0 ? key.slice(i + 1) : key).toUpperCase();
}

/** The header line of a table (tab-separated), or undefined with `--no-headers`. */
export function tableHeader(t: Table, o: TablePrintOptions): string | undefined {
  if (o.noHeaders) return undefined;
  const cols: string[] = [];
  if (o.withNamespace) cols.push('NAMESPACE');
  for (const c of t.columnDefinitions) if (showColumn(c, o)) cols.push(c.name.toUpperCase());
  for (const k of o.labelColumns ?? []) cols.push(labelHeader(k));
  if (o.showLabels) cols.push('LABELS');
  return cols.join('\t');
}

/** The rows of a table, tab-separated, as kubectl decorates them. */
export function tableRows(t: Table, o: TablePrintOptions): string[] {
  return t.rows.map((row) => {
    const meta = row.object?.metadata ?? {};
    const cells: string[] = [];
    if (o.withNamespace) cells.push(meta.namespace ?? '');
    t.columnDefinitions.forEach((c, i) => {
      if (!showColumn(c, o)) return;
      let text = cellText(row.cells[i]);
      if (o.kindPrefix && c.format === 'name') text = `${o.kindPrefix}/${text}`;
      cells.push(text);
    });
    for (const k of o.labelColumns ?? []) cells.push(meta.labels?.[k] ?? '');
    if (o.showLabels) cells.push(formatLabels(meta.labels));
    return cells.join('\t');
  });
}

/** Header (unless there are no rows) and rows, newline-terminated, before the tabwriter. */
export function tableText(t: Table, o: TablePrintOptions): string {
  if (t.rows.length === 0) return '';
  const header = tableHeader(t, o);
  const lines = header === undefined ? [] : [header];
  lines.push(...tableRows(t, o));
  return lines.map((l) => `${l}\n`).join('');
}
