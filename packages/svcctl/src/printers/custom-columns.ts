import { CliError } from '../errors.js';
import { JsonPathTemplate, relaxedJsonPath } from './jsonpath.js';

export interface CustomColumn {
  header: string;
  path: JsonPathTemplate;
}

/** `NAME:.metadata.name,RV:.metadata.resourceVersion` → columns (kubectl's custom-columns spec). */
export function parseCustomColumns(spec: string): CustomColumn[] {
  if (spec.trim() === '') throw new CliError('custom-columns format specified but no custom columns given');
  return spec.split(',').map((part) => {
    const i = part.indexOf(':');
    if (i < 0) {
      throw new CliError(`unexpected custom-columns spec: ${part}, expected <header>:<json-path-expr>`);
    }
    return { header: part.slice(0, i), path: new JsonPathTemplate(relaxedJsonPath(part.slice(i + 1))) };
  });
}

/** Go's `%v` of a value (custom-columns cells). */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goValue(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

/** Header (unless `noHeaders`) and one tab-separated row per object, before the tabwriter. */
export function customColumnsText(objects: unknown[], o: { columns: CustomColumn[]; noHeaders?: boolean }): string {
  const lines: string[] = [];
  if (!o.noHeaders) lines.push(o.columns.map((c) => c.header).join('\t'));
  for (const obj of objects) {
    lines.push(
      o.columns
        .map((c) => {
          const vals = c.path.values(obj);
          return vals.length === 0 ? '<none>' : vals.map(goValue).join(',');
        })
        .join('\t'),
    );
  }
  return lines.map((l) => `${l}\n`).join('');
}
