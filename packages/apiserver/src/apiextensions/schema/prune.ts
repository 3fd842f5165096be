/**
 * Kubernetes' pruning of unknown fields by a structural schema (apiextensions-apiserver
 * `schema/pruning`): fields no schema describes are dropped, except below
 * `preserve-unknown-fields` (until nested properties or additionalProperties apply again) and
 * `apiVersion`, `kind`, `metadata` of an embedded resource or the resource root. Values under
 * `additionalProperties: true|false` keep their keys but lose every nested object field, as
 * Kubernetes does.
 */
import { isJsonObject, type JsonObject } from '@svc/machinery';
import {
  additionalPropertiesOf,
  isEmbeddedResource,
  itemsOf,
  preservesUnknownFields,
  type JSONSchemaProps,
} from './types.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Removes unknown fields from `value` in place; returns their paths (dotted, sorted). */
export function pruneUnknownFields(value: unknown, schema: JSONSchemaProps, resourceRoot: boolean): string[] {
  const pruned: string[] = [];
  const root: Node | undefined = resourceRoot ? { schema, embedded: true } : node(schema);
  prune(value, root, { path: '', pruned });
  return pruned.sort();
}

interface Node {
  schema: JSONSchemaProps;
  embedded: boolean;
}

interface Walk {
  path: string;
  pruned: string[];
}

function node(schema: JSONSchemaProps | undefined): Node | undefined {
  return schema && { schema, embedded: isEmbeddedResource(schema) };
}

function at(w: Walk, k: string): Walk {
  return { path: w.path === '' ? k : `${w.path}.${k}`, pruned: w.pruned };
}

/** The schema a map entry `k` falls under, `null` for additionalProperties without a schema, or undefined. */
function entrySchema(n: Node, k: string): Node | null | undefined {
  const prop = n.schema.properties?.[k];
  if (prop) return node(prop);
  if (n.schema.additionalProperties === undefined) return undefined;
  return node(additionalPropertiesOf(n.schema)) ?? null;
}

function prune(x: unknown, n: Node | undefined, w: Walk): void {
  if (n && preservesUnknownFields(n.schema)) return skipPrune(x, n, w);
  if (Array.isArray(x)) {
    const items = n && node(itemsOf(n.schema));
    x.forEach((v: unknown, i) => prune(v, items, { path: `${w.path}[${i}]`, pruned: w.pruned }));
    return;
  }
  if (!isJsonObject(x)) return;
  for (const k of Object.keys(x)) {
    if (n?.embedded && META_FIELDS.has(k)) continue;
    const sub = n ? entrySchema(n, k) : undefined;
    if (sub !== undefined) {
      prune(x[k], sub ?? undefined, at(w, k));
    } else {
      if (!META_FIELDS.has(k) || w.path !== '') w.pruned.push(at(w, k).path);
      delete (x as JsonObject)[k];
    }
  }
}

function skipPrune(x: unknown, n: Node, w: Walk): void {
  if (Array.isArray(x)) {
    const items = node(itemsOf(n.schema));
    if (!items) return;
    x.forEach((v: unknown, i) => skipPrune(v, items, { path: `${w.path}[${i}]`, pruned: w.pruned }));
    return;
  }
  if (!isJsonObject(x)) return;
  for (const k of Object.keys(x)) {
    if (n.embedded && META_FIELDS.has(k)) continue;
    const sub = entrySchema(n, k);
    if (sub !== undefined) prune(x[k], sub ?? undefined, at(w, k));
  }
}
