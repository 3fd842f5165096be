/**
 * Whether Kubernetes can read a schema as a structural schema at all (schema.NewStructural):
 * OpenAPI fields CRDs do not support, an array of item schemas, or
 * `preserve-unknown-fields: false` anywhere make it fail with this message.
 */
import { additionalPropertiesOf, extKey, itemsOf, type JSONSchemaProps } from './types.js';

export function structuralConversionError(x: JSONSchemaProps): string | undefined {
  const unsupported: [keyof JSONSchemaProps, string][] = [
    ['id', 'id'],
    ['$schema', 'schema'],
    ['$ref', '$ref'],
    ['patternProperties', 'patternProperties'],
    ['dependencies', 'dependencies'],
    ['additionalItems', 'additionalItems'],
    ['definitions', 'definitions'],
  ];
  for (const [f, name] of unsupported) {
    const v = x[f];
    const set = v !== undefined && v !== null && v !== '' && !(typeof v === 'object' && Object.keys(v).length === 0);
    if (set || (f === 'additionalItems' && v !== undefined && v !== null)) {
      return `OpenAPIV3Schema '${name}' is not supported`;
    }
  }
  if (Array.isArray(x.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  if (x[extKey('preserve-unknown-fields')] === false) {
    return `internal error: '${extKey('preserve-unknown-fields')}' must be true or undefined`;
  }
  const subs = [
    itemsOf(x),
    additionalPropertiesOf(x),
    x.not,
    ...Object.values(x.properties ?? {}),
    ...(x.allOf ?? []),
    ...(x.anyOf ?? []),
    ...(x.oneOf ?? []),
  ];
  for (const sub of subs) {
    const err = sub && structuralConversionError(sub);
    if (err) return err;
  }
  return undefined;
}
