import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import YAML from 'yaml';
import { CliError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { configPathOf } from '../session.js';
import { toYaml } from '../printers/json-yaml.js';
import { JsonPathTemplate } from '../printers/jsonpath.js';
import { tabwrite } from '../printers/tabwriter.js';

type Entry = { name?: string } & Record<string, unknown>;

interface ConfigFile {
  path: string;
  doc: YAML.Document;
  data: Record<string, unknown>;
}

function load(inv: Invocation<unknown>): ConfigFile {
  const path = configPathOf(inv.globals, inv.io);
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const doc = YAML.parseDocument(text);
  if (doc.errors.length > 0) throw new CliError(`Error in configuration: ${path}: ${doc.errors[0]?.message ?? ''}`);
  const data = (doc.toJS() ?? {}) as Record<string, unknown>;
  return { path, doc, data };
}

function save(f: ConfigFile): void {
  if (!f.doc.contents) f.doc.contents = f.doc.createNode({ apiVersion: 'v1', kind: 'Config' }) as never;
  writeFileSync(f.path, f.doc.toString(), { mode: 0o600 });
}

function entries(v: unknown): Entry[] {
  return Array.isArray(v) ? (v as Entry[]) : [];
}

const SECRET_DATA = ['certificate-authority-data', 'client-certificate-data', 'client-key-data'];
const SECRET_TEXT = ['token', 'password'];

function redact(entry: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...entry };
  for (const k of SECRET_DATA) if (typeof out[k] === 'string' && out[k] !== '') out[k] = 'DATA+OMITTED';
  for (const k of SECRET_TEXT) if (typeof out[k] === 'string' && out[k] !== '') out[k] = 'REDACTED';
  return out;
}

/** Field order of kubectl's config types (its `-o json` writes structs in declaration order). */
const ORDER: Record<string, string[]> = {
  config: ['kind', 'apiVersion', 'preferences', 'clusters', 'users', 'contexts', 'current-context', 'extensions'],
  named: ['name', 'cluster', 'user', 'context'],
  cluster: [
    'server',
    'tls-server-name',
    'insecure-skip-tls-verify',
    'certificate-authority',
    'certificate-authority-data',
    'proxy-url',
    'disable-compression',
    'extensions',
  ],
  user: [
    'client-certificate',
    'client-certificate-data',
    'client-key',
    'client-key-data',
    'token',
    'tokenFile',
    'as',
    'as-uid',
    'as-groups',
    'as-user-extra',
    'username',
    'password',
    'auth-provider',
    'exec',
    'extensions',
  ],
  exec: ['command', 'args', 'env', 'apiVersion', 'installHint', 'provideClusterInfo', 'interactiveMode'],
  context: ['cluster', 'user', 'namespace', 'extensions'],
};

function inOrder(v: unknown, order: string[]): Record<string, unknown> {
  const o = (v ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of order) if (k in o) out[k] = o[k];
  for (const k of Object.keys(o).sort()) if (!(k in out)) out[k] = o[k];
  return out;
}

function jsonView(view: Record<string, unknown>): string {
  const named = (list: unknown, what: 'cluster' | 'user' | 'context'): unknown =>
    Array.isArray(list)
      ? list.map((e: Record<string, unknown>) => {
          const inner = inOrder(e[what], ORDER[what] ?? []);
          if (what === 'user' && inner.exec) inner.exec = inOrder(inner.exec, ORDER.exec ?? []);
          return inOrder({ ...e, [what]: inner }, ORDER.named ?? []);
        })
      : list;
  const v = inOrder(
    {
      ...view,
      clusters: named(view.clusters, 'cluster'),
      users: named(view.users, 'user'),
      contexts: named(view.contexts, 'context'),
    },
    ORDER.config ?? [],
  );
  return `${JSON.stringify(v, null, 4)}\n`;
}

export interface ViewOptions {
  raw?: boolean;
  minify?: boolean;
  flatten?: boolean;
  output?: string;
}

