/**
 * JSON values as CEL sees them under a schema (Kubernetes' UnstructuredToVal): integers are
 * ints (BigInt), numbers doubles, `date`/`date-time` strings timestamps, `duration` strings
 * durations, `byte` strings bytes; objects show only their declared properties, under their
 * escaped names (plus `apiVersion`, `kind`, `metadata` of a resource), maps all their keys.
 */
import { Environment } from '@marcbachmann/cel-js';
import { isJsonObject } from '@svc/machinery';
import { escapeName, withTypeAndObjectMeta } from './cel-types.js';
import { additionalPropertiesOf, isEmbeddedResource, isIntOrString, itemsOf, type JSONSchemaProps } from './types.js';

let durationEnv: Environment | undefined;

function toDuration(s: string): unknown {
  durationEnv ??= new Environment().registerVariable('s', 'string');
  try {
    return durationEnv.evaluate('duration(s)', { s }) as unknown;
  } catch {
    return s;
  }
}

function toTimestamp(s: string, dateOnly: boolean): unknown {
  const t = Date.parse(dateOnly ? `${s}T00:00:00Z` : s);
  return Number.isNaN(t) ? s : new Date(t);
}

function toNumber(v: number): unknown {
  return Number.isSafeInteger(v) ? BigInt(v) : v;
}

/** A value no schema describes: numbers that are whole are ints. */
function untyped(v: unknown): unknown {
  if (typeof v === 'number') return toNumber(v);
  // Array.from, not map: map keeps the source's Array (another realm's under jest, which cel-js refuses).
  if (Array.isArray(v)) return Array.from(v, untyped);
  if (isJsonObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, untyped(x)]));
  return v;
}

/** `value` as CEL's `self` for a node with schema `s` (`resourceRoot` for the root of a resource). */
export function toCelValue(value: unknown, s: JSONSchemaProps | undefined, resourceRoot = false): unknown {
  if (value === null || value === undefined) return null;
  if (!s) return untyped(value);
  if (isIntOrString(s)) return typeof value === 'number' ? toNumber(value) : value;
  switch (s.type) {
    case 'object':
      return isJsonObject(value)
        ? toCelObject(value, resourceRoot || isEmbeddedResource(s) ? withTypeAndObjectMeta(s) : s)
        : value;
    case 'array': {
      const items = itemsOf(s);
      return Array.isArray(value) ? Array.from(value, (v: unknown) => toCelValue(v, items)) : value;
    }
    case 'integer':
      return typeof value === 'number' ? toNumber(value) : value;
    case 'number':
      return value;
    case 'string':
      if (typeof value !== 'string') return value;
      if (s.format === 'date' || s.format === 'date-time') return toTimestamp(value, s.format === 'date');
      if (s.format === 'duration') return toDuration(value);
      if (s.format === 'byte') return Uint8Array.from(Buffer.from(value, 'base64'));
      return value;
    default:
      return untyped(value);
  }
}

function toCelObject(value: Record<string, unknown>, s: JSONSchemaProps): unknown {
  const ap = additionalPropertiesOf(s);
  if (!s.properties && ap) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCelValue(v, ap, isEmbeddedResource(ap))]));
  }
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const name = escapeName(k);
    if (name === undefined || !Object.hasOwn(value, k)) continue;
    out[name] = toCelValue(value[k], p, isEmbeddedResource(p));
  }
  return out;
}
