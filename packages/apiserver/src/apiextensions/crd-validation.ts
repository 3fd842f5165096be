/**
 * Validation of CustomResourceDefinitions, with Kubernetes 1.32's rules, field paths and
 * messages (apiextensions `ValidateCustomResourceDefinition` and `...Update`).
 *
 * Contract:
 * - Input is a v1 CRD after the strategy's prepare step; v1 defaults Kubernetes applies before
 *   validating (names.singular, names.listKind, conversion None, a service's port 443,
 *   status.storedVersions = the storage version) are assumed where absent. Nothing is mutated.
 * - Paths are Kubernetes', which come from its internal form of the CRD: a field identical in
 *   every version (schema, subresources, additionalPrinterColumns, selectableFields) is validated
 *   once under `spec.validation`, `spec.subresources`, `spec.additionalPrinterColumns`,
 *   `spec.selectableFields`; otherwise under `spec.versions[i]`. Webhook conversion fields are
 *   named `spec.conversion.webhookClientConfig` and `spec.conversion.conversionReviewVersions`,
 *   a printer column's path `JSONPath`, and the first version is also checked as `spec.version`.
 * - Errors come in Kubernetes' order. A schema's checks are the schema engine's
 *   (`crdSchemaErrors`: structural rules, defaults, OpenAPI checks, CEL compilation), told
 *   whether the version has the status subresource.
 * - Metadata rules every type shares (name format, labels, immutable name) are the generic
 *   store's; only the CRD's own name rule (`<plural>.<group>`) is here.
 */
import { X509Certificate } from 'node:crypto';
import { fieldErrors, naming, type FieldError } from '@svc/api';
import { isDns1035Label, isDns1123Subdomain, jsonEqual, utf8Length } from '@svc/machinery';
import {
  isConditionTrue,
  type Crd,
  type CrdConversion,
  type CrdNames,
  type CrdPrinterColumn,
  type CrdSpec,
  type CrdVersion,
  type CrdWebhookClientConfig,
} from './crd.js';
import { parseGoUrl, validateWebhookService, validateWebhookUrl } from '../webhook/validation.js';
import { crdSchemaErrors, type JSONSchemaProps } from './schema/index.js';
import { ruleFieldPath } from './schema/rule-field-path.js';

/** Kubernetes' validationOptions that differ between create and update. */
interface Options {
  /** The conversion review versions must name one this server understands (v1, v1beta1). */
  requireRecognizedConversionReviewVersion: boolean;
  /** spec.scope and spec.names.kind may not change (the CRD was Established). */
  requireImmutableNames: boolean;
  /** Every version needs a schema (false only when the stored CRD already lacked one). */
  requireOpenAPISchema: boolean;
  /** A conversion webhook's caBundle is not checked (create, not yet Established, or already invalid). */
  allowInvalidCaBundle: boolean;
}

const CREATE_OPTIONS: Options = {
  requireRecognizedConversionReviewVersion: true,
  requireImmutableNames: false,
  requireOpenAPISchema: true,
  allowInvalidCaBundle: true,
};

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const MAX_SELECTABLE_FIELDS = 8;
const MAX_DEPRECATION_WARNING = 256;

/** Errors of a CustomResourceDefinition being created. */
export function validateCrd(crd: Crd): FieldError[] {
  const spec = defaulted(crd.spec);
  return [
    ...nameErrors(crd, spec),
    ...specErrors(spec, CREATE_OPTIONS),
    ...namesErrors(crd.status?.acceptedNames, 'status.acceptedNames'),
    ...storedVersionsErrors(crd, spec),
    ...apiApprovalErrors({ crd, group: spec.group }),
    ...preserveUnknownFieldsErrors(spec, undefined),
  ];
}

