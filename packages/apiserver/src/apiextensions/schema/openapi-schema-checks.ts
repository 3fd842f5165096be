/**
 * The checks Kubernetes' apiextensions validation makes on every node of a CRD's
 * `openAPIV3Schema` besides structurality (ValidateCustomResourceDefinitionOpenAPISchema, without
 * CEL compilation): unsupported OpenAPI fields, defaults where they are not allowed, uniqueItems,
 * additionalProperties with properties, the `list-type`/`list-map-keys`/`map-type` rules (map keys
 * required or defaulted, not nullable; set items atomic), and the static checks of validation
 * rules (rule, message, messageExpression, reason, fieldPath). Plus the root checks: nullable, and
 * the fields allowed at the root with the status subresource.
 */
import { fieldErrors, type FieldError } from '@svc/api';
import { child, index, key } from './paths.js';
import { ruleFieldPath } from './rule-field-path.js';
import { structuralConversionError } from './structural-conversion.js';
import {
  additionalPropertiesOf,
  ext,
  extKey,
  isEmbeddedResource,
  itemsOf,
  listMapKeysOf,
  rulesOf,
  type ExtensionName,
  type JSONSchemaProps,
} from './types.js';

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = ['metadata', 'kind', 'apiVersion'];
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

/** Go field names of JSONSchemaProps allowed at the root when the status subresource is enabled. */
const ALLOWED_AT_ROOT_WITH_STATUS = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

const EXT_GO_NAMES: Record<ExtensionName, string> = {
  'preserve-unknown-fields': 'XPreserveUnknownFields',
  'embedded-resource': 'XEmbeddedResource',
  'int-or-string': 'XIntOrString',
  'list-type': 'XListType',
  'list-map-keys': 'XListMapKeys',
  'map-type': 'XMapType',
  validations: 'XValidations',
};

