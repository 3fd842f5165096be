/**
 * Path elements of managed field sets, spelled as the keys of Kubernetes' FieldsV1 JSON:
 * `f:<name>` a struct field or map key, `k:<json object>` a map-list item by its key fields
 * (keys sorted), `v:<json>` a set item by value, `i:<n>` a list item by index. Every element
 * built here is canonical, so equal elements are equal strings.
 */
import type { Schema } from '@svc/api';
import { canonicalJson, compareJson, compareStrings } from './json-compare.js';
import { isJsonObject, type JsonObject } from './merge-patch.js';

export type PathElement = string;
export type FieldPath = readonly PathElement[];

export type ParsedElement =
  | { kind: 'field'; name: string }
  | { kind: 'key'; fields: [string, unknown][] }
  | { kind: 'value'; value: unknown }
  | { kind: 'index'; index: number };

export function fieldElement(name: string): PathElement {
  return `f:${name}`;
}

/** `k:{...}` from key field values; `undefined` values are left out. */
export function keyElement(fields: Readonly<Record<string, unknown>>): PathElement {
  const obj: JsonObject = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) obj[k] = v;
  return `k:${canonicalJson(obj)}`;
}

export function valueElement(value: unknown): PathElement {
  return `v:${canonicalJson(value)}`;
}

export function indexElement(index: number): PathElement {
  return `i:${index}`;
}

const parsed = new Map<string, ParsedElement>();
const PARSED_CACHE_LIMIT = 20000;

/** Parses an element; throws `Error` on anything that is not a valid FieldsV1 key. */
export function parseElement(pe: string): ParsedElement {
  const hit = parsed.get(pe);
  if (hit) return hit;
  const p = parseUncached(pe);
  if (parsed.size >= PARSED_CACHE_LIMIT) parsed.clear();
  parsed.set(pe, p);
  return p;
}

function parseUncached(pe: string): ParsedElement {
  const body = pe.slice(2);
  switch (pe.slice(0, 2)) {
    case 'f:':
      return { kind: 'field', name: body };
    case 'k:': {
      const v = parseJson(pe, body);
      if (!isJsonObject(v)) throw new Error(`invalid path element ${JSON.stringify(pe)}: key must be a JSON object`);
      const fields = Object.keys(v)
        .sort(compareStrings)
        .map((k): [string, unknown] => [k, v[k]]);
      return { kind: 'key', fields };
    }
    case 'v:':
      return { kind: 'value', value: parseJson(pe, body) };
    case 'i:':
      if (!/^(0|[1-9][0-9]*)$/.test(body)) throw new Error(`invalid path element ${JSON.stringify(pe)}: bad index`);
      return { kind: 'index', index: Number(body) };
    default:
      throw new Error(`invalid path element ${JSON.stringify(pe)}: unknown prefix`);
  }
}

function parseJson(pe: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`invalid path element ${JSON.stringify(pe)}: bad JSON`);
  }
}

/** The canonical spelling of an element read from FieldsV1 (key order, JSON spacing). */
export function canonicalElement(pe: string): PathElement {
  const p = parseElement(pe);
  switch (p.kind) {
    case 'field':
      return pe;
    case 'key':
      return keyElement(Object.fromEntries(p.fields));
    case 'value':
      return valueElement(p.value);
    case 'index':
      return indexElement(p.index);
  }
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

/** structured-merge-diff's element order: fields < keys < values < indexes, each by content. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  const pa = parseElement(a);
  const pb = parseElement(b);
  if (pa.kind !== pb.kind) return KIND_ORDER[pa.kind] < KIND_ORDER[pb.kind] ? -1 : 1;
  if (pa.kind === 'field' && pb.kind === 'field') return compareStrings(pa.name, pb.name);
  if (pa.kind === 'value' && pb.kind === 'value') return compareJson(pa.value, pb.value);
  if (pa.kind === 'index' && pb.kind === 'index') return pa.index < pb.index ? -1 : pa.index > pb.index ? 1 : 0;
  if (pa.kind === 'key' && pb.kind === 'key') {
    const n = Math.min(pa.fields.length, pb.fields.length);
    for (let i = 0; i < n; i++) {
      const [na, va] = pa.fields[i] as [string, unknown];
      const [nb, vb] = pb.fields[i] as [string, unknown];
      const c = compareStrings(na, nb);
      if (c !== 0) return c;
      const d = compareJson(va, vb);
      if (d !== 0) return d;
    }
    return pa.fields.length < pb.fields.length ? -1 : pa.fields.length > pb.fields.length ? 1 : 0;
  }
  return 0;
}

function valueText(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v);
}

/** One element as structured-merge-diff prints it: `.name`, `[k="v",n=1]`, `[="v"]`, `[0]`. */
export function elementString(pe: PathElement): string {
  const p = parseElement(pe);
  switch (p.kind) {
    case 'field':
      return `.${p.name}`;
    case 'key':
      return `[${p.fields.map(([k, v]) => `${k}=${valueText(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueText(p.value)}]`;
    case 'index':
      return `[${p.index}]`;
  }
}

/** A path as conflict messages print it: `.spec.containers[name="c"].image`. */
export function pathString(path: FieldPath): string {
  return path.map(elementString).join('');
}

/**
 * The element naming item `index` of a granular list: its key fields (a key field missing from
 * the item takes the item schema's default) for map lists, its value for sets, and its index when
 * no key can be read.
 */
export function listItemElement(
  list: { kind: 'list-map'; items: Schema; keys: readonly string[] } | { kind: 'list-set' },
  item: unknown,
  index: number,
): PathElement {
  if (list.kind === 'list-set') return valueElement(item);
  if (!isJsonObject(item) || list.keys.length === 0) return indexElement(index);
  const props = list.items.type === 'object' ? list.items.properties : undefined;
  const fields: Record<string, unknown> = {};
  let found = false;
  for (const k of list.keys) {
    const v = Object.hasOwn(item, k) && item[k] !== null ? item[k] : props?.[k]?.default;
    if (v !== undefined) {
      fields[k] = v;
      found = true;
    }
  }
  return found ? keyElement(fields) : indexElement(index);
}
