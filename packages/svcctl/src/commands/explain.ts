import { NAMINGS } from '@svc/api/names';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { CliError } from '../errors.js';

export interface ExplainOptions {
  recursive?: boolean;
  apiVersion?: string;
  output?: string;
}

type Schema = {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  required?: string[];
  enum?: unknown[];
  externalDocs?: { description?: string; url?: string };
  $ref?: string;
  [k: string]: unknown;
};

interface OpenApiDoc {
  paths?: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Gvk {
  group?: string;
  version?: string;
  kind?: string;
}

/** An extension in either naming's spelling (`x-svc-group-version-kind`, `x-kubernetes-group-version-kind`). */
function ext(s: Record<string, unknown>, name: string): unknown {
  for (const n of Object.values(NAMINGS)) {
    const v = s[`${n.schemaExtensionPrefix}${name}`];
    if (v !== undefined) return v;
  }
  return undefined;
}

/** sprig's `wrap` (goutils.Wrap): breaks at the last space within the width; long words stay whole. */
export function wrap(str: string, width: number): string {
  let out = '';
  let offset = 0;
  const len = str.length;
  while (len - offset > width) {
    if (str[offset] === ' ') {
      offset++;
      continue;
    }
    const end = width + offset + 1;
    const space = str.slice(offset, end).lastIndexOf(' ');
    if (space >= 0) {
      out += `${str.slice(offset, offset + space)}\n`;
      offset = offset + space + 1;
    } else {
      const after = str.indexOf(' ', width + offset);
      if (after >= 0) {
        out += `${str.slice(offset, after)}\n`;
        offset = after + 1;
      } else {
        out += str.slice(offset);
        offset = len;
      }
    }
  }
  return out + str.slice(offset);
}

/** sprig's `indent`: every line, empty ones too. */
function indent(s: string, n: number): string {
  const pad = ' '.repeat(n);
  return pad + s.replaceAll('\n', `\n${pad}`);
}

class Explainer {
  constructor(
    private readonly doc: OpenApiDoc,
    private readonly o: { recursive: boolean },
  ) {}

  private resolve(ref: string | undefined): Schema | undefined {
    if (!ref) return undefined;
    return this.doc.components?.schemas?.[ref.split('/').pop() ?? ''];
  }

  private mapValues(s: Schema): Schema | undefined {
    return s.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  }

  typeGuess(s: Schema): string {
    if (s.items) return `[]${this.typeGuess(s.items)}`;
    const values = this.mapValues(s);
    if (values) return `map[string]${this.typeGuess(values)}`;
    if (s.allOf && !s.properties && s.allOf.length === 1 && s.allOf[0]) return this.typeGuess(s.allOf[0]);
    if (s.$ref) {
      const ref = this.resolve(s.$ref);
      if (!ref || !ref.type || ref.type === 'object') {
        const name = s.$ref.split('/').pop() ?? '';
        return name.split('.').pop() || 'Object';
      }
      return ref.type || 'Object';
    }
    if (s.type === 'object') return 'Object';
    return s.type || 'Object';
  }

  private enumText(s: Schema, o: { long: boolean; limit: number; indentAmount: number }): string {
    if (!s.enum || s.enum.length === 0) return '';
    let out = o.long ? 'ENUM:' : `\n${' '.repeat(o.indentAmount)}enum: `;
    for (const [i, e] of s.enum.entries()) {
      if (o.limit > -1 && i >= o.limit) {
        out += ', ....';
        break;
      }
      if (i > 0 && !o.long) out += ', ';
      else if (o.long) out += '\n    ';
      out += e === '' ? '""' : String(e);
    }
    return out;
  }

  private description(s: Schema): string {
    const r = this.resolve(s.$ref) ?? s;
    let out = r.description ? `${r.description}\n` : '';
    for (const a of r.allOf ?? []) out += this.description(a);
    if (r.items) out += this.description(r.items);
    const values = this.mapValues(r);
    if (values) out += this.description(values);
    return out;
  }

  private externalDocs(s: Schema, at: number): string {
    const d = s.externalDocs;
    if (!d) return '';
    let out = `${indent('EXTERNAL DOCS:', at)}\n`;
    if (d.description) out += `${indent(wrap(d.description, 76 - (at - 0)), at + 2)}\n`;
    if (d.url) out += `${indent(`URL: ${d.url}`, at + 2)}\n`;
    return out;
  }

  private fieldDetail(parent: Schema, o: { name: string; level: number; short: boolean }): string {
    const f = parent.properties?.[o.name] ?? {};
    const amount = o.level * 2;
    let out = `${indent(o.name, amount)}\t<${this.typeGuess(f)}>`;
    if (parent.required?.includes(o.name)) out += ' -required-';
    out += this.enumText(f, { long: false, limit: 4, indentAmount: amount });
    out += '\n';
    if (!o.short) {
      out += `${indent(wrap(f.description || '<no description>', 78 - amount), amount + 2)}\n`;
      if (f.externalDocs) {
        out += `\n${indent('EXTERNAL DOCS:', amount + 2)}\n`;
        if (f.externalDocs.description) out += `${indent(wrap(f.externalDocs.description, 76 - amount), amount + 4)}\n`;
        if (f.externalDocs.url) out += `${indent(`URL: ${f.externalDocs.url}`, amount + 4)}\n`;
      }
      out += '\n';
    }
    return out;
  }