/** Errors of an update of `old` to `crd` (the spec; a status update is validated elsewhere). */
export function validateCrdUpdate(crd: Crd, old: Crd): FieldError[] {
  const spec = defaulted(crd.spec);
  const oldSpec = defaulted(old.spec);
  const opts: Options = {
    requireRecognizedConversionReviewVersion: hasAcceptedReviewVersionOrNone(oldSpec.conversion),
    requireImmutableNames: isConditionTrue(old, 'Established'),
    requireOpenAPISchema: oldSpec.versions.every((v) => hasSchema(v)),
    allowInvalidCaBundle: allowInvalidCaBundle(old, oldSpec),
  };
  const errs = specErrors(spec, opts);
  if (opts.requireImmutableNames) {
    errs.push(...immutable(spec.scope, oldSpec.scope, 'spec.scope'));
    errs.push(...immutable(spec.names.kind, oldSpec.names.kind, 'spec.names.kind'));
  }
  errs.push(...immutable(spec.group, oldSpec.group, 'spec.group'));
  errs.push(...immutable(spec.names.plural, oldSpec.names.plural, 'spec.names.plural'));
  return [
    ...errs,
    ...namesErrors(crd.status?.acceptedNames, 'status.acceptedNames'),
    ...storedVersionsErrors(crd, spec),
    ...apiApprovalErrors({ crd, group: spec.group, old }),
    ...preserveUnknownFieldsErrors(spec, oldSpec),
  ];
}

/** The spec with v1 defaults where absent (a copy; parts of it may be shared with the input). */
function defaulted(input: CrdSpec | undefined): CrdSpec {
  const s: Partial<CrdSpec> = input ?? {};
  const names: CrdNames = { ...(s.names ?? { plural: '', kind: '' }) };
  names.plural ??= '';
  names.kind ??= '';
  if (!names.singular) names.singular = names.kind.toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  let conversion = s.conversion ?? { strategy: 'None' };
  const service = conversion.webhook?.clientConfig?.service;
  if (conversion.webhook?.clientConfig && service && service.port === undefined) {
    conversion = {
      ...conversion,
      webhook: {
        ...conversion.webhook,
        clientConfig: { ...conversion.webhook.clientConfig, service: { ...service, port: 443 } },
      },
    };
  }
  return {
    ...s,
    group: s.group ?? '',
    scope: s.scope ?? '',
    names,
    // A null entry decodes as an empty version in Kubernetes (then fails its own checks).
    versions: Array.isArray(s.versions)
      ? s.versions.map((v) => (v && typeof v === 'object' ? v : ({} as CrdVersion)))
      : [],
    conversion,
  };
}

function immutable(value: unknown, old: unknown, path: string): FieldError[] {
  return jsonEqual(value ?? null, old ?? null) ? [] : [fieldErrors.invalid(path, value, 'field is immutable')];
}

