import {
  badRequest,
  fieldErrors,
  invalid,
  metaGroup,
  type ApiObject,
  type FieldError,
  type ResourceType,
} from '@svc/api';
import { exactMetadataName, parseFieldSelector, parseGoBool, parseLabelSelector } from '@svc/machinery';
import type { ListParams, WatchParams } from '../../registry/store.js';

function nonNegativeInt(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v))
    throw badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be a non-negative integer`);
  return Number(v);
}

/** A boolean query parameter as Go's strconv.ParseBool reads it (1, t, T, TRUE, true, True and the false forms); else 400. */
export function optionalBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  try {
    return parseGoBool(v);
  } catch (e) {
    throw badRequest(`invalid value for ${name}: ${(e as Error).message}`);
  }
}

/** Validates `resourceVersion`: opaque to clients, but ours are decimal revisions. */
export function readResourceVersion(query: URLSearchParams): string | undefined {
  const rv = query.get('resourceVersion');
  if (rv === null || rv === '') return undefined;
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return rv;
}

/** Kubernetes answers invalid ListOptions with 422 Invalid on kind `ListOptions` of the meta group. */
function invalidOptions(errs: FieldError[]): void {
  if (errs.length > 0) throw invalid({ group: metaGroup(), kind: 'ListOptions' }, '', errs);
}

function selectors(
  query: URLSearchParams,
  r: ResourceType,
): Pick<ListParams, 'labelMatch' | 'fieldMatch' | 'filtered'> & { name?: string } {
  const out: Pick<ListParams, 'labelMatch' | 'fieldMatch' | 'filtered'> & { name?: string } = {};
  const labelSel = query.get('labelSelector') ?? '';
  const fieldSel = query.get('fieldSelector') ?? '';
  if (labelSel) {
    const sel = parseLabelSelector(labelSel);
    out.labelMatch = (labels) => sel.matches(labels);
    out.filtered = true;
  }
  if (fieldSel) {
    const sel = parseFieldSelector(fieldSel);
    const getters = fieldGetters(r);
    for (const key of sel.requirements().map((q) => q.field)) {
      if (!getters[key]) throw badRequest(`field label not supported: ${key}`);
    }
    out.fieldMatch = (o) => sel.matches((key) => getters[key]?.(o));
    out.filtered = true;
    out.name = exactMetadataName(sel);
  }
  return out;
}

/** Query parameters of a get: only `resourceVersion`. */
export function readGetParams(query: URLSearchParams): string | undefined {
  return readResourceVersion(query);
}

/** Query parameters of a list, with Kubernetes' ListOptions validation. */
export function readListParams(query: URLSearchParams, r: ResourceType): ListParams {
  // As Kubernetes decodes ListOptions whole: a bad boolean is a 400 on a list too (request
  // info already took watch's true forms as a watch).
  for (const b of ['watch', 'allowWatchBookmarks', 'sendInitialEvents']) optionalBool(query, b);
  const resourceVersion = readResourceVersion(query);
  const match = query.get('resourceVersionMatch') ?? '';
  const cont = query.get('continue') ?? '';
  const errs: FieldError[] = [];
  if (match !== '') {
    if (!resourceVersion)
      errs.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    if (cont)
      errs.push(
        fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    if (match !== 'Exact' && match !== 'NotOlderThan')
      errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && resourceVersion === '0')
      errs.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
  }
  if (query.has('sendInitialEvents'))
    errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  invalidOptions(errs);
  const p: ListParams = { resourceVersion, ...selectors(query, r) };
  if (match) p.resourceVersionMatch = match;
  p.limit = nonNegativeInt(query, 'limit') || undefined;
  if (cont !== '') {
    // "0" with a continue token is treated as the token's version (the spec's table).
    if (resourceVersion && resourceVersion !== '0')
      throw badRequest('specifying resource version is not allowed when using continue');
    p.continueToken = cont;
  }
  delete (p as { name?: string }).name;
  return p;
}

/** Query parameters of a watch, with Kubernetes' validation of sendInitialEvents / resourceVersionMatch. */
export function readWatchParams(
  query: URLSearchParams,
  r: ResourceType,
  watchListEnabled: boolean,
): WatchParams & { timeoutSeconds?: number } {
  const resourceVersion = readResourceVersion(query);
  const match = query.get('resourceVersionMatch') ?? '';
  const sendInitialEvents = optionalBool(query, 'sendInitialEvents');
  const errs: FieldError[] = [];
  if (sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan')
      errs.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    if (!watchListEnabled)
      errs.push(
        fieldErrors.forbidden(
          'sendInitialEvents',
          'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        ),
      );
  }
  if (match !== '') {
    if (sendInitialEvents === undefined)
      errs.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    if (match !== 'NotOlderThan') errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (query.get('continue'))
      errs.push(
        fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
  }
  invalidOptions(errs);
  const sel = selectors(query, r);
  const p: WatchParams & { timeoutSeconds?: number } = {
    resourceVersion,
    labelMatch: sel.labelMatch,
    fieldMatch: sel.fieldMatch,
    name: sel.name,
    allowBookmarks: optionalBool(query, 'allowWatchBookmarks') ?? false,
  };
  if (sendInitialEvents !== undefined) p.sendInitialEvents = sendInitialEvents;
  const timeout = nonNegativeInt(query, 'timeoutSeconds');
  if (timeout !== undefined && timeout > 0) p.timeoutSeconds = timeout;
  return p;
}

function fieldGetters(r: ResourceType): Record<string, (o: ApiObject) => string> {
  const base: Record<string, (o: ApiObject) => string> = {
    'metadata.name': (o) => o.metadata.name ?? '',
  };
  if (r.namespaced) base['metadata.namespace'] = (o) => o.metadata.namespace ?? '';
  return { ...base, ...(r.fieldSelectors ?? {}) };
}
