import { badRequest } from '@svc/api';
import { parseFieldSelector, parseLabelSelector } from '@svc/machinery';
import type { ApiObject, ResourceType } from '@svc/api';
import type { ListParams } from '../../registry/store.js';

function nonNegativeInt(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be a non-negative integer`);
  return Number(v);
}

/** Validates `resourceVersion`: opaque to clients, but ours are decimal revisions. */
export function readResourceVersion(query: URLSearchParams): string | undefined {
  const rv = query.get('resourceVersion');
  if (rv === null || rv === '') return undefined;
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return rv;
}

/** Parses list/get query parameters and rejects the combinations the spec calls invalid. */
export function readParams(query: URLSearchParams, verb: 'get' | 'list' | 'watch', r?: ResourceType): ListParams {
  const resourceVersion = readResourceVersion(query);
  if (verb === 'get') return { resourceVersion };
  const p: ListParams = { resourceVersion };
  const match = query.get('resourceVersionMatch') ?? '';
  if (match !== '') {
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      throw badRequest(`resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`);
    }
    if (!resourceVersion && verb === 'list') throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (match === 'Exact' && resourceVersion === '0') throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    p.resourceVersionMatch = match;
  }
  p.limit = nonNegativeInt(query, 'limit') || undefined;
  const cont = query.get('continue') ?? '';
  if (cont !== '') {
    if (resourceVersion && resourceVersion !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    if (match) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
    p.continueToken = cont;
  }
  const labelSel = query.get('labelSelector') ?? '';
  const fieldSel = query.get('fieldSelector') ?? '';
  if (labelSel) {
    const sel = parseLabelSelector(labelSel);
    p.labelMatch = (labels) => sel.matches(labels);
    p.filtered = true;
  }
  if (fieldSel) {
    const sel = parseFieldSelector(fieldSel);
    const getters = fieldGetters(r);
    for (const key of sel.requirements().map((q) => q.field)) {
      if (!getters[key]) throw badRequest(`field label not supported: ${key}`);
    }
    p.fieldMatch = (o) => sel.matches((key) => getters[key]?.(o));
    p.filtered = true;
  }
  return p;
}

function fieldGetters(r: ResourceType | undefined): Record<string, (o: ApiObject) => string> {
  const base: Record<string, (o: ApiObject) => string> = {
    'metadata.name': (o) => o.metadata.name ?? '',
  };
  if (r?.namespaced) base['metadata.namespace'] = (o) => o.metadata.namespace ?? '';
  return { ...base, ...(r?.fieldSelectors ?? {}) };
}
