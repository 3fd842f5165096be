import { NAMINGS, type NamingScheme } from '@svc/api/names';
import { goEscape, sortKeys } from './printers/json-yaml.js';
import type { JsonObject } from './three-way-patch.js';

/** The server's last-applied annotation: svcctl's under the svc domain, or kubectl's under `--naming=kubernetes` (names.ts). */
export function lastAppliedAnnotation(naming: NamingScheme): string {
  return NAMINGS[naming].lastAppliedAnnotation;
}

function annotationsOf(obj: JsonObject): Record<string, unknown> | undefined {
  const m = obj.metadata;
  if (!m || typeof m !== 'object' || Array.isArray(m)) return undefined;
  const a = m.annotations;
  return a && typeof a === 'object' && !Array.isArray(a) ? a : undefined;
}

/** The last applied configuration recorded on a live object, parsed; undefined when absent or not JSON. */
export function lastAppliedOf(obj: JsonObject, annotation: string): JsonObject | undefined {
  const v = annotationsOf(obj)?.[annotation];
  if (typeof v !== 'string' || v === '') return undefined;
  try {
    const parsed = JSON.parse(v) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * kubectl's GetModifiedConfiguration: the object encoded without the annotation (keys sorted,
 * `annotations` present even when empty, newline-terminated, as Go encodes it), then set as the
 * annotation on a copy of the object. Returns the copy.
 */
export function withLastApplied(obj: JsonObject, annotation: string): JsonObject {
  const meta = { ...((obj.metadata ?? {}) as JsonObject) };
  const annotations = { ...((annotationsOf(obj) ?? {}) as JsonObject) };
  delete annotations[annotation];
  const bare: JsonObject = { ...obj, metadata: { ...meta, annotations } };
  const text = `${goEscape(JSON.stringify(sortKeys(bare)))}\n`;
  return { ...obj, metadata: { ...meta, annotations: { ...annotations, [annotation]: text } } };
}

/**
 * kubectl's GetModifiedConfiguration without annotating (what `diff` patches with): the object
 * with `annotations` present, even empty, and the last-applied annotation left out.
 */
export function withoutLastApplied(obj: JsonObject, annotation: string): JsonObject {
  const annotations = { ...((annotationsOf(obj) ?? {}) as JsonObject) };
  delete annotations[annotation];
  return { ...obj, metadata: { ...((obj.metadata ?? {}) as JsonObject), annotations } };
}
