/**
 * kubectl's GoTemplatePrinter: `-o go-template=`, `go-template-file=`, `template=`,
 * `templatefile=`. The object goes to the template as encoding/json would decode it (maps,
 * float64 numbers); a parse error fails before any request, an execution error prints
 * kubectl's debugging text on standard output and fails with `error executing template`.
 */
import { CliError } from '../../errors.js';
import { formatValue, type Value } from './fmt.js';
import { goQuote } from './lex.js';
import { executeTemplate, TemplateExecError } from './exec.js';
import { FUNC_NAMES } from './funcs.js';
import { parseTemplate, TemplateParseError, type Tree } from './parse.js';

/** Go's json.Marshal of decoded JSON: compact, map keys sorted, `<`, `>`, `&` escaped. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string')
    return JSON.stringify(v).replace(
      /[<>&\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${goJson(k)}:${goJson(o[k])}`)
    .join(',')}}`;
}

/** The object as kubectl hands it to the template: JSON with integers as int64 (bigint) and other numbers float64. */
function toTemplateData(v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toTemplateData);
  if (typeof v === 'object') {
    const out: { [k: string]: Value } = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = toTemplateData(x);
    return out;
  }
  return null;
}

export class GoTemplatePrinter {
  private readonly tree: Tree;

  constructor(
    private readonly raw: string,
    private readonly o: { allowMissingKeys: boolean },
  ) {
    try {
      this.tree = parseTemplate({ name: 'output', text: raw, funcs: FUNC_NAMES });
    } catch (e) {
      if (e instanceof TemplateParseError) throw new CliError(`error parsing template ${raw}, ${e.message}`);
      throw e;
    }
  }

  /** The template's output for `obj`; on failure a CliError whose `stdout` is what was printed and kubectl's debugging text. */
  print(obj: unknown): string {
    const data = toTemplateData(obj ?? {});
    let out = '';
    try {
      executeTemplate(this.tree, {
        data,
        write: (s) => {
          out += s;
        },
        missingKey: this.o.allowMissingKeys ? 'default' : 'error',
      });
      return out;
    } catch (e) {
      if (!(e instanceof TemplateExecError)) throw e;
      out +=
        `Error executing template: ${e.message}. Printing more information for debugging the template:\n` +
        `\ttemplate was:\n\t\t${this.raw}\n` +
        `\traw data was:\n\t\t${goJson(obj)}\n` +
        `\tobject given to template engine was:\n\t\t${formatValue(data)}\n\n`;
      const err = new CliError(`error executing template ${goQuote(this.raw)}: ${e.message}`);
      err.stdout = out;
      throw err;
    }
  }
}
