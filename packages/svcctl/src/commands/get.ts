import { readFileSync } from 'node:fs';
import { NAMINGS } from '@svc/api/names';
import { CliError, describeError, statusOf } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { kindPrefix, resourcePath, type Discovery, type ServedResource } from '../discovery.js';
import { multipleTypes, parseTargets, type Target } from '../get-targets.js';
import { readManifests } from '../manifests.js';
import { resolveObjects } from '../resolve-objects.js';
import { GET_FORMATS, parseOutputFormat, type OutputFormat } from '../printers/output-format.js';
import { tableHeader, tableRows, tableText, type Table, type TablePrintOptions } from '../printers/table.js';
import { tabwrite } from '../printers/tabwriter.js';
import { printObjects } from '../printers/objects.js';
import { toJson, toYaml } from '../printers/json-yaml.js';
import { JsonPathTemplate, relaxedJsonPath } from '../printers/jsonpath.js';
import { objectsOfList, stripForOutput, type ApiObjectJson } from '../objects.js';

export interface GetOptions {
  output?: string;
  selector?: string;
  fieldSelector?: string;
  filename?: string[];
  recursive?: boolean;
  allNamespaces?: boolean;
  watch?: boolean;
  watchOnly?: boolean;
  outputWatchEvents?: boolean;
  chunkSize?: string;
  showLabels?: boolean;
  showKind?: boolean;
  labelColumns?: string[];
  headers?: boolean;
  ignoreNotFound?: boolean;
  sortBy?: string;
  subresource?: string;
  raw?: string;
  template?: string;
  allowMissingTemplateKeys?: boolean;
}

interface Request {
  target: Target;
  /** Per-name namespaces (from -f), else the command's. */
  namespaces?: Array<string | undefined>;
}

/** The Accept of server-side printing, in the server's spelling of the meta group. */
export function tableAccept(discovery: Discovery): string {
  return `application/json;as=Table;v=v1;g=meta.${NAMINGS[discovery.naming].groupSuffix},application/json`;
}

function notFoundMessage(o: { allNamespaces: boolean; namespace?: string; namespaced: boolean }): string {
  if (o.allNamespaces || !o.namespaced || !o.namespace) return 'No resources found\n';
  return `No resources found in ${o.namespace} namespace.\n`;
}

/** A Table made on the client from plain objects (a server that does not print): NAME and AGE. */
function tableOfObjects(objects: ApiObjectJson[]): Table {
  const now = Date.now();
  return {
    kind: 'Table',
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name' },
      { name: 'Age', type: 'string' },
    ],
    rows: objects.map((o) => ({
      cells: [o.metadata?.name ?? '', humanAge(now - Date.parse(o.metadata?.creationTimestamp ?? ''))],
      object: { metadata: o.metadata },
    })),
  };
}

