/**
 * The OpenAPI v3 subset a CustomResourceDefinition's `openAPIV3Schema` uses (Kubernetes'
 * apiextensions/v1 JSONSchemaProps), as plain JSON. Vendor extensions are spelled with the
 * naming's prefix (`x-svc-*`, or `x-kubernetes-*` under `--naming=kubernetes`); read them with
 * `ext(schema, 'list-type')`, never by spelling the key.
 */
import { naming } from '@svc/api';

/** One `x-…-validations` entry: a CEL rule on the value at this node. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate. */
  reason?: string;
  /** A JSON path relative to this node where the error is reported (`.spec.foo`, `['key']`). */
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface ExternalDocumentation {
  description?: string;
  url?: string;
}

/** The extensions, by their name without the prefix, and the JSON each holds. */
export interface SchemaExtensions {
  'preserve-unknown-fields': boolean;
  'embedded-resource': boolean;
  'int-or-string': boolean;
  'list-type': string;
  'list-map-keys': string[];
  'map-type': string;
  validations: ValidationRule[];
}

export type ExtensionName = keyof SchemaExtensions;

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  nullable?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  /** A schema; an array of schemas is not allowed in a CRD (reported by the schema checks). */
  items?: JSONSchemaProps | JSONSchemaProps[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  example?: unknown;
  externalDocs?: ExternalDocumentation;
  /** Fields OpenAPI has and CRDs forbid; present only so the checks can name them. */
  id?: string;
  $schema?: string;
  $ref?: string;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  /** The vendor extensions, under the naming's prefix. */
  [extension: `x-${string}`]: unknown;
}

/** The full key of an extension under the current naming: `x-svc-list-type`. */
export function extKey(name: ExtensionName): `x-${string}` {
  return `${naming().schemaExtensionPrefix}${name}` as `x-${string}`;
}

/** The value of extension `name` on `schema`, or undefined when it is not set. */
export function ext<K extends ExtensionName>(schema: JSONSchemaProps, name: K): SchemaExtensions[K] | undefined {
  const v = schema[extKey(name)];
  return v === undefined || v === null ? undefined : (v as SchemaExtensions[K]);
}

/** `x-…-preserve-unknown-fields: true`. */
export function preservesUnknownFields(schema: JSONSchemaProps): boolean {
  return ext(schema, 'preserve-unknown-fields') === true;
}

export function isEmbeddedResource(schema: JSONSchemaProps): boolean {
  return ext(schema, 'embedded-resource') === true;
}

export function isIntOrString(schema: JSONSchemaProps): boolean {
  return ext(schema, 'int-or-string') === true;
}

/** The item schema when `items` is a single schema. */
export function itemsOf(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const items = schema.items;
  return items === undefined || Array.isArray(items) ? undefined : items;
}

/** The schema of additional properties when it is a schema (not a boolean). */
export function additionalPropertiesOf(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const ap = schema.additionalProperties;
  return typeof ap === 'object' && ap !== null ? ap : undefined;
}

/** The validation rules of a node (empty when none). */
export function rulesOf(schema: JSONSchemaProps): ValidationRule[] {
  const v = ext(schema, 'validations');
  return Array.isArray(v) ? v : [];
}

/** The map keys of a `list-type: map` list (empty when none). */
export function listMapKeysOf(schema: JSONSchemaProps): string[] {
  const keys = ext(schema, 'list-map-keys');
  return Array.isArray(keys) ? keys : [];
}