function nameErrors(crd: Crd, spec: CrdSpec): FieldError[] {
  const name = crd.metadata.name;
  if (!name || name === `${spec.names.plural}.${spec.group}`) return [];
  return [fieldErrors.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group')];
}

/**
 * Where Kubernetes' internal form puts each per-version field: `true` when the field is
 * identical in every version and so validated once at the top level. Selectable fields move
 * only with the schema they point into (Kubernetes 1.32 also moves them alone and then rejects
 * a valid CRD, kubernetes/kubernetes#140689; we follow the fix).
 */
interface Layout {
  schema: boolean;
  subresources: boolean;
  columns: boolean;
  selectableFields: boolean;
}

function layoutOf(versions: readonly CrdVersion[]): Layout {
  const first = versions[0];
  const same = (pick: (v: CrdVersion) => unknown): boolean =>
    first !== undefined && versions.every((v) => jsonEqual(pick(v) ?? null, pick(first) ?? null));
  const list = (l: readonly unknown[] | undefined): unknown => (l && l.length > 0 ? l : undefined);
  const schema = same((v) => v.schema);
  return {
    schema,
    subresources: same((v) => v.subresources),
    columns: same((v) => list(v.additionalPrinterColumns)),
    selectableFields: schema && same((v) => list(v.selectableFields)),
  };
}

function hasStatus(v: CrdVersion): boolean {
  return v.subresources?.status !== undefined && v.subresources.status !== null;
}

function hasSchema(v: CrdVersion): boolean {
  return v.schema?.openAPIV3Schema !== undefined && v.schema.openAPIV3Schema !== null;
}

function specErrors(spec: CrdSpec, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.group === '') errs.push(fieldErrors.required('spec.group'));
  else {
    const msgs = isDns1123Subdomain(spec.group);
    if (msgs.length > 0) errs.push(fieldErrors.invalid('spec.group', spec.group, msgs.join(',')));
    else if (!spec.group.includes('.'))
      errs.push(fieldErrors.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  errs.push(...enumErrors({ path: 'spec.scope', value: spec.scope, allowed: ['Cluster', 'Namespaced'] }));

  const versions = spec.versions;
  const preserveUnknown = spec.preserveUnknownFields === true;
  if (opts.requireOpenAPISchema) {
    versions.forEach((v, i) => {
      if (!hasSchema(v))
        errs.push(fieldErrors.required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    });
  } else if (!preserveUnknown) {
    versions.forEach((v, i) => {
      if (v.served && !hasSchema(v))
        errs.push(
          fieldErrors.required(`spec.versions[${i}].schema.openAPIV3Schema`, 'because otherwise all fields are pruned'),
        );
    });
  }
  if (
    preserveUnknown &&
    versions.some((v) => hasSchema(v) && schemaHas(schemaOf(v), (s) => s.default !== undefined && s.default !== null))
  )
    errs.push(
      fieldErrors.invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'),
    );

  const layout = layoutOf(versions);
  const anyStatus = versions.some((v) => hasStatus(v));
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    if (v.storage) storage++;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    const msgs = isDns1035Label(v.name ?? '');
    if (msgs.length > 0) errs.push(fieldErrors.invalid(`spec.versions[${i}].name`, v.name, msgs.join(',')));
    errs.push(...versionErrors({ version: v, path: `spec.versions[${i}]`, layout }));
  });
  if (!unique) errs.push(fieldErrors.invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1)
    errs.push(
      fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'),
    );
  const firstName = versions[0]?.name;
  if (firstName) {
    // Kubernetes' internal form also carries the first version's name as spec.version.
    const msgs = isDns1035Label(firstName);
    if (msgs.length > 0) errs.push(fieldErrors.invalid('spec.version', firstName, msgs.join(',')));
  }

  const names = spec.names;
  if (!names.plural) errs.push(fieldErrors.required('spec.names.plural'));
  if (!names.singular) errs.push(fieldErrors.required('spec.names.singular'));
  if (!names.kind) errs.push(fieldErrors.required('spec.names.kind'));
  if (!names.listKind) errs.push(fieldErrors.required('spec.names.listKind'));
  errs.push(...namesErrors(names, 'spec.names'));

  const first = versions[0];
  if (first && layout.schema)
    errs.push(...schemaErrors({ schema: first.schema, path: 'spec.validation', statusEnabled: anyStatus }));
  if (first && layout.subresources) errs.push(...subresourcesErrors(first.subresources, 'spec.subresources'));
  if (first && layout.columns)
    errs.push(...columnsErrors(first.additionalPrinterColumns, 'spec.additionalPrinterColumns'));
  if (first && layout.selectableFields && (first.selectableFields?.length ?? 0) > 0) {
    errs.push(
      ...(hasSchema(first)
        ? selectableFieldsErrors(first.selectableFields ?? [], schemaOf(first), 'spec.selectableFields')
        : [
            fieldErrors.invalid(
              'spec.selectableFields',
              '',
              'selectableFields may only be set when validations.schema is included',
            ),
          ]),
    );
  }

  const conversion = spec.conversion;
  if (conversion && conversion.strategy !== 'None' && preserveUnknown)
    errs.push(
      fieldErrors.invalid(
        'spec.conversion.strategy',
        conversion.strategy,
        'must be None if spec.preserveUnknownFields is true',
      ),
    );
  errs.push(...conversionErrors(conversion, opts));
  return errs;
}

function schemaOf(v: CrdVersion): JSONSchemaProps {
  return (v.schema?.openAPIV3Schema ?? {}) as JSONSchemaProps;
}

function enumErrors(o: { path: string; value: string; allowed: string[] }): FieldError[] {
  if (o.value === '') return [fieldErrors.required(o.path)];
  return o.allowed.includes(o.value) ? [] : [fieldErrors.notSupported(o.path, o.value, o.allowed)];
}

function versionErrors(o: { version: CrdVersion; path: string; layout: Layout }): FieldError[] {
  const { version: v, path, layout } = o;
  const errs = deprecationWarningErrors(v).map((m) =>
    fieldErrors.invalid(`${path}.deprecationWarning`, v.deprecationWarning, m),
  );
  const statusEnabled = hasStatus(v);
  if (!layout.schema) errs.push(...schemaErrors({ schema: v.schema, path: `${path}.schema`, statusEnabled }));
  if (!layout.subresources) errs.push(...subresourcesErrors(v.subresources, `${path}.subresources`));
  if (!layout.columns) errs.push(...columnsErrors(v.additionalPrinterColumns, `${path}.additionalPrinterColumns`));
  if (!layout.selectableFields && (v.selectableFields?.length ?? 0) > 0) {
    errs.push(
      ...(hasSchema(v)
        ? selectableFieldsErrors(v.selectableFields ?? [], schemaOf(v), `${path}.selectableFields`)
        : [
            fieldErrors.invalid(
              `${path}.selectableFields`,
              '',
              'selectableFields may only be set when version.schema.openAPIV3Schema is not included',
            ),
          ]),
    );
  }
  return errs;
}

function deprecationWarningErrors(v: CrdVersion): string[] {
  const w = v.deprecationWarning;
  if (!v.deprecated && w !== undefined) return ['can only be set for deprecated versions'];
  if (w === undefined) return [];
  const msgs: string[] = [];
  if (utf8Length(w) > MAX_DEPRECATION_WARNING) msgs.push(`must be <= ${MAX_DEPRECATION_WARNING} characters long`);
  if (w === '') msgs.push('must not be an empty string');
  let at = 0;
  for (const ch of w) {
    // Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) {
      msgs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${at}`);
      break;
    }
    at += utf8Length(ch);
  }
  return msgs;
}

// ---------------------------------------------------------------------------------------------
// Schemas

/** `schema` is the version's (or the shared) `schema` object; `path` names it. */
function schemaErrors(o: { schema: CrdVersion['schema']; path: string; statusEnabled: boolean }): FieldError[] {
  const root = o.schema?.openAPIV3Schema as JSONSchemaProps | undefined | null;
  if (!root) return [];
  const path = `${o.path}.openAPIV3Schema`;
  return crdSchemaErrors(root, path, { statusSubresource: o.statusEnabled });
}

/** Whether `pred` holds for `s` or any schema nested in it. */
function schemaHas(s: JSONSchemaProps | undefined, pred: (s: JSONSchemaProps) => boolean): boolean {
  if (!s || typeof s !== 'object') return false;
  if (pred(s)) return true;
  const nested: unknown[] = [
    ...(Array.isArray(s.items) ? s.items : [s.items]),
    ...(s.allOf ?? []),
    ...(s.anyOf ?? []),
    ...(s.oneOf ?? []),
    s.not,
    ...Object.values(s.properties ?? {}),
    s.additionalProperties,
    ...Object.values(s.patternProperties ?? {}),
    s.additionalItems,
    ...Object.values(s.definitions ?? {}),
    ...Object.values(s.dependencies ?? {}),
  ];
  return nested.some(
    (n) => typeof n === 'object' && n !== null && !Array.isArray(n) && schemaHas(n as JSONSchemaProps, pred),
  );
}

// ---------------------------------------------------------------------------------------------
// Subresources, printer columns, selectable fields

function subresourcesErrors(sub: CrdVersion['subresources'], path: string): FieldError[] {
  if (!sub) return [];
  const errs: FieldError[] = [];
  const status: unknown = sub.status;
  if (
    status !== undefined &&
    status !== null &&
    (typeof status !== 'object' || Array.isArray(status) || Object.keys(status).length > 0)
  ) {
    // Kubernetes' status subresource is an empty struct: it cannot decode anything else.
    errs.push(fieldErrors.invalid(`${path}.status`, status, 'must be an empty object'));
  }
  const scale = sub.scale;
  if (!scale) return errs;
  const scalePath = (o: { field: string; value: string | undefined; under: string[]; required: boolean }): void => {
    const p = `${path}.scale.${o.field}`;
    if (!o.value) {
      if (o.required) errs.push(fieldErrors.required(p));
      return;
    }
    const simple = simpleJsonPathErrors(o.value, p);
    if (simple.length > 0) errs.push(...simple);
    else if (!o.under.some((u) => o.value?.startsWith(`${u}.`)))
      errs.push(fieldErrors.invalid(p, o.value, `should be a json path under ${o.under.join(' or ')}`));
  };
  scalePath({ field: 'specReplicasPath', value: scale.specReplicasPath, under: ['.spec'], required: true });
  scalePath({ field: 'statusReplicasPath', value: scale.statusReplicasPath, under: ['.status'], required: true });
  const selector = scale.labelSelectorPath;
  if (selector) {
    const p = `${path}.scale.labelSelectorPath`;
    const simple = simpleJsonPathErrors(selector, p);
    if (simple.length > 0) errs.push(...simple);
    else if (!selector.startsWith('.spec.') && !selector.startsWith('.status.'))
      errs.push(fieldErrors.invalid(p, selector, 'should be a json path under either .spec or .status'));
  }
  return errs;
}

/** Kubernetes' validateSimpleJSONPath: only the leading '.' is checked. */
function simpleJsonPathErrors(s: string, path: string): FieldError[] {
  if (s === '') return [fieldErrors.invalid(path, s, 'must not be empty')];
  if (!s.startsWith('.')) return [fieldErrors.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function columnsErrors(columns: readonly CrdPrinterColumn[] | undefined, path: string): FieldError[] {
  return (columns ?? []).flatMap((c, i) => columnErrors(c, `${path}[${i}]`));
}

function columnErrors(c: CrdPrinterColumn, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldErrors.required(`${path}.name`));
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!c.type) errs.push(fieldErrors.required(`${path}.type`, types));
  else if (!PRINTER_COLUMN_TYPES.includes(c.type)) errs.push(fieldErrors.invalid(`${path}.type`, c.type, types));
  if (c.format && !PRINTER_COLUMN_FORMATS.includes(c.format))
    errs.push(fieldErrors.invalid(`${path}.format`, c.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  if (!c.jsonPath) errs.push(fieldErrors.required(`${path}.JSONPath`));
  else errs.push(...simpleJsonPathErrors(c.jsonPath, `${path}.JSONPath`));
  return errs;
}

function selectableFieldsErrors(
  fields: readonly { jsonPath: string }[],
  schema: JSONSchemaProps,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = `${path}[${i}].jsonPath`;
    if (!f.jsonPath) {
      errs.push(fieldErrors.required(p));
      return;
    }
    const found = selectableFieldPath(f.jsonPath, schema);
    if ('error' in found) {
      errs.push(fieldErrors.invalid(p, f.jsonPath, `is an invalid path: ${found.error}`));
      return;
    }
    if (found.path === 'metadata' || /^metadata[.[]/.test(found.path))
      errs.push(fieldErrors.invalid(p, f.jsonPath, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(found.schema.type ?? ''))
      errs.push(
        fieldErrors.invalid(
          p,
          f.jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    if (unique.has(found.path)) errs.push(fieldErrors.duplicate(p, f.jsonPath));
    else unique.add(found.path);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS)
    errs.push({
      path,
      type: 'FieldValueTooMany',
      value: unique.size,
      detail: `must have at most ${MAX_SELECTABLE_FIELDS} items`,
    });
  return errs;
}

/**
 * A selectable field's path: Kubernetes' ValidFieldPath without array notation, so a `[` where
 * a step starts is refused once the steps before it are found valid.
 */
function selectableFieldPath(
  jsonPath: string,
  schema: JSONSchemaProps,
): { path: string; schema: JSONSchemaProps } | { error: string } {
  let i = 0;
  while (i < jsonPath.length) {
    const c = jsonPath[i];
    if (c === '[') {
      const before = ruleFieldPath(jsonPath.slice(0, i), schema);
      return 'error' in before ? before : { error: 'array notation is not allowed' };
    }
    if (c !== '.') break;
    i = endOfToken(jsonPath, i + 1);
  }
  return ruleFieldPath(jsonPath, schema);
}

/** The end of the token at `start`: a single-quoted string, one delimiter, or the text up to one. */
function endOfToken(s: string, start: number): number {
  if (start >= s.length) return start;
  if (s[start] === "'") {
    let j = start + 1;
    while (j < s.length && !(s[j] === "'" && s[j - 1] !== '\\')) j++;
    return Math.min(j + 1, s.length);
  }
  if ('.[]'.includes(s[start] ?? '')) return start + 1;
  let j = start;
  while (j < s.length && !'.[]'.includes(s[j] ?? '')) j++;
  return j;
}

// ---------------------------------------------------------------------------------------------
// Names, stored versions, API approval, preserveUnknownFields

/** Kubernetes' ValidateCustomResourceDefinitionNames (for spec.names and status.acceptedNames). */
function namesErrors(names: Partial<CrdNames> | undefined, path: string): FieldError[] {
  if (!names) return [];
  const errs: FieldError[] = [];
  const label = (o: { field: string; value: string | undefined; check?: string; prefix?: string }): void => {
    if (!o.value) return;
    const msgs = isDns1035Label(o.check ?? o.value);
    if (msgs.length > 0)
      errs.push(fieldErrors.invalid(`${path}.${o.field}`, o.value, `${o.prefix ?? ''}${msgs.join(',')}`));
  };
  label({ field: 'plural', value: names.plural });
  label({ field: 'singular', value: names.singular });
  const mixed = 'may have mixed case, but should otherwise match: ';
  label({ field: 'kind', value: names.kind, check: names.kind?.toLowerCase(), prefix: mixed });
  label({ field: 'listKind', value: names.listKind, check: names.listKind?.toLowerCase(), prefix: mixed });
  (names.shortNames ?? []).forEach((n, i) => {
    const msgs = isDns1035Label(n);
    if (msgs.length > 0) errs.push(fieldErrors.invalid(`${path}.shortNames[${i}]`, n, msgs.join(',')));
  });
  if (names.kind && names.kind === names.listKind)
    errs.push(fieldErrors.invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.categories ?? []).forEach((n, i) => {
    const msgs = isDns1035Label(n);
    if (msgs.length > 0) errs.push(fieldErrors.invalid(`${path}.categories[${i}]`, n, msgs.join(',')));
  });
  return errs;
}

function storedVersionsErrors(crd: Crd, spec: CrdSpec): FieldError[] {
  const path = 'status.storedVersions';
  let stored = crd.status?.storedVersions ?? [];
  if (stored.length === 0) {
    // v1 defaulting: an empty list starts with the storage version.
    const storage = spec.versions.find((v) => v.storage);
    if (storage) stored = [storage.name];
  }
  if (stored.length === 0) return [fieldErrors.invalid(path, stored, 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const remaining = new Map<string, number>();
  stored.forEach((v, i) => remaining.set(v, i));
  for (const v of spec.versions) {
    if (v.storage && !remaining.has(v.name))
      errs.push(fieldErrors.invalid(path, stored, `must have the storage version ${v.name}`));
    remaining.delete(v.name);
  }
  for (const [v, i] of [...remaining].sort((a, b) => a[1] - b[1]))
    errs.push(fieldErrors.invalid(`${path}[${i}]`, v, 'must appear in spec.versions'));
  return errs;
}

/** Groups under the naming's own domains need the API approval annotation (Kubernetes: k8s.io, kubernetes.io). */
function isProtectedGroup(g: string): boolean {
  const n = naming();
  return [n.groupSuffix, n.labelPrefix].some((d) => g === d || g.endsWith(`.${d}`));
}

type ApprovalState = 'missing' | 'bypassed' | 'approved' | 'invalid';

function approvalState(crd: Crd): ApprovalState {
  const value = crd.metadata.annotations?.[approvalAnnotation()] ?? '';
  if (value === '') return 'missing';
  if (value.startsWith('unapproved')) return 'bypassed';
  const u = parseGoUrl(value, true);
  return typeof u !== 'string' && u.host !== '' && u.scheme !== '' ? 'approved' : 'invalid';
}

function approvalAnnotation(): string {
  return `api-approved.${naming().labelPrefix}`;
}

function apiApprovalErrors(o: { crd: Crd; group: string; old?: Crd }): FieldError[] {
  const { crd, old } = o;
  if (!isProtectedGroup(o.group)) return [];
  const state = approvalState(crd);
  if (old && approvalState(old) === state) return [];
  const key = approvalAnnotation();
  const path = `metadata.annotations[${key}]`;
  const see = 'see https://github.com/kubernetes/enhancements/pull/1111';
  switch (state) {
    case 'missing':
      return [
        fieldErrors.required(path, `protected groups must have approval annotation ${JSON.stringify(key)}, ${see}`),
      ];
    case 'invalid':
      return [
        fieldErrors.invalid(
          path,
          crd.metadata.annotations?.[key] ?? '',
          `protected groups must have approval annotation ${JSON.stringify(key)} with either a URL or a reason starting with "unapproved", ${see}`,
        ),
      ];
    default:
      return [];
  }
}

function preserveUnknownFieldsErrors(spec: CrdSpec, old: CrdSpec | undefined): FieldError[] {
  if (old?.preserveUnknownFields === true) return [];
  if (spec.preserveUnknownFields !== true) return [];
  const ext = `${naming().schemaExtensionPrefix}preserve-unknown-fields`;
  return [
    fieldErrors.invalid(
      'spec.preserveUnknownFields',
      true,
      `cannot set to true, set ${ext} to true in spec.versions[*].schema instead`,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// Conversion

function hasAcceptedReviewVersionOrNone(conversion: CrdConversion | undefined): boolean {
  const versions = conversion?.webhook?.conversionReviewVersions ?? [];
  return versions.length === 0 || versions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v));
}

function allowInvalidCaBundle(old: Crd, oldSpec: CrdSpec): boolean {
  if (!isConditionTrue(old, 'Established')) return true;
  const caBundle = oldSpec.conversion?.webhook?.clientConfig?.caBundle;
  if (!caBundle) return false;
  return caBundleProblem(caBundle) !== undefined;
}

function conversionErrors(conversion: CrdConversion | undefined, opts: Options): FieldError[] {
  if (!conversion) return [];
  const path = 'spec.conversion';
  const errs = enumErrors({ path: `${path}.strategy`, value: conversion.strategy ?? '', allowed: ['None', 'Webhook'] });
  const cc = conversion.webhook?.clientConfig;
  const reviewVersions = conversion.webhook?.conversionReviewVersions;
  if (conversion.strategy === 'Webhook') {
    if (!cc) errs.push(fieldErrors.required(`${path}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    else errs.push(...clientConfigErrors({ cc, path: `${path}.webhookClientConfig`, opts }));
    errs.push(
      ...reviewVersionsErrors(reviewVersions ?? [], {
        path: `${path}.conversionReviewVersions`,
        requireRecognized: opts.requireRecognizedConversionReviewVersion,
      }),
    );
  } else {
    if (cc)
      errs.push(
        fieldErrors.forbidden(`${path}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'),
      );
    if ((reviewVersions?.length ?? 0) > 0)
      errs.push(
        fieldErrors.forbidden(
          `${path}.conversionReviewVersions`,
          'should not be set when strategy is not set to Webhook',
        ),
      );
  }
  return errs;
}

function clientConfigErrors(o: { cc: CrdWebhookClientConfig; path: string; opts: Options }): FieldError[] {
  const { cc, path } = o;
  const errs: FieldError[] = [];
  if ((cc.url === undefined) === (cc.service === undefined)) {
    errs.push(fieldErrors.required(path, 'exactly one of url or service is required'));
  } else if (cc.url !== undefined) {
    errs.push(...validateWebhookUrl(cc.url, `${path}.url`));
  } else if (cc.service) {
    errs.push(...validateWebhookService(cc.service, `${path}.service`));
  }
  if (cc.caBundle && !o.opts.allowInvalidCaBundle) {
    const problem = caBundleProblem(cc.caBundle);
    if (problem)
      errs.push(fieldErrors.invalid(`${path}.caBundle`, cc.caBundle, `unable to load root certificates: ${problem}`));
  }
  return errs;
}

function reviewVersionsErrors(
  versions: readonly string[],
  o: { path: string; requireRecognized: boolean },
): FieldError[] {
  if (versions.length === 0) return [fieldErrors.required(o.path)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(`${o.path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDns1035Label(v)) errs.push(fieldErrors.invalid(`${o.path}[${i}]`, v, m));
    if (ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (o.requireRecognized && !accepted)
    errs.push(
      fieldErrors.invalid(
        o.path,
        versions,
        `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`,
      ),
    );
  return errs;
}

const PEM_BLOCK = /-----BEGIN ([^\r\n]*?)-----\r?\n([\s\S]*?)-----END \1-----[ \t]*(?:\r?\n|$)/;

/**
 * Why a base64 caBundle cannot be a root certificate pool (client-go's rootCertPool): undefined
 * when one of its PEM blocks is a header-free CERTIFICATE that parses.
 */
function caBundleProblem(caBundle: string): string | undefined {
  let rest = Buffer.from(caBundle, 'base64').toString('latin1');
  const certs: { der: Buffer }[] = [];
  let trailing = false;
  while (rest.length > 0) {
    const m = PEM_BLOCK.exec(rest);
    if (!m) {
      trailing = true;
      break;
    }
    const lines = (m[2] ?? '').split(/\r?\n/);
    const hasHeaders = lines.some((l) => l.includes(':'));
    if (m[1] === 'CERTIFICATE' && !hasHeaders) certs.push({ der: Buffer.from(lines.join(''), 'base64') });
    rest = rest.slice(m.index + m[0].length);
  }
  const parses = (der: Buffer): boolean => {
    try {
      new X509Certificate(der);
      return true;
    } catch {
      return false;
    }
  };
  if (certs.some((c) => parses(c.der))) return undefined;
  if (certs.length > 0) return 'failed to parse certificate: x509: malformed certificate';
  return trailing ? 'unable to parse bytes as PEM block' : 'no valid certificate authority data seen';
}
