import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { Endpoints } from '../../../wire/endpoints.js';
import { objectReference } from './common.js';

const endpointAddress = s.obj(
  {
    ip: s.str({ tag: 1 }),
    hostname: s.str({ tag: 3 }),
    nodeName: s.str({ tag: 4 }),
    targetRef: { ...objectReference, tag: 2 },
  },
  { required: ['ip'] },
);

const endpointPort = s.obj(
  {
    name: s.str({ tag: 1 }),
    port: s.int32({ tag: 2 }),
    protocol: s.str({ tag: 3, enum: ['TCP', 'UDP', 'SCTP'] }),
    appProtocol: s.str({ tag: 4 }),
  },
  { required: ['port'] },
);

export const endpointsSchema = objectSchema({
  subsets: s.atomic(
    s.obj({
      addresses: s.atomic(endpointAddress, { tag: 1 }),
      notReadyAddresses: s.atomic(endpointAddress, { tag: 2 }),
      ports: s.atomic(endpointPort, { tag: 3 }),
    }),
    { tag: 2 },
  ),
});

/** kubectl's ENDPOINTS cell: `ip:port` per address and port, the first three, then `+ N more...`. */
export function endpointsCell(o: Endpoints): string {
  const subsets = o.subsets ?? [];
  if (subsets.length === 0) return NONE;
  const max = 3;
  const list: string[] = [];
  let count = 0;
  let more = false;
  const add = (entry: string): void => {
    if (list.length === max) more = true;
    else list.push(entry);
  };
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    const ports = ss.ports ?? [];
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) add(a.ip);
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) add(a.ip.includes(':') ? `[${a.ip}]:${p.port}` : `${a.ip}:${p.port}`);
    }
  }
  const joined = list.join(',');
  return more ? `${joined} + ${count - max} more...` : joined;
}

export const endpoints = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    plural: 'endpoints',
    singular: 'endpoints',
    shortNames: ['ep'],
    namespaced: true,
    hasSpec: false,
    tableColumns: [nameColumn, column('Endpoints', 'string', (o) => endpointsCell(o as Endpoints)), ageColumn],
    schema: endpointsSchema,
  });
