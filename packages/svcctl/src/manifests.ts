import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import YAML from 'yaml';
import { CliError } from './errors.js';
import type { SvcctlIo } from './io.js';

export type JsonObject = Record<string, unknown>;

/** One object of a manifest, with where it came from (a path, a URL or `STDIN`). */
export interface ManifestObject {
  obj: JsonObject;
  source: string;
}

const EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

async function filesOf(path: string, recursive: boolean): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(path, e.name);
    if (e.isDirectory()) {
      if (recursive) out.push(...(await filesOf(p, recursive)));
    } else if (EXTENSIONS.has(extname(e.name))) out.push(p);
  }
  return out;
}

/** The documents of a YAML or JSON stream; `kind: List` (and `<Kind>List`) expanded into their items. */
export function parseManifest(text: string, source: string): ManifestObject[] {
  const out: ManifestObject[] = [];
  let docs: YAML.Document.Parsed[];
  try {
    docs = YAML.parseAllDocuments(text) as YAML.Document.Parsed[];
  } catch (e) {
    throw new CliError(`error parsing ${source}: ${(e as Error).message}`);
  }
  for (const d of docs) {
    if (d.errors.length > 0) throw new CliError(`error parsing ${source}: ${d.errors[0]?.message ?? 'invalid YAML'}`);
    const v = d.toJS({ maxAliasCount: 1000 }) as unknown;
    if (v === null || v === undefined) continue;
    if (typeof v !== 'object' || Array.isArray(v))
      throw new CliError(`error parsing ${source}: a document is not an object`);
    const obj = v as JsonObject;
    if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
      for (const item of obj.items) if (item && typeof item === 'object') out.push({ obj: item as JsonObject, source });
    } else out.push({ obj, source });
  }
  return out;
}

/** Every object of `-f` arguments: files, directories (`-R` for subdirectories), URLs and `-` (standard input). */
export async function readManifests(
  files: string[],
  o: { io: SvcctlIo; recursive?: boolean; verb?: string },
): Promise<ManifestObject[]> {
  const out: ManifestObject[] = [];
  for (const f of files) {
    if (f === '-') {
      out.push(...parseManifest(await o.io.readStdin(), 'STDIN'));
      continue;
    }
    if (/^https?:\/\//.test(f)) {
      const r = await fetch(f);
      if (!r.ok)
        throw new CliError(
          `unable to read URL "${f}", server reported ${r.status} ${r.statusText}, status code=${r.status}`,
        );
      out.push(...parseManifest(await r.text(), f));
      continue;
    }
    const path = resolve(o.io.cwd ?? process.cwd(), f);
    let st;
    try {
      st = await stat(path);
    } catch {
      throw new CliError(`the path "${f}" does not exist`);
    }
    const paths = st.isDirectory() ? await filesOf(path, o.recursive === true) : [path];
    for (const p of paths) {
      const shown = st.isDirectory() ? join(f, p.slice(path.length + 1)) : f;
      out.push(...parseManifest(await readFile(p, 'utf8'), shown));
    }
  }
  if (files.length > 0 && out.length === 0) throw new CliError(`no objects passed to ${o.verb ?? 'apply'}`);
  return out;
}

export function metadataOf(obj: JsonObject): { name?: string; namespace?: string; generateName?: string } & JsonObject {
  const m = obj.metadata;
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as JsonObject) : {};
}