/** kubectl's HumanDuration (as the server prints ages). */
export function humanAge(ms: number): string {
  if (!Number.isFinite(ms)) return '<unknown>';
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  if (h < 24 * 365 * 8) {
    const dy = Math.floor(h / 24) % 365;
    return dy === 0 ? `${Math.floor(h / 24 / 365)}y` : `${Math.floor(h / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(h / 24 / 365)}y`;
}

class Getter {
  readonly errors: unknown[] = [];
  constructor(
    private readonly session: Session,
    private readonly discovery: Discovery,
    private readonly o: GetOptions & { namespace?: string },
  ) {}

  private query(extra: Record<string, string | number | undefined> = {}): Record<string, string | number | undefined> {
    return { labelSelector: this.o.selector, fieldSelector: this.o.fieldSelector, ...extra };
  }

  private chunk(): number | undefined {
    const n = Number(this.o.chunkSize ?? '500');
    return Number.isFinite(n) && n > 0 ? n : undefined;
  }

  /** GETs one named object (`accept` a Table or JSON); NotFound goes to the errors unless ignored. */
  private async one<T>(
    r: ServedResource,
    o: { name: string; namespace?: string; accept: string },
  ): Promise<T | undefined> {
    try {
      return await this.session.call<T>(
        'GET',
        resourcePath(r, { namespace: o.namespace, name: o.name, subresource: this.o.subresource }),
        { accept: o.accept, query: this.o.sortBy ? { includeObject: 'Object' } : undefined },
      );
    } catch (e) {
      if (this.o.ignoreNotFound && statusOf(e)?.reason === 'NotFound') return undefined;
      this.errors.push(e);
      return undefined;
    }
  }

  /** Lists a collection in chunks of `--chunk-size`; resolves with every page. */
  private async pages<T extends { metadata?: { continue?: string } }>(
    r: ServedResource,
    o: { namespace?: string; accept: string; extra?: Record<string, string> },
  ): Promise<T[]> {
    const out: T[] = [];
    let cont: string | undefined;
    do {
      const page: T = await this.session.call<T>('GET', resourcePath(r, { namespace: o.namespace }), {
        accept: o.accept,
        query: this.query({ limit: this.chunk(), continue: cont, ...o.extra }),
      });
      out.push(page);
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return out;
  }

  /** The rows of one target as one Table (several names' rows, or every page of a list). */
  async table(req: Request): Promise<Table> {
    const r = req.target.resource;
    const accept = tableAccept(this.discovery);
    const answers: unknown[] = [];
    if (req.target.names) {
      for (const [i, name] of req.target.names.entries()) {
        const ns = req.namespaces ? req.namespaces[i] : this.o.namespace;
        const t = await this.one<unknown>(r, {
          name,
          namespace: r.namespaced ? (ns ?? this.o.namespace) : undefined,
          accept,
        });
        if (t !== undefined) answers.push(t);
      }
    } else {
      const extra: Record<string, string> = this.o.sortBy ? { includeObject: 'Object' } : {};
      answers.push(
        ...(await this.pages<{ metadata?: { continue?: string } }>(r, {
          namespace: r.namespaced ? this.o.namespace : undefined,
          accept,
          extra,
        })),
      );
    }
    const tables = answers.map((a) =>
      (a as { kind?: string }).kind === 'Table' ? (a as Table) : tableOfObjects(objectsOfList(a as ApiObjectJson)),
    );
    const first = tables[0];
    if (!first) return { kind: 'Table', columnDefinitions: [], rows: [] };
    const merged: Table = { ...first, rows: tables.flatMap((t) => t.rows) };
    if (this.o.sortBy) sortRows(merged, this.o.sortBy);
    return merged;
  }

  /** The objects of one target, with apiVersion and kind set on list items. */
  async objects(req: Request): Promise<ApiObjectJson[]> {
    const r = req.target.resource;
    const out: ApiObjectJson[] = [];
    if (req.target.names) {
      for (const [i, name] of req.target.names.entries()) {
        const ns = req.namespaces ? req.namespaces[i] : this.o.namespace;
        const obj = await this.one<ApiObjectJson>(r, {
          name,
          namespace: r.namespaced ? (ns ?? this.o.namespace) : undefined,
          accept: 'application/json',
        });
        if (obj) out.push(obj);
      }
    } else {
      for (const page of await this.pages<ApiObjectJson>(r, {
        namespace: r.namespaced ? this.o.namespace : undefined,
        accept: 'application/json',
      }))
        out.push(...objectsOfList(page));
    }
    if (this.o.sortBy) sortObjects(out, this.o.sortBy);
    return out;
  }
}

function sortKey(v: unknown): string | number {
  return typeof v === 'number' ? v : typeof v === 'string' ? v : JSON.stringify(v ?? '');
}

function compareKeys(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

function sortObjects(objs: unknown[], expr: string): void {
  const t = new JsonPathTemplate(relaxedJsonPath(expr));
  objs.sort((a, b) => compareKeys(sortKey(t.values(a)[0]), sortKey(t.values(b)[0])));
}

function sortRows(table: Table, expr: string): void {
  const t = new JsonPathTemplate(relaxedJsonPath(expr));
  table.rows.sort((a, b) => compareKeys(sortKey(t.values(a.object)[0]), sortKey(t.values(b.object)[0])));
}

async function requests(inv: Invocation<GetOptions>, session: Session, discovery: Discovery): Promise<Request[]> {
  const { opts, args } = inv;
  if (opts.filename && opts.filename.length > 0) {
    const objs = resolveObjects(
      await readManifests(opts.filename, { io: inv.io, recursive: opts.recursive, verb: 'get' }),
      {
        discovery,
        namespace: session.namespace,
        explicitNamespace: session.explicitNamespace,
      },
    );
    const out: Request[] = [];
    for (const o of objs) {
      const last = out[out.length - 1];
      if (last && last.target.resource === o.resource) {
        last.target.names?.push(o.name);
        last.namespaces?.push(o.namespace);
      } else out.push({ target: { resource: o.resource, names: [o.name] }, namespaces: [o.namespace] });
    }
    return out;
  }
  if (args.length === 0) {
    throw new CliError(
      `You must specify the type of resource to get. Use "svcctl api-resources" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse "svcctl explain <resource>" for a detailed description of that resource (e.g. svcctl explain pods).\nSee 'svcctl get -h' for help and examples`,
      1,
      true,
    );
  }
  return parseTargets(args, discovery, 'svcctl').map((target) => ({ target }));
}

function printErrors(inv: Invocation<GetOptions>, errors: unknown[]): void {
  for (const e of errors) {
    const { text } = describeError(e);
    inv.io.err(text.endsWith('\n') ? text : `${text}\n`);
  }
  if (errors.length > 0) inv.fail();
}

async function printTables(
  inv: Invocation<GetOptions>,
  o: { getter: Getter; reqs: Request[]; format: OutputFormat; namespace?: string },
): Promise<boolean> {
  const { opts } = inv;
  const showKind = opts.showKind === true || multipleTypes(o.reqs.map((r) => r.target));
  let printed = false;
  for (const req of o.reqs) {
    const table = await o.getter.table(req);
    const text = tableText(
      table,
      tablePrintOptions(opts, { format: o.format, resource: req.target.resource, showKind }),
    );
    if (!text) continue;
    if (printed) inv.io.out('\n');
    inv.io.out(tabwrite(text));
    printed = true;
  }
  return printed;
}

function tablePrintOptions(
  opts: GetOptions,
  o: { format: OutputFormat; resource: ServedResource; showKind: boolean },
): TablePrintOptions {
  return {
    wide: o.format.kind === 'table' && o.format.wide,
    noHeaders: opts.headers === false,
    withNamespace: opts.allNamespaces === true && o.resource.namespaced,
    kindPrefix: o.showKind ? kindPrefix(o.resource) : undefined,
    showLabels: opts.showLabels,
    labelColumns: opts.labelColumns,
  };
}

export async function run(inv: Invocation<GetOptions>): Promise<void> {
  const { opts, io } = inv;
  const format = parseOutputFormat(opts.output, {
    allowed: GET_FORMATS,
    readFile: (p) => readFileSync(p, 'utf8'),
    template: opts.template,
    allowMissingKeys: opts.allowMissingTemplateKeys,
  });
  const session = Session.open(inv.globals, io);
  try {
    if (opts.raw) {
      const body = await session.call<unknown>('GET', opts.raw, { accept: 'application/json, */*' });
      io.out(typeof body === 'string' ? body : JSON.stringify(body));
      return;
    }
    const discovery = await session.discovery();
    const reqs = await requests(inv, session, discovery);
    const namespace = opts.allNamespaces ? undefined : session.namespace;
    const getter = new Getter(session, discovery, { ...opts, namespace });
    if (opts.watch || opts.watchOnly) {
      await watch(inv, { session, discovery, getter, reqs, format, namespace });
      return;
    }
    if (format.kind === 'table') {
      const printed = await printTables(inv, { getter, reqs, format, namespace });
      const named = reqs.some((r) => r.target.names);
      if (!printed && getter.errors.length === 0 && !named) {
        io.err(
          notFoundMessage({
            allNamespaces: opts.allNamespaces === true,
            namespace,
            namespaced: reqs[0]?.target.resource.namespaced ?? true,
          }),
        );
      }
    } else {
      const objects: ApiObjectJson[] = [];
      const names: string[] = [];
      for (const req of reqs) {
        for (const obj of await getter.objects(req)) {
          // kubectl omits managed fields from json and yaml, not from what a go template sees.
          objects.push(format.kind === 'go-template' ? obj : stripForOutput(obj));
          names.push(`${kindPrefix(req.target.resource)}/${obj.metadata?.name ?? ''}`);
        }
      }
      const single = reqs.length === 1 && reqs[0]?.target.names?.length === 1;
      if (
        objects.length === 0 &&
        format.kind === 'name' &&
        getter.errors.length === 0 &&
        !reqs.some((r) => r.target.names)
      ) {
        io.err(
          notFoundMessage({
            allNamespaces: opts.allNamespaces === true,
            namespace,
            namespaced: reqs[0]?.target.resource.namespaced ?? true,
          }),
        );
      } else if (objects.length > 0 || !single) {
        io.out(printObjects(objects, { format, single, names, noHeaders: opts.headers === false }));
      }
    }
    printErrors(inv, getter.errors);
  } finally {
    session.close();
  }
}

interface WatchEvent {
  type: string;
  object: ApiObjectJson & Partial<Table>;
}

async function watch(
  inv: Invocation<GetOptions>,
  o: {
    session: Session;
    discovery: Discovery;
    getter: Getter;
    reqs: Request[];
    format: OutputFormat;
    namespace?: string;
  },
): Promise<void> {
  const { opts, io } = inv;
  if (o.reqs.length !== 1 || !o.reqs[0]) {
    throw new CliError(
      `watch is only supported on individual resources and resource collections, but ${o.reqs.length} resources were found`,
    );
  }
  const req = o.reqs[0];
  const r = req.target.resource;
  const names = req.target.names;
  if (names && names.length > 1) {
    throw new CliError(
      `watch is only supported on individual resources and resource collections, but ${names.length} resources were found`,
    );
  }
  const table = o.format.kind === 'table';
  const printOpts = tablePrintOptions(opts, { format: o.format, resource: r, showKind: opts.showKind === true });
  const widths: number[] = [];
  let headerDone = false;
  let resourceVersion: string | undefined;
  const ns = r.namespaced ? o.namespace : undefined;
  // The initial state: the list (or object), printed unless --watch-only; its resourceVersion starts the watch.
  const listQuery = {
    labelSelector: opts.selector,
    fieldSelector: names ? `metadata.name=${names[0] ?? ''}` : opts.fieldSelector,
  };
  if (table) {
    const t = await o.session.call<Table>('GET', resourcePath(r, { namespace: ns }), {
      accept: tableAccept(o.discovery),
      query: listQuery,
    });
    resourceVersion = t.metadata?.resourceVersion;
    if (!opts.watchOnly && t.rows.length > 0) {
      io.out(tabwrite(tableText(t, printOpts), { remembered: widths }));
      headerDone = true;
    }
  } else {
    const list = await o.session.call<ApiObjectJson>('GET', resourcePath(r, { namespace: ns }), { query: listQuery });
    resourceVersion = (list.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (!opts.watchOnly) for (const obj of objectsOfList(list)) io.out(printOne(stripForOutput(obj), o.format, r));
  }
  const res = await o.session
    .stream(resourcePath(r, { namespace: ns }), {
      accept: table ? tableAccept(o.discovery) : 'application/json',
      query: { ...listQuery, watch: 'true', resourceVersion, allowWatchBookmarks: 'true' },
    })
    .catch((e: unknown) => {
      // Interrupted while the watch was opening: as quiet as an interrupt during the watch.
      if (io.signal?.aborted) return undefined;
      throw e;
    });
  if (!res) return;
  let buffer = '';
  res.body.setEncoding('utf8');
  try {
    for await (const chunk of res.body) {
      buffer += chunk as string;
      let i: number;
      while ((i = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, i).trim();
        buffer = buffer.slice(i + 1);
        if (!line) continue;
        const ev = JSON.parse(line) as WatchEvent;
        if (ev.type === 'BOOKMARK') continue;
        if (ev.type === 'ERROR') throw { status: ev.object };
        if (table) {
          const t = ev.object as unknown as Table;
          const lines: string[] = [];
          if (!headerDone) {
            const h = tableHeader(t, printOpts);
            if (h !== undefined) lines.push(opts.outputWatchEvents ? `EVENT\t${h}` : h);
            headerDone = true;
          }
          for (const row of tableRows(t, printOpts)) lines.push(opts.outputWatchEvents ? `${ev.type}\t${row}` : row);
          io.out(tabwrite(lines.map((l) => `${l}\n`).join(''), { remembered: widths }));
        } else if (opts.outputWatchEvents) {
          io.out(
            printOne({ type: ev.type, object: stripForOutput(ev.object) } as unknown as ApiObjectJson, o.format, r),
          );
        } else io.out(printOne(stripForOutput(ev.object), o.format, r));
      }
    }
  } catch (e) {
    if (io.signal?.aborted) return;
    throw e;
  } finally {
    res.body.destroy();
  }
}

function printOne(obj: ApiObjectJson, format: OutputFormat, r: ServedResource): string {
  switch (format.kind) {
    case 'json':
      return toJson(obj);
    case 'yaml':
      return `${toYaml(obj)}---\n`;
    case 'name':
      return `${kindPrefix(r)}/${obj.metadata?.name ?? ''}\n`;
    default:
      return printObjects([obj], { format, single: true, names: [] });
  }
}
