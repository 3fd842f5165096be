import { CliError } from '../errors.js';
import { GoTemplatePrinter } from './go-template/printer.js';

export type OutputFormat =
  | { kind: 'table'; wide: boolean }
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'name' }
  | { kind: 'jsonpath'; template: string }
  | { kind: 'custom-columns'; spec: string }
  | { kind: 'go-template'; printer: GoTemplatePrinter };

const ALLOWED = [
  'custom-columns',
  'custom-columns-file',
  'go-template',
  'go-template-file',
  'json',
  'jsonpath',
  'jsonpath-as-json',
  'jsonpath-file',
  'name',
  'template',
  'templatefile',
  'wide',
  'yaml',
];

/** `-o` as kubectl reads it; `allowed` narrows the formats a command prints. */
export function parseOutputFormat(
  o: string | undefined,
  opts: {
    allowed?: string[];
    readFile?: (path: string) => string;
    /** `--template`: the template (or its file) when `-o` names a template format without one. */
    template?: string;
    /** `--allow-missing-template-keys` (default true): a missing key prints `<no value>` rather than failing. */
    allowMissingKeys?: boolean;
  } = {},
): OutputFormat {
  if (o === undefined || o === '') return { kind: 'table', wide: false };
  const i = o.indexOf('=');
  const name = i < 0 ? o : o.slice(0, i);
  const arg = i < 0 ? (opts.template ?? '') : o.slice(i + 1);
  const allowed = opts.allowed ?? ALLOWED;
  const bad = (): CliError =>
    new CliError(
      `unable to match a printer suitable for the output format "${o}", allowed formats are: ${allowed.join(',')}`,
    );
  if (!allowed.includes(name)) throw bad();
  switch (name) {
    case 'wide':
      return { kind: 'table', wide: true };
    case 'json':
      return { kind: 'json' };
    case 'yaml':
      return { kind: 'yaml' };
    case 'name':
      return { kind: 'name' };
    case 'jsonpath':
      if (arg === '') throw new CliError('template format specified but no template given');
      return { kind: 'jsonpath', template: arg };
    case 'go-template':
    case 'template':
    case 'go-template-file':
    case 'templatefile': {
      if (arg === '') throw new CliError('template format specified but no template given');
      const file = name.endsWith('file');
      let text = arg;
      if (file) {
        try {
          text = opts.readFile?.(arg) ?? '';
        } catch (e) {
          throw new CliError(`error reading --template ${arg}, ${(e as Error).message}`);
        }
      }
      return {
        kind: 'go-template',
        printer: new GoTemplatePrinter(text, { allowMissingKeys: opts.allowMissingKeys !== false }),
      };
    }
    case 'jsonpath-file':
      return { kind: 'jsonpath', template: opts.readFile?.(arg) ?? '' };
    case 'custom-columns':
      return { kind: 'custom-columns', spec: arg };
    case 'custom-columns-file': {
      const [header = '', paths = ''] = (opts.readFile?.(arg) ?? '').split('\n');
      const headers = header.trim().split(/\s+/);
      const exprs = paths.trim().split(/\s+/);
      return { kind: 'custom-columns', spec: headers.map((h, k) => `${h}:${exprs[k] ?? ''}`).join(',') };
    }
  }
  throw bad();
}

/** The formats `get` takes, in kubectl's order for its error message. */
export const GET_FORMATS = [
  'custom-columns',
  'custom-columns-file',
  'go-template',
  'go-template-file',
  'json',
  'jsonpath',
  'jsonpath-file',
  'name',
  'template',
  'templatefile',
  'wide',
  'yaml',
];

/** The formats of commands that print the objects they changed (`create`, `apply`, `label`...). */
export const OBJECT_FORMATS = [
  'go-template',
  'go-template-file',
  'json',
  'jsonpath',
  'jsonpath-file',
  'name',
  'template',
  'templatefile',
  'yaml',
  'custom-columns',
  'custom-columns-file',
];
