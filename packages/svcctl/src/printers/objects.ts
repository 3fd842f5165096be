import { tabwrite } from './tabwriter.js';
import { customColumnsText, parseCustomColumns } from './custom-columns.js';
import { JsonPathTemplate } from './jsonpath.js';
import { toJson, toYaml } from './json-yaml.js';
import type { OutputFormat } from './output-format.js';

/** kubectl's `List` around several objects (`-o json|yaml` of a list or of several kinds). */
export function asList(items: unknown[]): Record<string, unknown> {
  return { apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } };
}

/**
 * Prints whole objects in a non-table format: one object as itself, several (or a list) as a
 * `List`; `name` prints `<kind>/<name>` lines, custom columns one row per object.
 */
export function printObjects(
  objects: unknown[],
  o: { format: OutputFormat; single: boolean; names?: string[]; noHeaders?: boolean },
): string {
  const f = o.format;
  const whole = o.single && objects.length === 1 ? objects[0] : asList(objects);
  switch (f.kind) {
    case 'json':
      return toJson(whole);
    case 'yaml':
      return toYaml(whole);
    case 'jsonpath':
      return new JsonPathTemplate(f.template).execute(whole);
    case 'go-template':
      return f.printer.print(whole);
    case 'name':
      return (o.names ?? []).map((n) => `${n}\n`).join('');
    case 'custom-columns':
      return tabwrite(customColumnsText(objects, { columns: parseCustomColumns(f.spec), noHeaders: o.noHeaders }));
    case 'table':
      return '';
  }
}
