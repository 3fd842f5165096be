/**
 * Schema validation of a custom resource value, in Kubernetes' order: the OpenAPI value rules
 * (type with nullable, formats, enum, pattern, bounds, lengths, item and property counts,
 * multipleOf, required, allOf/anyOf/oneOf/not, additionalProperties: false), the TypeMeta and
 * ObjectMeta of embedded resources, then `list-type` set and map uniqueness. CEL rules are
 * `evaluateRules` (cel.ts). Patterns run as ECMAScript regular expressions (regex.ts).
 */
import type { FieldError } from '@svc/api';
import { validateEmbeddedResources } from './embedded-meta.js';
import { validateListSetsAndMaps } from './list-type.js';
import { openApiErrors, openApiUpdateErrors } from './openapi-validation.js';
import type { JSONSchemaProps } from './types.js';

/**
 * The errors of `value` (at field path `path`, '' for a whole object). Messages name fields
 * relative to `value`, as Kubernetes' validator does: `spec.replicas in body must be of type
 * integer: "string"`.
 */
export function validateValue(schema: JSONSchemaProps, value: unknown, path = ''): FieldError[] {
  return [
    ...openApiErrors(schema, value, path),
    ...validateEmbeddedResources(schema, value, path),
    ...validateListSetsAndMaps(schema, value, path),
  ];
}

/**
 * The errors of an update with CRDValidationRatcheting: a value rule failing on a value that is
 * unchanged from `old` (deep-equal along object fields and `list-type: map` keys) does not fail
 * the update; list uniqueness is only enforced when the old object had no duplicates.
 */
export function validateUpdate(
  schema: JSONSchemaProps,
  change: { value: unknown; old: unknown },
  path = '',
): FieldError[] {
  const listErrors =
    validateListSetsAndMaps(schema, change.old, path).length === 0
      ? validateListSetsAndMaps(schema, change.value, path)
      : [];
  return [
    ...openApiUpdateErrors(schema, change, path),
    ...validateEmbeddedResources(schema, change.value, path),
    ...listErrors,
  ];
}
