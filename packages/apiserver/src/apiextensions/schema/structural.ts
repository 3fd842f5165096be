/**
 * Kubernetes' structural-schema rules for a CRD's `openAPIV3Schema` (apiextensions-apiserver
 * schema.ValidateStructural), and `structuralErrors`, which adds the CRD-level schema checks of
 * apiextensions validation in Kubernetes' order: the structural errors (sorted by message) or,
 * when there are none, the errors of the defaults; then the OpenAPI schema checks
 * (openapi-schema-checks.ts); last, only when nothing else was found, why the schema cannot be
 * read as a structural schema. The root checks (nullable, status subresource) come first, as in
 * Kubernetes. CEL compilation errors are `celErrors` (cel.ts).
 */
import { fieldErrorMessage, fieldErrors, naming, type FieldError } from '@svc/api';
import { defaultErrors } from './default-checks.js';
import { openApiSchemaErrors, rootSchemaErrors } from './openapi-schema-checks.js';
import { structuralConversionError } from './structural-conversion.js';
import { child, index, key } from './paths.js';
import { compilePattern } from './regex.js';
import {
  additionalPropertiesOf,
  extKey,
  isEmbeddedResource,
  isIntOrString,
  itemsOf,
  preservesUnknownFields,
  type ExtensionName,
  type JSONSchemaProps,
} from './types.js';

type Level = 'root' | 'item' | 'field';

export interface StructuralOptions {
  /** The version has the status subresource: only some fields are allowed at the root. */
  statusSubresource?: boolean;
}

/** Every field of JSONSchemaProps, and how Kubernetes' structural conversion sees it. */
const KNOWN_FIELDS = [
  'type',
  'format',
  'title',
  'description',
  'default',
  'enum',
  'nullable',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'properties',
  'additionalProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
] as const;

const EXTENSIONS: ExtensionName[] = [
  'preserve-unknown-fields',
  'embedded-resource',
  'int-or-string',
  'list-type',
  'list-map-keys',
  'map-type',
  'validations',
];

/** Whether a field is unset as Go's structural schema sees it (false, '' and null are unset). */
function unset(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === '';
}

/** A node with nothing but `type: <type>` (the int-or-string anyOf pattern). */
function isBareType(x: JSONSchemaProps, type: string): boolean {
  if (x.type !== type) return false;
  const fields = KNOWN_FIELDS.filter((f) => f !== 'type').map((f) => x[f]);
  return fields.every(unset) && EXTENSIONS.every((e) => unset(x[extKey(e)]));
}

function isIntOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  return anyOf?.length === 2 && isBareType(anyOf[0] ?? {}, 'integer') && isBareType(anyOf[1] ?? {}, 'string');
}

function extPath(path: string, name: ExtensionName): string {
  return child(path, extKey(name));
}

function invariants(x: JSONSchemaProps, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const items = itemsOf(x);
  if (x.type === 'array' && !items) errs.push(fieldErrors.required(child(path, 'items'), 'must be specified'));
  if (items) errs.push(...invariants(items, 'item', child(path, 'items')));
  for (const [k, v] of Object.entries(x.properties ?? {})) {
    errs.push(...invariants(v, 'field', key(child(path, 'properties'), k)));
  }
  if (x.additionalProperties !== undefined && x.additionalProperties !== null) {
    if (lvl === 'root')
      errs.push(fieldErrors.forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    const ap = additionalPropertiesOf(x);
    if (ap) errs.push(...invariants(ap, 'field', child(path, 'additionalProperties')));
  }
  errs.push(...extensionErrors(x, path));
  const skipAnyOf = isIntOrStringAnyOf(x.anyOf);
  const skipFirstAllOfAnyOf = (x.allOf?.length ?? 0) >= 1 && isIntOrStringAnyOf(x.allOf?.[0]?.anyOf);
  errs.push(...valueValidationErrors(x, { skipAnyOf, skipFirstAllOfAnyOf, path }));
  errs.push(...typeErrors(x, lvl, path));
  errs.push(...metaErrors(x, lvl, path));
  if (isEmbeddedResource(x) && !preservesUnknownFields(x) && Object.keys(x.properties ?? {}).length === 0) {
    const p = naming().schemaExtensionPrefix;
    errs.push(
      fieldErrors.required(
        child(path, 'properties'),
        `must not be empty if ${p}embedded-resource is true without ${p}preserve-unknown-fields`,
      ),
    );
  }
  return errs;
}

function extensionErrors(x: JSONSchemaProps, path: string): FieldError[] {
  if (!isIntOrString(x)) return [];
  const errs: FieldError[] = [];
  const detail = `must be false if ${extKey('int-or-string')} is true`;
  if (preservesUnknownFields(x)) errs.push(fieldErrors.invalid(extPath(path, 'preserve-unknown-fields'), true, detail));
  if (isEmbeddedResource(x)) errs.push(fieldErrors.invalid(extPath(path, 'embedded-resource'), true, detail));
  return errs;
}

function typeErrors(x: JSONSchemaProps, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = x.type ?? '';
  const typePath = child(path, 'type');
  if (isEmbeddedResource(x) && type !== 'object') {
    const detail = `must be object if ${extKey('embedded-resource')} is true`;
    errs.push(type === '' ? fieldErrors.required(typePath, detail) : fieldErrors.invalid(typePath, type, detail));
  } else if (type === '' && !isIntOrString(x) && !preservesUnknownFields(x)) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' };
    errs.push(fieldErrors.required(typePath, `must not be empty ${where[lvl]}`));
  }
  if (isEmbeddedResource(x) && x.additionalProperties !== undefined && x.additionalProperties !== null) {
    errs.push(
      fieldErrors.forbidden(
        child(path, 'additionalProperties'),
        `must not be used if ${extKey('embedded-resource')} is set`,
      ),
    );
  }
  if (lvl === 'root' && type !== '' && type !== 'object') {
    errs.push(fieldErrors.invalid(typePath, type, 'must be object at the root'));
  }
  return errs;
}

