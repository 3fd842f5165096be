/**
 * Defaults in a CRD schema must be pruned and valid (Kubernetes' defaulting.ValidateDefaults):
 * each `default` of a property or item schema (not below additionalProperties) must keep no field
 * the schema would prune (`must not have unknown fields`), an embedded resource's default must
 * have valid TypeMeta/ObjectMeta, and it must pass the node's value validation, then its CEL
 * rules (evaluated as an update from itself and as a create). Defaults inside the metadata of an
 * embedded resource are checked against the node's schema only (Kubernetes checks them inside a
 * surrounding object).
 */
import { fieldErrors, type FieldError } from '@svc/api';
import { cloneJson, isJsonObject, jsonEqual } from '@svc/machinery';
import { runRules } from './cel.js';
import { embeddedResourceErrors, validateEmbeddedResources } from './embedded-meta.js';
import { openApiErrors } from './openapi-validation.js';
import { child, key } from './paths.js';
import { pruneUnknownFields } from './prune.js';
import { isEmbeddedResource, itemsOf, type JSONSchemaProps } from './types.js';

const META_FIELDS = ['apiVersion', 'kind', 'metadata'];

interface Walk {
  path: string;
  /** The schema of the enclosing resource (the root, or the nearest embedded resource). */
  resource: JSONSchemaProps;
  /** Inside the apiVersion, kind or metadata of a resource. */
  insideMeta: boolean;
}

function check(s: JSONSchemaProps, w: Walk): FieldError[] {
  const errs: FieldError[] = [];
  const embedded = isEmbeddedResource(s) || s === w.resource;
  const resource = isEmbeddedResource(s) ? s : w.resource;
  const insideMeta = isEmbeddedResource(s) ? false : w.insideMeta;
  const d = s.default;
  if (d !== undefined && d !== null) errs.push(...defaultValueErrors(s, d, { ...w, resource, insideMeta, embedded }));
  const items = itemsOf(s);
  if (items) errs.push(...check(items, { path: child(w.path, 'items'), resource, insideMeta }));
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const sub = {
      path: key(child(w.path, 'properties'), k),
      resource,
      insideMeta: insideMeta || (embedded && META_FIELDS.includes(k)),
    };
    errs.push(...check(p, sub));
  }
  return errs;
}

function defaultValueErrors(s: JSONSchemaProps, d: unknown, w: Walk & { embedded: boolean }): FieldError[] {
  const errs: FieldError[] = [];
  const path = child(w.path, 'default');
  if (!w.insideMeta) {
    const pruned = cloneJson(d);
    pruneUnknownFields(pruned, s, w.embedded);
    if (!jsonEqual(pruned, d)) errs.push(fieldErrors.invalid(path, d, 'must not have unknown fields'));
    const self = s === w.resource && !isEmbeddedResource(s) && isJsonObject(d) ? embeddedResourceErrors(d, path) : [];
    const meta = [...self, ...validateEmbeddedResources(s, d, path)];
    if (meta.length > 0) return [...errs, ...meta];
  }
  const value = openApiErrors(s, d, path);
  if (value.length > 0) return [...errs, ...value];
  const resourceRoot = s === w.resource;
  const asUpdate = runRules(s, { value: d, old: d, resourceRoot }, { path, correlate: false });
  if (asUpdate.length > 0) return [...errs, ...asUpdate];
  return [...errs, ...runRules(s, { value: d, resourceRoot }, { path, correlate: false })];
}

/** Errors of the defaults in `schema` (a version's `openAPIV3Schema` at `path`). */
export function defaultErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  return check(schema, { path, resource: schema, insideMeta: false });
}
