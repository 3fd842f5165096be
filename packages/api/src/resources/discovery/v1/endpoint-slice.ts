import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { EndpointSlice } from '../../../wire/endpoints.js';
import { objectReference } from '../../core/v1/common.js';

const sliceEndpoint = s.obj(
  {
    addresses: s.set(s.str(), { tag: 1 }),
    conditions: s.obj(
      { ready: s.bool({ tag: 1 }), serving: s.bool({ tag: 2 }), terminating: s.bool({ tag: 3 }) },
      { tag: 2 },
    ),
    hostname: s.str({ tag: 3 }),
    targetRef: { ...objectReference, tag: 4 },
    deprecatedTopology: s.map(s.str(), { tag: 5 }),
    nodeName: s.str({ tag: 6 }),
    zone: s.str({ tag: 7 }),
    hints: s.obj(
      { forZones: s.atomic(s.obj({ name: s.str({ tag: 1 }) }, { required: ['name'] }), { tag: 1 }) },
      { tag: 8 },
    ),
  },
  { required: ['addresses'] },
);

const slicePort = s.obj({
  name: s.str({ tag: 1 }),
  protocol: s.str({ tag: 2, enum: ['TCP', 'UDP', 'SCTP'] }),
  port: s.int32({ tag: 3 }),
  appProtocol: s.str({ tag: 4 }),
});

export const endpointSliceSchema = objectSchema(
  {
    addressType: s.str({ tag: 4, enum: ['IPv4', 'IPv6', 'FQDN'] }),
    endpoints: s.atomic(sliceEndpoint, { tag: 2 }),
    ports: s.atomic(slicePort, { tag: 3 }),
  },
  // Only addressType: Kubernetes' ValidateEndpointSlice does not require `endpoints`, and an
  // empty placeholder slice arrives without it over Protobuf (an empty list is not encoded).
  { required: ['addressType'] },
);

/** kubectl's list cells: the first three, then `+ N more...`; `<unset>` when empty. */
function firstThree(items: string[]): string {
  const max = 3;
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

export function slicePortsCell(o: EndpointSlice): string {
  return firstThree((o.ports ?? []).map((p) => (p.port !== undefined ? String(p.port) : (p.name ?? '*'))));
}

export function sliceEndpointsCell(o: EndpointSlice): string {
  return firstThree((o.endpoints ?? []).flatMap((e) => e.addresses ?? []));
}

export const endpointSlice = (): ResourceType =>
  defineResource({
    group: group('discovery'),
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    singular: 'endpointslice',
    namespaced: true,
    hasSpec: false,
    tableColumns: [
      nameColumn,
      column('AddressType', 'string', (o) => (o as EndpointSlice).addressType ?? ''),
      column('Ports', 'string', (o) => slicePortsCell(o as EndpointSlice)),
      column('Endpoints', 'string', (o) => sliceEndpointsCell(o as EndpointSlice)),
      ageColumn,
    ],
    schema: endpointSliceSchema,
  });