function goFieldName(k: string): string {
  for (const [e, go] of Object.entries(EXT_GO_NAMES)) if (k === extKey(e as ExtensionName)) return go;
  if (k === '$ref') return 'Ref';
  if (k === '$schema') return 'Schema';
  if (k === 'id') return 'ID';
  return k.charAt(0).toUpperCase() + k.slice(1);
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** Checks Kubernetes makes on the root node only. */
export function rootSchemaErrors(schema: JSONSchemaProps, path: string, statusSubresource: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (statusSubresource) {
    for (const [k, v] of Object.entries(schema)) {
      if (isZero(v)) continue;
      const name = goFieldName(k);
      if (name === 'Type') {
        if (schema.type !== 'object') {
          errs.push(
            fieldErrors.invalid(
              child(path, 'type'),
              schema.type,
              'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
            ),
          );
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT_WITH_STATUS.includes(name)) {
        const allowed = `[${ALLOWED_AT_ROOT_WITH_STATUS.join(' ')}]`;
        errs.push(
          fieldErrors.invalid(
            path,
            schema,
            `only ${allowed} fields are allowed at the root of the schema if the status subresource is enabled`,
          ),
        );
        break;
      }
    }
  }
  if (schema.nullable) errs.push(fieldErrors.forbidden(child(path, 'nullable'), 'nullable cannot be true at the root'));
  return errs;
}

interface Ctx {
  allowDefaults: boolean;
  disallowReason: string;
  insideMeta: boolean;
}

function nodeErrors(x: JSONSchemaProps, path: string, ctx: Ctx): FieldError[] {
  const errs: FieldError[] = [];
  const f = (name: string) => child(path, name);
  if (x.type && !OPENAPI_V3_TYPES.includes(x.type))
    errs.push(fieldErrors.notSupported(f('type'), x.type, OPENAPI_V3_TYPES));
  if (x.default !== undefined && x.default !== null && !ctx.allowDefaults) {
    const detail = ctx.disallowReason ? `must not be set ${ctx.disallowReason}` : 'must not be set';
    errs.push(fieldErrors.forbidden(f('default'), detail));
  }
  if (x.id) errs.push(fieldErrors.forbidden(f('id'), 'id is not supported'));
  if (x.additionalItems !== undefined && x.additionalItems !== null) {
    errs.push(fieldErrors.forbidden(f('additionalItems'), 'additionalItems is not supported'));
  }
  if (Object.keys(x.patternProperties ?? {}).length > 0) {
    errs.push(fieldErrors.forbidden(f('patternProperties'), 'patternProperties is not supported'));
  }
  if (Object.keys(x.definitions ?? {}).length > 0) {
    errs.push(fieldErrors.forbidden(f('definitions'), 'definitions is not supported'));
  }
  if (x.dependencies !== undefined && x.dependencies !== null) {
    errs.push(fieldErrors.forbidden(f('dependencies'), 'dependencies is not supported'));
  }
  if (x.$ref !== undefined && x.$ref !== null) errs.push(fieldErrors.forbidden(f('$ref'), '$ref is not supported'));
  if (x.type === 'null') {
    errs.push(fieldErrors.forbidden(f('type'), 'type cannot be set to null, use nullable as an alternative'));
  }
  if (Array.isArray(x.items))
    errs.push(fieldErrors.forbidden(f('items'), 'items must be a schema object and not an array'));
  if (ctx.insideMeta && isEmbeddedResource(x)) {
    errs.push(fieldErrors.forbidden(f(extKey('embedded-resource')), 'must not be used inside of resource meta'));
  }
  return errs;
}

function walk(x: JSONSchemaProps, path: string, o: { ctx: Ctx; isRoot: boolean }): FieldError[] {
  const { ctx, isRoot } = o;
  const errs = nodeErrors(x, path, ctx);
  if (x.uniqueItems) {
    errs.push(
      fieldErrors.forbidden(
        child(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  if (x.additionalProperties !== undefined && x.additionalProperties !== null) {
    if (Object.keys(x.properties ?? {}).length > 0 && x.additionalProperties !== true) {
      errs.push(
        fieldErrors.forbidden(
          child(path, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    }
    const ap = additionalPropertiesOf(x);
    const sub = ctx.insideMeta
      ? { ...ctx, allowDefaults: false, disallowReason: 'inside additionalProperties applying to object metadata' }
      : ctx;
    if (ap) errs.push(...walk(ap, child(path, 'additionalProperties'), { ctx: sub, isRoot: false }));
  }
  for (const [k, p] of Object.entries(x.properties ?? {})) {
    let sub = ctx;
    if ((isRoot || isEmbeddedResource(x)) && META_FIELDS.includes(k)) {
      sub = { ...sub, insideMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowReason: `in top-level ${k}` };
    }
    errs.push(...walk(p, key(child(path, 'properties'), k), { ctx: sub, isRoot: false }));
  }
  if (x.not) errs.push(...walk(x.not, child(path, 'not'), { ctx, isRoot: false }));
  for (const j of ['allOf', 'oneOf', 'anyOf'] as const) {
    (x[j] ?? []).forEach((v, i) => errs.push(...walk(v, index(child(path, j), i), { ctx, isRoot: false })));
  }
  for (const [k, d] of Object.entries(x.definitions ?? {})) {
    errs.push(...walk(d, key(child(path, 'definitions'), k), { ctx, isRoot: false }));
  }
  if (Array.isArray(x.items)) {
    x.items.forEach((v, i) => errs.push(...walk(v, index(child(path, 'items'), i), { ctx, isRoot: false })));
  } else if (x.items) {
    errs.push(...walk(x.items, child(path, 'items'), { ctx, isRoot: false }));
  }
  for (const [k, d] of Object.entries(x.dependencies ?? {})) {
    if (!Array.isArray(d)) errs.push(...walk(d, key(child(path, 'dependencies'), k), { ctx, isRoot: false }));
  }
  errs.push(...extensionErrors(x, path), ...listMapKeyErrors(x, path), ...ruleErrors(x, path));
  return errs;
}

function extensionErrors(x: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const e = (name: ExtensionName) => child(path, extKey(name));
  const typePath = child(path, 'type');
  const type = x.type ?? '';
  if (x[extKey('preserve-unknown-fields')] === false) {
    errs.push(fieldErrors.invalid(e('preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  const mapType = ext(x, 'map-type');
  if (mapType !== undefined && type !== 'object') {
    const detail = `must be object if ${extKey('map-type')} is specified`;
    errs.push(type === '' ? fieldErrors.required(typePath, detail) : fieldErrors.invalid(typePath, type, detail));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(fieldErrors.notSupported(e('map-type'), mapType, ['atomic', 'granular']));
  }
  const listType = ext(x, 'list-type');
  const items = itemsOf(x);
  if (listType !== undefined && type !== 'array') {
    const detail = `must be array if ${extKey('list-type')} is specified`;
    errs.push(type === '' ? fieldErrors.required(typePath, detail) : fieldErrors.invalid(typePath, type, detail));
  } else if (listType === 'set' && items) {
    const detail = `must be atomic as item of a list with ${extKey('list-type')}=set`;
    const itemsPath = child(path, 'items');
    const itemListType = ext(items, 'list-type');
    if (items.type === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      errs.push(fieldErrors.invalid(child(itemsPath, extKey('list-type')), itemListType, detail));
    } else if (items.type === 'object' && ext(items, 'map-type') !== 'atomic') {
      errs.push(fieldErrors.invalid(child(itemsPath, extKey('map-type')), itemListType ?? null, detail));
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) {
    errs.push(fieldErrors.notSupported(e('list-type'), listType, ['atomic', 'set', 'map']));
  }
  const keys = listMapKeysOf(x);
  if (keys.length > 0) {
    const detail = `must be map if ${extKey('list-map-keys')} is non-empty`;
    if (listType === undefined) errs.push(fieldErrors.required(e('list-type'), detail));
    else if (listType !== 'map') errs.push(fieldErrors.invalid(e('list-type'), listType, detail));
  }
  return errs;
}

function listMapKeyErrors(x: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const listType = ext(x, 'list-type');
  const keys = listMapKeysOf(x);
  const itemsPath = child(path, 'items');
  const keysPath = child(path, extKey('list-map-keys'));
  const lt = extKey('list-type');
  if (listType === 'map') {
    if (keys.length === 0) errs.push(fieldErrors.required(keysPath, `must not be empty if ${lt} is map`));
    if (x.items === undefined) errs.push(fieldErrors.required(itemsPath, `must have a schema if ${lt} is map`));
    if (Array.isArray(x.items)) {
      errs.push(fieldErrors.invalid(itemsPath, x.items, `must only have a single schema if ${lt} is map`));
    }
    const items = itemsOf(x);
    if (items && items.type !== 'object') {
      errs.push(
        fieldErrors.invalid(
          child(itemsPath, 'type'),
          items.type ?? '',
          `must be object if parent array's ${lt} is map`,
        ),
      );
    }
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of keys) {
        const p = items.properties?.[k];
        if (!p) {
          errs.push(fieldErrors.invalid(keysPath, keys, 'entries must all be names of item properties'));
        } else if (p.type === 'array' || p.type === 'object') {
          const where = child(key(child(itemsPath, 'properties'), k), 'type');
          errs.push(fieldErrors.invalid(where, items.type, `must be a scalar type if parent array's ${lt} is map`));
        }
        if (seen.has(k)) errs.push(fieldErrors.invalid(keysPath, keys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  const items = itemsOf(x);
  if (!items || (listType !== 'set' && listType !== 'map')) return errs;
  if (items.nullable) {
    errs.push(fieldErrors.forbidden(child(itemsPath, 'nullable'), `cannot be nullable when ${lt} is ${listType}`));
  }
  if (listType === 'map') {
    const required = new Set(items.required ?? []);
    for (const k of keys) {
      const p = items.properties?.[k];
      if (!p) continue;
      const kp = key(child(itemsPath, 'properties'), k);
      const why = `this property is in ${extKey('list-map-keys')}, so it`;
      if (!required.has(k) && (p.default === undefined || p.default === null)) {
        errs.push(fieldErrors.required(child(kp, 'default'), `${why} must have a default or be a required property`));
      }
      if (p.nullable) errs.push(fieldErrors.forbidden(child(kp, 'nullable'), `${why} cannot be nullable`));
    }
  }
  return errs;
}

function ruleErrors(x: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const hasNewlines = (s: string) => /[\n\r]/.test(s);
  rulesOf(x).forEach((r, i) => {
    const rp = index(child(path, extKey('validations')), i);
    const rule = (r.rule ?? '').trim();
    const msg = (r.message ?? '').trim();
    if (rule === '') errs.push(fieldErrors.required(child(rp, 'rule'), 'rule is not specified'));
    else if ((r.message ?? '') !== '' && msg === '') {
      errs.push(fieldErrors.invalid(child(rp, 'message'), r.message, 'message must be non-empty if specified'));
    } else if (hasNewlines(msg)) {
      errs.push(fieldErrors.invalid(child(rp, 'message'), r.message, 'message must not contain line breaks'));
    } else if (hasNewlines(rule) && msg === '') {
      errs.push(fieldErrors.required(child(rp, 'message'), 'message must be specified if rule contains line breaks'));
    }
    if ((r.messageExpression ?? '') !== '' && (r.messageExpression ?? '').trim() === '') {
      errs.push(
        fieldErrors.required(child(rp, 'messageExpression'), 'messageExpression must be non-empty if specified'),
      );
    }
    if (r.reason !== undefined && r.reason !== null && !REASONS.includes(r.reason)) {
      errs.push(fieldErrors.notSupported(child(rp, 'reason'), r.reason, REASONS));
    }
    const fp = r.fieldPath ?? '';
    if (fp !== '' && fp.trim() === '') {
      errs.push(fieldErrors.invalid(child(rp, 'fieldPath'), fp, 'fieldPath must be non-empty if specified'));
    }
    if (hasNewlines(fp))
      errs.push(fieldErrors.invalid(child(rp, 'fieldPath'), fp, 'fieldPath must not contain line breaks'));
    if (fp !== '' && !structuralConversionError(x) && 'error' in ruleFieldPath(fp, x)) {
      errs.push(fieldErrors.invalid(child(rp, 'fieldPath'), fp, 'fieldPath must be a valid path'));
    }
  });
  return errs;
}

/** The non-CEL checks of every node of `schema` (the root at `path`). */
export function openApiSchemaErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  return walk(schema, path, { ctx: { allowDefaults: true, disallowReason: '', insideMeta: false }, isRoot: true });
}
