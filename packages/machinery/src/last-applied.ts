/**
 * Moving from client-side to server-side apply (rule 12), as Kubernetes' field manager does
 * for its CLI's default manager: conflicts on fields that the last-applied annotation holds with
 * the live value are forced, and a successful apply by that manager rewrites the annotation.
 */
import { naming, type Schema } from '@svc/api';
import type { FieldSet } from './field-set.js';
import { fieldSetOf, type TrackingOptions } from './field-set-of.js';
import { canonicalJson } from './json-compare.js';
import { isJsonObject, setOwn, type JsonObject } from './merge-patch.js';
import { compareValues } from './typed-compare.js';
import { TOTAL_ANNOTATION_SIZE_LIMIT, utf8Length } from './validation.js';

/**
 * Field managers whose applies migrate from client-side apply: Kubernetes' (`kubectl`, its CLI's
 * default server-side apply manager) and our CLI's name.
 */
export function defaultClientSideApplyManagers(): readonly string[] {
  return ['kubectl', naming().cliName];
}

/** JSON as Go's encoder writes it: HTML-sensitive characters and U+2028/9 escaped, newline-terminated. */
function goJson(v: unknown): string {
  const text = canonicalJson(v).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${text}\n`;
}

function annotationsOf(obj: unknown): JsonObject | undefined {
  if (!isJsonObject(obj) || !isJsonObject(obj.metadata)) return undefined;
  const a = obj.metadata.annotations;
  return isJsonObject(a) ? a : undefined;
}

/** The annotation's value on `obj`, when it is a non-empty string. */
export function lastAppliedOf(obj: unknown, annotation: string): string | undefined {
  const v = annotationsOf(obj)?.[annotation];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Fields an applier may take over without conflict: those of the last-applied configuration
 * whose value the live object still has. `undefined` when there is no usable annotation (absent,
 * not a JSON object, or written for another apiVersion).
 */
export function allowedConflictsFromLastApplied(opts: {
  live: unknown;
  annotation: string;
  apiVersion: string;
  schema: Schema;
  tracking?: TrackingOptions;
}): FieldSet | undefined {
  const text = lastAppliedOf(opts.live, opts.annotation);
  if (text === undefined) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  if (!isJsonObject(last) || last.apiVersion !== opts.apiVersion) return undefined;
  const set = fieldSetOf(last, opts.schema, opts.tracking);
  return set.difference(compareValues(last, opts.live, opts.schema).modified);
}

/**
 * `object` with the annotation set to the applied configuration (without the annotation, keys
 * sorted, as Kubernetes encodes it); when that would push the annotations past Kubernetes' total size limit the
 * annotation is removed instead. Mutates and returns `object`.
 */
export function setLastApplied(object: JsonObject, applied: unknown, annotation: string): JsonObject {
  const config = isJsonObject(applied) ? applied : {};
  const meta = isJsonObject(config.metadata) ? config.metadata : undefined;
  let body: JsonObject = config;
  if (meta && isJsonObject(meta.annotations) && Object.hasOwn(meta.annotations, annotation)) {
    const annotations: JsonObject = {};
    for (const [k, v] of Object.entries(meta.annotations)) if (k !== annotation) setOwn(annotations, k, v);
    body = { ...config, metadata: { ...meta, annotations } };
  }
  if (!isJsonObject(object.metadata)) object.metadata = {};
  const m = object.metadata as JsonObject;
  const annotations: JsonObject = isJsonObject(m.annotations) ? m.annotations : {};
  setOwn(annotations, annotation, goJson(body));
  let total = 0;
  for (const [k, v] of Object.entries(annotations))
    total += utf8Length(k) + (typeof v === 'string' ? utf8Length(v) : 0);
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[annotation];
  m.annotations = annotations;
  return object;
}
