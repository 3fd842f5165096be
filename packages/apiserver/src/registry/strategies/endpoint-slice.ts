import { fieldErrors, type ApiObject, type EndpointSlice, type FieldError, type SliceEndpoint } from '@svc/api';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isValidLabelValue,
  validateDnsLabel,
  validateLabels,
  validateQualifiedName,
} from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { PORT_PROTOCOLS, validateNodeName } from './endpoints.js';
import { ipFamily, validateNonSpecialIp } from './ip-address.js';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_ZONE_HINTS = 8;

const tooMany = (path: string, max: number): FieldError => ({
  path,
  type: 'FieldValueTooMany',
  detail: `must have at most ${max} items`,
});

/** Go's IsFullyQualifiedDomainName. */
function validateFqdn(value: string, path: string): FieldError[] {
  if (value === '') return [fieldErrors.required(path, '')];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDns1123Subdomain(name);
  if (sub.length > 0) return [fieldErrors.invalid(path, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2)
    return [fieldErrors.invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDns1123Label(label);
    if (errs.length > 0) return [fieldErrors.invalid(path, label, errs.join(','))];
  }
  return [];
}

function validateAddress(value: string, o: { type: string; path: string }): FieldError[] {
  const { path } = o;
  if (o.type === 'FQDN') return validateFqdn(value, path);
  if (o.type !== 'IPv4' && o.type !== 'IPv6') return [];
  const family = o.type === 'IPv4' ? 4 : 6;
  if (ipFamily(value) !== family) return [fieldErrors.invalid(path, value, `must be a valid ${o.type} address`)];
  return validateNonSpecialIp(value, path);
}

function validateEndpoint(e: SliceEndpoint, o: { type: string; path: string }): FieldError[] {
  const { path } = o;
  const errs: FieldError[] = [];
  const addresses = e.addresses ?? [];
  if (addresses.length === 0) errs.push(fieldErrors.required(`${path}.addresses`, 'must contain at least 1 address'));
  else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(`${path}.addresses`, MAX_ADDRESSES));
  addresses.forEach((a, i) => errs.push(...validateAddress(a, { type: o.type, path: `${path}.addresses[${i}]` })));
  if (e.nodeName !== undefined) errs.push(...validateNodeName(e.nodeName, `${path}.nodeName`));
  const topology = e.deprecatedTopology ?? {};
  if (Object.keys(topology).length > MAX_TOPOLOGY_LABELS)
    errs.push(tooMany(`${path}.deprecatedTopology`, MAX_TOPOLOGY_LABELS));
  errs.push(...validateLabels(topology, `${path}.deprecatedTopology`));
  if (e.hostname !== undefined) errs.push(...validateDnsLabel(e.hostname, `${path}.hostname`));
  const zones = e.hints?.forZones ?? [];
  if (zones.length > MAX_ZONE_HINTS) errs.push(tooMany(`${path}.hints.forZones`, MAX_ZONE_HINTS));
  else {
    const seen = new Set<string>();
    zones.forEach((z, i) => {
      const p = `${path}.hints.forZones[${i}].name`;
      if (seen.has(z.name)) errs.push(fieldErrors.duplicate(p, z.name));
      seen.add(z.name);
      errs.push(...isValidLabelValue(z.name).map((m) => fieldErrors.invalid(p, z.name, m)));
    });
  }
  return errs;
}

/** Kubernetes' ValidateEndpointSlice (pkg/apis/discovery/validation, 1.32): paths, limits and messages. */
function validate(obj: ApiObject): FieldError[] {
  const slice = obj as EndpointSlice;
  const errs: FieldError[] = [];
  const type: string = slice.addressType ?? '';
  if (type === '') errs.push(fieldErrors.required('addressType', ''));
  else if (!ADDRESS_TYPES.includes(type)) errs.push(fieldErrors.notSupported('addressType', type, ADDRESS_TYPES));
  const endpoints = slice.endpoints ?? [];
  if (endpoints.length > MAX_ENDPOINTS) errs.push(tooMany('endpoints', MAX_ENDPOINTS));
  else endpoints.forEach((e, i) => errs.push(...validateEndpoint(e, { type, path: `endpoints[${i}]` })));
  const ports = slice.ports ?? [];
  if (ports.length > MAX_PORTS) return [...errs, tooMany('ports', MAX_PORTS)];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = `ports[${i}]`;
    const name = p.name ?? '';
    if (name !== '') errs.push(...validateDnsLabel(name, `${path}.name`));
    if (names.has(name)) errs.push(fieldErrors.duplicate(`${path}.name`, name));
    names.add(name);
    if (p.protocol === undefined) errs.push(fieldErrors.required(`${path}.protocol`, ''));
    else if (!PORT_PROTOCOLS.includes(p.protocol))
      errs.push(fieldErrors.notSupported(`${path}.protocol`, p.protocol, PORT_PROTOCOLS));
    if (p.appProtocol !== undefined) errs.push(...validateQualifiedName(p.appProtocol, `${path}.appProtocol`));
  });
  return errs;
}

/** v1 defaults: a port's name is "" and its protocol TCP. */
function defaults(slice: EndpointSlice): void {
  for (const p of slice.ports ?? []) {
    p.name ??= '';
    p.protocol ??= 'TCP';
  }
}

/** As Kubernetes' dropTopologyOnV1: v1 writes never set deprecatedTopology (kept while the endpoints are unchanged). */
function dropTopology(slice: EndpointSlice, old?: EndpointSlice): void {
  if (old && deepEqual(old.endpoints, slice.endpoints)) return;
  for (const e of slice.endpoints ?? []) delete e.deprecatedTopology;
}

/** discovery/v1 EndpointSlice: generation as Kubernetes keeps it (1 at create, +1 on any change but metadata other than labels). */
export const endpointSliceStrategy: Strategy = {
  prepareForCreate(obj) {
    const slice = obj as EndpointSlice;
    slice.metadata.generation = 1;
    defaults(slice);
    dropTopology(slice);
  },
  prepareForUpdate(obj, old) {
    const slice = obj as EndpointSlice;
    const before = old as EndpointSlice;
    defaults(slice);
    dropTopology(slice, before);
    const generation = before.metadata.generation ?? 1;
    const { metadata: _m, ...body } = slice;
    const { metadata: _o, ...oldBody } = before;
    const changed = !deepEqual(body, oldBody) || !deepEqual(slice.metadata.labels ?? {}, before.metadata.labels ?? {});
    slice.metadata.generation = changed ? generation + 1 : generation;
  },
  validate,
  validateUpdate(obj, old) {
    const errs = validate(obj);
    const type = (obj as EndpointSlice).addressType;
    if (type !== (old as EndpointSlice).addressType)
      errs.push(fieldErrors.invalid('addressType', type, 'field is immutable'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
