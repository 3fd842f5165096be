import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE, humanDuration } from '../../../table-format.js';
import { group } from '../../../names.js';
import type { ApiObject } from '../../../types.js';

interface CsrView {
  spec?: { signerName?: string; username?: string; expirationSeconds?: number };
  status?: { conditions?: Array<{ type?: string }>; certificate?: string };
}

/** kubectl's CONDITION cell: Denied, else Approved, else Pending; then `,Failed` and `,Issued`. */
export function csrConditionCell(o: ApiObject): string {
  const { status } = o as CsrView;
  const types = new Set((status?.conditions ?? []).map((c) => c.type));
  let cell = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) cell += ',Failed';
  if (status?.certificate) cell += ',Issued';
  return cell;
}

const condition = s.obj({
  type: s.str({ tag: 1 }),
  status: s.str({ tag: 6 }),
  reason: s.str({ tag: 2 }),
  message: s.str({ tag: 3 }),
  lastUpdateTime: s.time({ tag: 4 }),
  lastTransitionTime: s.time({ tag: 5 }),
});

export const certificateSigningRequestSchema = objectSchema(
  {
    spec: s.obj(
      {
        request: s.bytes({ tag: 1 }),
        signerName: s.str({ tag: 7 }),
        expirationSeconds: s.int32({ tag: 8 }),
        usages: s.atomic(s.str(), { tag: 5 }),
        username: s.str({ tag: 2 }),
        uid: s.str({ tag: 3 }),
        groups: s.atomic(s.str(), { tag: 4 }),
        extra: s.map(s.atomic(s.str()), { tag: 6 }),
      },
      { tag: 2, required: ['request', 'signerName'] },
    ),
    status: s.obj(
      { conditions: s.keyed(condition, ['type'], { tag: 1 }), certificate: s.bytes({ tag: 2 }) },
      { tag: 3 },
    ),
  },
  { required: ['spec'] },
);

/**
 * certificates/v1 CertificateSigningRequest (cluster-scoped). `approval` is its own
 * subresource: only the Approved/Denied conditions change through it.
 */
export const certificateSigningRequest = (): ResourceType =>
  defineResource({
    group: group('certificates'),
    version: 'v1',
    kind: 'CertificateSigningRequest',
    plural: 'certificatesigningrequests',
    singular: 'certificatesigningrequest',
    shortNames: ['csr'],
    namespaced: false,
    subresources: ['status', 'approval'],
    nameRule: 'path-segment',
    tableColumns: [
      nameColumn,
      ageColumn,
      column('SignerName', 'string', (o) => (o as CsrView).spec?.signerName || NONE),
      column('Requestor', 'string', (o) => (o as CsrView).spec?.username ?? ''),
      column('RequestedDuration', 'string', (o) => {
        const seconds = (o as CsrView).spec?.expirationSeconds;
        return seconds === undefined ? NONE : humanDuration(seconds * 1000);
      }),
      column('Condition', 'string', csrConditionCell),
    ],
    schema: certificateSigningRequestSchema,
  });
