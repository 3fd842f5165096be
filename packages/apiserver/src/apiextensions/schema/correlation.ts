/**
 * A new value paired with the old value at the same place (Kubernetes' CorrelatedObject), for
 * ratcheting and transition rules. Object fields correlate by name when the schema describes
 * them (a property, or an additionalProperties schema); items of `list-type: map` lists
 * correlate by their key fields; items of other lists never correlate. `unchanged()` is deep
 * equality along those correlations (a map list may be reordered), cached per node.
 */
import { isJsonObject, jsonEqual, type JsonObject } from '@svc/machinery';
import { additionalPropertiesOf, ext, itemsOf, listMapKeysOf, type JSONSchemaProps } from './types.js';

export class Correlation {
  private equal: boolean | undefined;
  private readonly children = new Map<string | number, Correlation | undefined>();
  private oldByKey: Map<string, JsonObject> | undefined;

  constructor(
    readonly value: unknown,
    readonly old: unknown,
    readonly schema: JSONSchemaProps,
  ) {}

  /** Field `field` of both objects, when both have it and the schema describes it. */
  key(field: string): Correlation | undefined {
    if (this.children.has(field)) return this.children.get(field);
    let out: Correlation | undefined;
    const { value, old } = this;
    if (isJsonObject(value) && isJsonObject(old) && Object.hasOwn(value, field) && Object.hasOwn(old, field)) {
      const sub = this.schema.properties?.[field] ?? additionalPropertiesOf(this.schema);
      if (sub) out = new Correlation(value[field], old[field], sub);
    }
    this.children.set(field, out);
    return out;
  }

  /** Item `i` of the new list with the old item of the same keys (map lists only). */
  index(i: number): Correlation | undefined {
    if (this.children.has(i)) return this.children.get(i);
    let out: Correlation | undefined;
    const items = itemsOf(this.schema);
    const oldItem = Array.isArray(this.value) ? this.oldItemFor(this.value[i]) : undefined;
    if (items && oldItem !== undefined) out = new Correlation((this.value as unknown[])[i], oldItem, items);
    this.children.set(i, out);
    return out;
  }

  /** The old item with the same map keys as `item`, in a `list-type: map` list. */
  oldItemFor(item: unknown): JsonObject | undefined {
    if (ext(this.schema, 'list-type') !== 'map' || !Array.isArray(this.old) || !isJsonObject(item)) return undefined;
    const keys = listMapKeysOf(this.schema);
    if (keys.length === 0) return undefined;
    if (!this.oldByKey) {
      this.oldByKey = new Map();
      for (const o of this.old) {
        const k = isJsonObject(o) ? mapListKey(o, keys) : undefined;
        if (k !== undefined && isJsonObject(o) && !this.oldByKey.has(k)) this.oldByKey.set(k, o);
      }
    }
    const k = mapListKey(item, keys);
    return k === undefined ? undefined : this.oldByKey.get(k);
  }

  /** Whether the new value equals the old one along the correlations. */
  unchanged(): boolean {
    if (this.equal === undefined) this.equal = this.compare();
    return this.equal;
  }

  private compare(): boolean {
    const { value, old } = this;
    if (value === undefined || value === null || old === undefined || old === null) {
      return (value ?? null) === (old ?? null);
    }
    if (Array.isArray(value) !== Array.isArray(old) || isJsonObject(value) !== isJsonObject(old)) return false;
    if (Array.isArray(value) && Array.isArray(old)) {
      if (value.length !== old.length) return false;
      const isMapList = ext(this.schema, 'list-type') === 'map';
      for (let i = 0; i < value.length; i++) {
        const c = this.index(i);
        if (!c) return isMapList ? false : jsonEqual(value, old);
        if (!c.unchanged()) return false;
      }
      return true;
    }
    if (isJsonObject(value) && isJsonObject(old)) {
      if (Object.keys(value).length !== Object.keys(old).length) return false;
      return Object.keys(value).every((k) => this.key(k)?.unchanged() ?? false);
    }
    return jsonEqual(value, old);
  }
}

/** The identity of a map-list item: its key fields, which must all be scalars. */
function mapListKey(o: JsonObject, keys: readonly string[]): string | undefined {
  const parts: unknown[] = [];
  for (const k of keys) {
    if (!Object.hasOwn(o, k)) return undefined;
    const v = o[k];
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined;
    parts.push(v);
  }
  return JSON.stringify(parts);
}
