import {
  AGE_DESCRIPTION,
  age,
  byKubeVersionPriority,
  compareKubeVersions,
  defineResource,
  nameColumn,
  objectSchema,
  type ApiObject,
  type ResourceType,
  type Schema,
  type TableColumn,
} from '@svc/api';
import type { Crd, CrdPrinterColumn, CrdVersion } from './crd.js';
import { storageVersionOf } from './crd.js';
import { dottedPath, jsonPathValues, parseJsonPath } from './json-path.js';

import { toDslSchema, type JSONSchemaProps } from './schema/index.js';

/**
 * The catalog entries of a CRD: one per served version, as a built-in type's at build time,
 * so handlers, storage, the watch cache, apply, RBAC and discovery treat both alike.
 * Names come from `status.acceptedNames` (what the naming controller accepted).
 */
export function customResourceTypes(crd: Crd, o: { terminating?: boolean } = {}): ResourceType[] {
  return crd.spec.versions.filter((v) => v.served).map((v) => customResourceType(crd, { version: v, ...o }));
}

export function customResourceType(crd: Crd, o: { version: CrdVersion; terminating?: boolean }): ResourceType {
  const v = o.version;
  const names = crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : crd.spec.names;
  const openApiSchema = v.schema?.openAPIV3Schema;
  const subresources = [...(v.subresources?.status ? ['status'] : []), ...(v.subresources?.scale ? ['scale'] : [])];
  const scale = v.subresources?.scale;
  return defineResource({
    group: crd.spec.group,
    version: v.name,
    kind: names.kind,
    listKind: names.listKind || `${names.kind}List`,
    plural: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    namespaced: crd.spec.scope === 'Namespaced',
    subresources,
    scale: scale && {
      specReplicasPath: scale.specReplicasPath.replace(/^\./, ''),
      statusReplicasPath: scale.statusReplicasPath.replace(/^\./, ''),
      labelSelectorPath: scale.labelSelectorPath?.replace(/^\./, ''),
    },
    // Kubernetes: strategic merge patch is for built-in types only.
    strategicMerge: false,
    schema: openApiSchema ? toDslSchema(openApiSchema as JSONSchemaProps) : unstructuredSchema(),
    tableColumns: tableColumns(v.additionalPrinterColumns ?? []),
    fieldSelectors: selectableFields(v),
    custom: {
      openApiSchema,
      storageVersion: storageVersionOf(crd),
      deprecationWarning: v.deprecated ? deprecationWarning(crd, v) : undefined,
      crdName: crd.metadata.name ?? '',
      crdUid: crd.metadata.uid ?? '',
      terminating: o.terminating,
    },
  });
}

/** A version without a schema (only possible for old stored CRDs): every field kept. */
function unstructuredSchema(): Schema {
  return { ...objectSchema({}), preserveUnknownFields: true };
}

/**
 * The version's `deprecationWarning`, else Kubernetes' default text: `<group>/<version> <Kind>
 * is deprecated`, and `; use <group>/<version> <Kind>` naming the highest served version that
 * ranks above it and is not deprecated.
 */
function deprecationWarning(crd: Crd, v: CrdVersion): string {
  if (v.deprecationWarning !== undefined) return v.deprecationWarning;
  const { group, names } = crd.spec;
  const msg = `${group}/${v.name} ${names.kind} is deprecated`;
  const newer = crd.spec.versions
    .filter((x) => x.served && !x.deprecated && compareKubeVersions(v.name, x.name) < 0)
    .map((x) => x.name);
  const [best] = byKubeVersionPriority(newer);
  return best === undefined ? msg : `${msg}; use ${group}/${best} ${names.kind}`;
}

/** Name, then the printer columns (Age when there are none), as Kubernetes' table convertor. */
function tableColumns(columns: readonly CrdPrinterColumn[]): TableColumn[] {
  const given = columns.length > 0 ? columns : [AGE];
  return [nameColumn, ...given.map(printerColumn)];
}

const AGE: CrdPrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function printerColumn(c: CrdPrinterColumn): TableColumn {
  const fallback =
    c === AGE ? AGE_DESCRIPTION : `Custom resource definition column (in JSONPath format): ${c.jsonPath}`;
  const steps = parseJsonPath(c.jsonPath);
  const type = (['integer', 'number', 'boolean', 'date'] as const).find((t) => t === c.type) ?? 'string';
  return {
    name: c.name,
    type,
    format: c.format,
    description: c.description || fallback,
    priority: c.priority ?? 0,
    cell: (obj, now) => {
      if (!steps) return null;
      const [value] = jsonPathValues(obj, steps);
      return cellOf(type, value, now);
    },
  };
}

function cellOf(type: TableColumn['type'], value: unknown, now: number): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? (Number.isNaN(Date.parse(value)) ? '<invalid>' : age(value, now)) : null;
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** `selectableFields` as field selector keys (`spec.color`), with the value's text. */
function selectableFields(v: CrdVersion): Record<string, (obj: ApiObject) => string> {
  const out: Record<string, (obj: ApiObject) => string> = {};
  for (const f of v.selectableFields ?? []) {
    const steps = parseJsonPath(f.jsonPath);
    const key = steps && dottedPath(steps);
    if (!steps || !key) continue;
    out[key] = (obj) => {
      const [value] = jsonPathValues(obj, steps);
      return value === undefined || value === null ? '' : String(value);
    };
  }
  return out;
}