function metaErrors(x: JSONSchemaProps, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const checkMeta = lvl === 'root' || isEmbeddedResource(x);
  const props = child(path, 'properties');
  for (const f of ['kind', 'apiVersion']) {
    const p = x.properties?.[f];
    if (p && checkMeta && p.type !== 'string') {
      errs.push(fieldErrors.invalid(child(key(props, f), 'type'), p.type ?? '', 'must be string'));
    }
  }
  const meta = x.properties?.metadata;
  if (!meta) return errs;
  const metaPath = key(props, 'metadata');
  if (checkMeta && meta.type !== 'object') {
    errs.push(fieldErrors.invalid(child(metaPath, 'type'), meta.type ?? '', 'must be object'));
  }
  if (lvl === 'root' && !isBareRootMetadata(meta)) {
    errs.push(
      fieldErrors.forbidden(
        metaPath,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
  return errs;
}

/** Root metadata may restrict `name` and `generateName` only (its type and default aside). */
function isBareRootMetadata(meta: JSONSchemaProps): boolean {
  const names = meta.properties ? Object.keys(meta.properties) : undefined;
  const onlyNames = names !== undefined && names.length > 0 && names.every((n) => n === 'name' || n === 'generateName');
  if (names !== undefined && !onlyNames) return false;
  const rest = KNOWN_FIELDS.filter((f) => f !== 'type' && f !== 'default' && f !== 'properties');
  return rest.every((f) => unset(meta[f])) && EXTENSIONS.every((e) => unset(meta[extKey(e)]));
}

interface VvOpts {
  skipAnyOf: boolean;
  skipFirstAllOfAnyOf: boolean;
  path: string;
}

/** The value validations of a node: their nested schemas, and the pattern. */
function valueValidationErrors(x: JSONSchemaProps, o: VvOpts): FieldError[] {
  const errs: FieldError[] = [];
  if (!o.skipAnyOf) {
    (x.anyOf ?? []).forEach((v, i) =>
      errs.push(...nestedErrors(v, { skipAnyOf: false, path: index(child(o.path, 'anyOf'), i) })),
    );
  }
  (x.allOf ?? []).forEach((v, i) => {
    const skipAnyOf = o.skipFirstAllOfAnyOf && i === 0;
    errs.push(...nestedErrors(v, { skipAnyOf, path: index(child(o.path, 'allOf'), i) }));
  });
  (x.oneOf ?? []).forEach((v, i) =>
    errs.push(...nestedErrors(v, { skipAnyOf: false, path: index(child(o.path, 'oneOf'), i) })),
  );
  if (x.not) errs.push(...nestedErrors(x.not, { skipAnyOf: false, path: child(o.path, 'not') }));
  if (x.pattern) {
    const re = compilePattern(x.pattern);
    if (re instanceof Error) {
      errs.push(
        fieldErrors.invalid(
          child(o.path, 'pattern'),
          x.pattern,
          `must be a valid regular expression, but isn't: ${re.message}`,
        ),
      );
    }
  }
  return errs;
}

const NESTED_FORBIDDEN: [keyof JSONSchemaProps, string][] = [
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['nullable', 'must be false to be structural'],
];

const NESTED_FORBIDDEN_EXT: [ExtensionName, string][] = [
  ['preserve-unknown-fields', 'must be false to be structural'],
  ['embedded-resource', 'must be false to be structural'],
  ['int-or-string', 'must be false to be structural'],
  ['list-map-keys', 'must be empty to be structural'],
  ['list-type', 'must be undefined to be structural'],
  ['map-type', 'must be undefined to be structural'],
  ['validations', 'must be empty to be structural'],
];

/** A schema under allOf/anyOf/oneOf/not: value validations only. */
function nestedErrors(v: JSONSchemaProps, o: { skipAnyOf: boolean; path: string }): FieldError[] {
  const errs = valueValidationErrors(v, { skipAnyOf: o.skipAnyOf, skipFirstAllOfAnyOf: false, path: o.path });
  const items = itemsOf(v);
  if (items) errs.push(...nestedErrors(items, { skipAnyOf: false, path: child(o.path, 'items') }));
  for (const [k, p] of Object.entries(v.properties ?? {})) {
    errs.push(...nestedErrors(p, { skipAnyOf: false, path: key(child(o.path, 'properties'), k) }));
  }
  if (v.type) errs.push(fieldErrors.forbidden(child(o.path, 'type'), 'must be empty to be structural'));
  const ap = additionalPropertiesOf(v);
  if (ap || v.additionalProperties === true) {
    errs.push(fieldErrors.forbidden(child(o.path, 'additionalProperties'), 'must be undefined to be structural'));
  }
  for (const [f, detail] of NESTED_FORBIDDEN) {
    if (!unset(v[f])) errs.push(fieldErrors.forbidden(child(o.path, f), detail));
  }
  for (const [e, detail] of NESTED_FORBIDDEN_EXT) {
    const val = v[extKey(e)];
    const set = Array.isArray(val)
      ? val.length > 0
      : e === 'list-type' || e === 'map-type'
        ? val !== undefined && val !== null
        : !unset(val);
    if (set) errs.push(fieldErrors.forbidden(extPath(o.path, e), detail));
  }
  if (v.properties?.metadata) {
    errs.push(
      fieldErrors.forbidden(key(child(o.path, 'properties'), 'metadata'), 'must not be specified in a nested context'),
    );
  }
  return errs;
}

/** Every property, item and additionalProperties a value validation names exists structurally (root only, as Kubernetes). */
function completenessErrors(x: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const visit = (v: JSONSchemaProps, s: JSONSchemaProps | undefined, paths: { s: string; v: string }): void => {
    if (!s) {
      errs.push(fieldErrors.required(paths.s, `because it is defined in ${paths.v}`));
      return;
    }
    junctors(v, s, paths);
    const vItems = itemsOf(v);
    if (vItems) visit(vItems, itemsOf(s), { s: child(paths.s, 'items'), v: child(paths.v, 'items') });
    for (const [k, vp] of Object.entries(v.properties ?? {})) {
      const sp = s.properties?.[k];
      const sPath = key(child(paths.s, 'properties'), k);
      const vPath = key(child(paths.v, 'properties'), k);
      if (!sp) errs.push(fieldErrors.required(sPath, `because it is defined in ${vPath}`));
      else visit(vp, sp, { s: sPath, v: vPath });
    }
  };
  const junctors = (v: JSONSchemaProps, s: JSONSchemaProps, paths: { s: string; v: string }): void => {
    if (v.not) visit(v.not, s, { s: paths.s, v: child(paths.v, 'not') });
    for (const j of ['allOf', 'anyOf', 'oneOf'] as const) {
      (v[j] ?? []).forEach((n, i) => visit(n, s, { s: paths.s, v: index(child(paths.v, j), i) }));
    }
  };
  junctors(x, x, { s: path, v: path });
  return errs;
}

/** Kubernetes' ValidateStructural: invariants and completeness, sorted by message. */
export function structuralSchemaErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  const errs = [...invariants(schema, 'root', path), ...completenessErrors(schema, path)];
  return errs
    .map((e) => ({ e, m: fieldErrorMessage(e) }))
    .sort((a, b) => (a.m < b.m ? -1 : a.m > b.m ? 1 : 0))
    .map(({ e }) => e);
}

/** The groups of schema errors, as Kubernetes computes them. */
export interface SchemaErrorParts {
  /** Root-only checks (nullable, status subresource). */
  root: FieldError[];
  /** Structural errors, else the errors of the defaults; Kubernetes compiles rules only when empty. */
  structural: FieldError[];
  /** The per-node OpenAPI schema checks. */
  checks: FieldError[];
  /** Why the schema cannot be read as structural, reported only when nothing else is. */
  conversion: FieldError[];
}

export function schemaErrorParts(
  schema: JSONSchemaProps,
  path: string,
  opts: StructuralOptions = {},
): SchemaErrorParts {
  const root = rootSchemaErrors(schema, path, opts.statusSubresource ?? false);
  const conversion = structuralConversionError(schema);
  let structural: FieldError[] = [];
  if (!conversion) {
    structural = structuralSchemaErrors(schema, path);
    if (structural.length === 0) structural = defaultErrors(schema, path);
  }
  const checks = openApiSchemaErrors(schema, path);
  const none = root.length + structural.length + checks.length === 0;
  return {
    root,
    structural,
    checks,
    conversion: none && conversion ? [fieldErrors.invalid(path, '', conversion)] : [],
  };
}

/**
 * Errors of a CRD version's `openAPIV3Schema` at `path` (e.g.
 * `spec.versions[0].schema.openAPIV3Schema`), without CEL compilation.
 */
export function structuralErrors(schema: JSONSchemaProps, path: string, opts: StructuralOptions = {}): FieldError[] {
  const p = schemaErrorParts(schema, path, opts);
  return [...p.root, ...p.structural, ...p.checks, ...p.conversion];
}
