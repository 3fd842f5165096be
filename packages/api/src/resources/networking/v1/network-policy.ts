import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import type { NetworkPolicy } from '../../../wire/network-policy.js';
import { formatLabelSelector } from '../../apps/v1/common.js';

const port = s.obj({ protocol: s.str({ tag: 1 }), port: s.intOrString({ tag: 2 }), endPort: s.int32({ tag: 3 }) });

const peer = s.obj({
  podSelector: { ...labelSelector, tag: 1 },
  namespaceSelector: { ...labelSelector, tag: 2 },
  ipBlock: s.obj({ cidr: s.str({ tag: 1 }), except: s.atomic(s.str(), { tag: 2 }) }, { tag: 3 }),
});

/** networking/v1 NetworkPolicy with generated.proto's numbers (spec 2; podSelector 1, ingress 2, egress 3, policyTypes 4). */
export const networkPolicySchema = objectSchema({
  spec: s.obj(
    {
      podSelector: { ...labelSelector, tag: 1 },
      ingress: s.atomic(s.obj({ ports: s.atomic(port, { tag: 1 }), from: s.atomic(peer, { tag: 2 }) }), { tag: 2 }),
      egress: s.atomic(s.obj({ ports: s.atomic(port, { tag: 1 }), to: s.atomic(peer, { tag: 2 }) }), { tag: 3 }),
      policyTypes: s.atomic(s.str(), { tag: 4 }),
    },
    { tag: 2 },
  ),
});

/** networking/v1 NetworkPolicy: short name netpol, kubectl's columns Name, Pod-Selector, Age. */
export const networkPolicy = (): ResourceType =>
  defineResource({
    group: group('networking'),
    version: 'v1',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    singular: 'networkpolicy',
    shortNames: ['netpol'],
    namespaced: true,
    tableColumns: [
      nameColumn,
      {
        ...column('Pod-Selector', 'string', (o: ApiObject) =>
          formatLabelSelector((o as NetworkPolicy).spec?.podSelector),
        ),
        description: 'Selects the pods to which this NetworkPolicy object applies.',
      },
      ageColumn,
    ],
    schema: networkPolicySchema,
  });