  fieldList(s: Schema, o: { level: number; history: Set<string> }): string {
    const ref = s.$ref ?? '';
    if (ref && o.history.has(ref)) return '';
    const history = new Set(o.history).add(ref);
    const r = this.resolve(ref) ?? s;
    let out = '';
    for (const k of Object.keys(r.properties ?? {}).sort()) {
      out += this.fieldDetail(r, { name: k, level: o.level, short: this.o.recursive });
      if (this.o.recursive) out += this.fieldList(r.properties?.[k] ?? {}, { level: o.level + 1, history });
    }
    for (const a of r.allOf ?? []) out += this.fieldList(a, { level: o.level, history });
    if (r.items) out += this.fieldList(r.items, { level: o.level, history });
    const values = this.mapValues(r);
    if (values) out += this.fieldList(values, { level: o.level, history });
    return out;
  }

  output(s: Schema, o: { path: string[]; history: Set<string> }): string {
    const ref = s.$ref ?? '';
    const history = new Set(o.history).add(ref);
    const r = this.resolve(ref) ?? s;
    if (o.path.length === 0) {
      let out = `DESCRIPTION:\n${indent(wrap(this.description(r) || '<empty>', 76), 4)}\n`;
      const docs = this.externalDocs(r, 0);
      if (docs) out += `\n${docs}`;
      const fields = this.fieldList(r, { level: 1, history: new Set() });
      if (fields) out += `FIELDS:\n${fields}`;
      return out;
    }
    if (ref && o.history.has(ref)) return '';
    const first = o.path[0] ?? '';
    const sub = r.properties?.[first];
    if (sub) {
      let out = '';
      if (o.path.length === 1) {
        out += `FIELD: ${first} <${this.typeGuess(sub)}>\n${this.enumText(sub, { long: true, limit: -1, indentAmount: 0 })}\n\n`;
      }
      return out + this.output(sub, { path: o.path.slice(1), history: new Set() });
    }
    if (r.items) return this.output(r.items, { path: o.path, history });
    const values = this.mapValues(r);
    if (values) return this.output(values, { path: o.path, history });
    for (const a of r.allOf ?? []) {
      const out = this.output(a, { path: o.path, history });
      if (out) return out;
    }
    return '';
  }

  /** The kind a resource path serves, from its operations' group-version-kind extension. */
  gvkOf(o: { group: string; version: string; resource: string }): Gvk | undefined {
    const prefix = o.group ? `/apis/${o.group}` : '/api';
    const candidates = [
      `${prefix}/${o.version}/${o.resource}`,
      `${prefix}/${o.version}/${o.resource}/{name}`,
      `${prefix}/${o.version}/namespaces/{namespace}/${o.resource}`,
      `${prefix}/${o.version}/namespaces/{namespace}/${o.resource}/{name}`,
    ];
    for (const p of candidates) {
      const item = this.doc.paths?.[p];
      if (!item) continue;
      for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
        const op = item[m];
        const gvk = op ? (ext(op, 'group-version-kind') as Gvk | undefined) : undefined;
        if (gvk) return gvk;
      }
    }
    return undefined;
  }

  schemaOf(gvk: Gvk): Schema | undefined {
    for (const s of Object.values(this.doc.components?.schemas ?? {})) {
      const list = ext(s, 'group-version-kind');
      if (
        Array.isArray(list) &&
        list.some((g: Gvk) => (g.group ?? '') === (gvk.group ?? '') && g.version === gvk.version && g.kind === gvk.kind)
      ) {
        return s;
      }
    }
    return undefined;
  }
}

/** `explain TYPE[.FIELD...]`: the server's OpenAPI v3 schema, printed with kubectl's plaintext template. */
export async function run(inv: Invocation<ExplainOptions>): Promise<void> {
  const { io, opts, args } = inv;
  if (args.length === 0)
    throw new CliError(
      `You must specify the type of resource to explain. Use "svcctl api-resources" for a complete list of supported resources.`,
    );
  if (args.length > 1) throw new CliError('We accept only this format: explain RESOURCE');
  if (opts.output && opts.output !== 'plaintext') throw new CliError(`unrecognized format: ${opts.output}`);
  const [typeArg = '', ...fieldPath] = (args[0] ?? '').split('.');
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    let resource = discovery.find(typeArg);
    if (resource && opts.apiVersion) {
      const [g, v] = opts.apiVersion.includes('/') ? opts.apiVersion.split('/', 2) : ['', opts.apiVersion];
      const r0 = resource;
      resource = discovery.resources.find((r) => r.resource === r0.resource && r.group === g && r.version === v);
      if (!resource) throw new CliError(`couldn't find resource for "${g}/${v}, Resource=${r0.resource}"`);
    }
    if (!resource) throw new CliError(`the server doesn't have a resource type "${typeArg}"`, 1, true);
    const gvPath = resource.group ? `apis/${resource.group}/${resource.version}` : `api/${resource.version}`;
    const doc = await session.call<OpenApiDoc>('GET', `/openapi/v3/${gvPath}`);
    const ex = new Explainer(doc, { recursive: opts.recursive === true });
    const gvk = ex.gvkOf(resource);
    if (!gvk)
      throw new CliError(
        `GVR (${resource.group}/${resource.version}, Resource=${resource.resource}) not found in OpenAPI schema`,
      );
    const schema = ex.schemaOf(gvk);
    if (!schema)
      throw new CliError(
        `GVK ${gvk.group ?? ''}/${gvk.version ?? ''}, Kind=${gvk.kind ?? ''} not found in OpenAPI schema`,
      );
    let header = '';
    if (gvk.group) header += `GROUP:      ${gvk.group}\n`;
    header += `KIND:       ${gvk.kind ?? ''}\nVERSION:    ${gvk.version ?? ''}\n\n`;
    const body = ex.output(schema, { path: fieldPath, history: new Set() });
    if (!body) {
      // kubectl has printed the header by the time it finds the field missing.
      io.out(header);
      throw new CliError(`field "${fieldPath[fieldPath.length - 1] ?? ''}" does not exist`);
    }
    io.out(`${header}${body}\n`);
  } finally {
    session.close();
  }
}
