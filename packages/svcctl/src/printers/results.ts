import type { SvcctlIo } from '../io.js';
import { kindPrefix, type ServedResource } from '../discovery.js';
import { stripForOutput, type ApiObjectJson } from '../objects.js';
import { asList } from './objects.js';
import { toJson, toYaml } from './json-yaml.js';
import { JsonPathTemplate } from './jsonpath.js';
import type { OutputFormat } from './output-format.js';
import { customColumnsText, parseCustomColumns } from './custom-columns.js';
import { tabwrite } from './tabwriter.js';

/**
 * What write commands print: `<kind>/<name> <verb>[ (dry run)]` per object, or with `-o`
 * the objects the server answered (`name`: `<kind>/<name>`). `asList`: several objects are
 * printed as one `List` at the end (apply), else one after another (`---` between YAML documents).
 */
export class ResultPrinter {
  private readonly held: ApiObjectJson[] = [];
  private count = 0;

  constructor(
    private readonly io: SvcctlIo,
    private readonly o: { format?: OutputFormat; asList?: boolean; suffix?: string },
  ) {}

  print(obj: ApiObjectJson, r: { resource: ServedResource; verb: string; name?: string }): void {
    const f = this.o.format;
    const name = r.name ?? obj.metadata?.name ?? '';
    const ref = `${kindPrefix(r.resource)}/${name}`;
    if (!f || f.kind === 'table') {
      this.io.out(`${ref} ${r.verb}${this.o.suffix ?? ''}\n`);
      return;
    }
    if (f.kind === 'name') {
      this.io.out(`${ref}\n`);
      return;
    }
    const shown = stripForOutput(obj);
    if (this.o.asList) {
      this.held.push(shown);
      return;
    }
    this.io.out(this.render(shown));
  }

  private render(obj: unknown): string {
    const f = this.o.format;
    this.count++;
    switch (f?.kind) {
      case 'json':
        return toJson(obj);
      case 'yaml':
        return `${this.count > 1 ? '---\n' : ''}${toYaml(obj)}`;
      case 'jsonpath':
        return new JsonPathTemplate(f.template).execute(obj);
      case 'custom-columns':
        return tabwrite(customColumnsText([obj], { columns: parseCustomColumns(f.spec) }));
      default:
        return '';
    }
  }

  /** Prints what `asList` held back: one object as itself, several as a List. */
  finish(): void {
    if (this.held.length === 0) return;
    this.io.out(this.render(this.held.length === 1 ? this.held[0] : asList(this.held)));
    this.held.length = 0;
  }
}