/** `config view`: the configuration with secrets redacted unless `--raw`; `--minify` keeps only the current context's entries. */
export async function runView(inv: Invocation<ViewOptions>): Promise<void> {
  const { opts, io } = inv;
  const f = load(inv);
  let clusters = entries(f.data.clusters);
  let contexts = entries(f.data.contexts);
  let users = entries(f.data.users);
  const current = typeof f.data['current-context'] === 'string' ? f.data['current-context'] : '';
  if (opts.minify) {
    if (!current) throw new CliError('current-context must exist in order to minify');
    const ctx = contexts.find((c) => c.name === current);
    if (!ctx) throw new CliError(`cannot locate context ${current}`);
    const c = (ctx.context ?? {}) as Record<string, unknown>;
    contexts = [ctx];
    clusters = clusters.filter((x) => x.name === c.cluster);
    users = users.filter((x) => x.name === c.user);
  }
  if (!opts.raw) {
    clusters = clusters.map((c) => ({ ...c, cluster: redact((c.cluster ?? {}) as Record<string, unknown>) }));
    users = users.map((u) => ({ ...u, user: redact((u.user ?? {}) as Record<string, unknown>) }));
  }
  const view: Record<string, unknown> = {
    apiVersion: 'v1',
    clusters: clusters.length > 0 ? clusters : null,
    contexts: contexts.length > 0 ? contexts : null,
    'current-context': current,
    kind: 'Config',
    preferences: f.data.preferences ?? {},
    users: users.length > 0 ? users : null,
  };
  const out = opts.output ?? 'yaml';
  if (out === 'json') io.out(jsonView(view));
  else if (out.startsWith('jsonpath=')) io.out(new JsonPathTemplate(out.slice('jsonpath='.length)).execute(view));
  else if (out === 'yaml') io.out(toYaml(view));
  else
    throw new CliError(
      `unable to match a printer suitable for the output format "${out}", allowed formats are: json,jsonpath,yaml`,
    );
}

export async function runCurrentContext(inv: Invocation): Promise<void> {
  const f = load(inv);
  const current = f.data['current-context'];
  if (typeof current !== 'string' || current === '') throw new CliError('current-context is not set');
  inv.io.out(`${current}\n`);
}

export async function runUseContext(inv: Invocation): Promise<void> {
  const name = inv.args[0] ?? '';
  const f = load(inv);
  if (!entries(f.data.contexts).some((c) => c.name === name)) {
    throw new CliError(`no context exists with the name: "${name}"`);
  }
  f.doc.set('current-context', name);
  save(f);
  inv.io.out(`Switched to context "${name}".\n`);
}

export interface SetContextOptions {
  current?: boolean;
  cluster?: string;
  user?: string;
  namespace?: string;
}

export async function runSetContext(inv: Invocation<SetContextOptions>): Promise<void> {
  const { opts } = inv;
  const f = load(inv);
  let name = inv.args[0];
  if (opts.current) {
    if (name) throw new CliError('you cannot specify both a context name and --current');
    const current = f.data['current-context'];
    if (typeof current !== 'string' || current === '') throw new CliError('no current context is set');
    name = current;
  }
  if (!name) throw new CliError('you must specify a non-empty context name or --current');
  const namespace = opts.namespace ?? inv.globals.namespace;
  const contexts = entries(f.data.contexts);
  const at = contexts.findIndex((c) => c.name === name);
  const fields: Record<string, string> = {};
  if (opts.cluster !== undefined) fields.cluster = opts.cluster;
  if (opts.user !== undefined) fields.user = opts.user;
  if (namespace !== undefined) fields.namespace = namespace;
  if (at < 0) {
    if (!f.doc.has('contexts') || !Array.isArray(f.data.contexts)) f.doc.set('contexts', f.doc.createNode([]));
    const seq = f.doc.get('contexts') as YAML.YAMLSeq;
    seq.add(f.doc.createNode({ context: fields, name }));
  } else {
    for (const [k, v] of Object.entries(fields)) f.doc.setIn(['contexts', at, 'context', k], v);
  }
  save(f);
  inv.io.out(`Context "${name}" ${at < 0 ? 'created' : 'modified'}.\n`);
}

export interface GetContextsOptions {
  headers?: boolean;
  output?: string;
}

export async function runGetContexts(inv: Invocation<GetContextsOptions>): Promise<void> {
  const { opts, io } = inv;
  const f = load(inv);
  const current = f.data['current-context'];
  let contexts = entries(f.data.contexts);
  const wanted = inv.args[0];
  if (wanted) {
    contexts = contexts.filter((c) => c.name === wanted);
    if (contexts.length === 0) throw new CliError(`context ${wanted} not found`);
  }
  contexts = [...contexts].sort((a, b) => String(a.name).localeCompare(String(b.name)));
  if (opts.output === 'name') {
    io.out(contexts.map((c) => `${c.name ?? ''}\n`).join(''));
    return;
  }
  const lines: string[] = [];
  if (opts.headers !== false) lines.push('CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE');
  for (const c of contexts) {
    const ctx = (c.context ?? {}) as Record<string, unknown>;
    lines.push(
      [c.name === current ? '*' : '', c.name ?? '', ctx.cluster ?? '', ctx.user ?? '', ctx.namespace ?? '']
        .map(String)
        .join('\t'),
    );
  }
  io.out(tabwrite(lines.map((l) => `${l}\n`).join('')));
}
