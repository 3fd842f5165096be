import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { nodeRoles, nodeStatus, nodeAddress } from './node-printer.js';
import { condition, quantityMap } from './common.js';

const taint = s.obj({
  key: s.str({ tag: 1 }), value: s.str({ tag: 2 }), effect: s.str({ tag: 3, enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }),
  timeAdded: s.time({ tag: 4 }),
}, { required: ['key', 'effect'] });

export const node = (): ResourceType => defineResource({
  group: '', version: 'v1', kind: 'Node', plural: 'nodes', singular: 'node', shortNames: ['no'],
  namespaced: false, subresources: ['status'],
  tableColumns: [
    nameColumn,
    column('Status', 'string', nodeStatus),
    column('Roles', 'string', nodeRoles),
    ageColumn,
    column('Version', 'string', (o) => (o.status as { nodeInfo?: { kubeletVersion?: string } } | undefined)?.nodeInfo?.kubeletVersion ?? ''),
    column('Internal-IP', 'string', (o) => nodeAddress(o, 'InternalIP'), 1),
    column('External-IP', 'string', (o) => nodeAddress(o, 'ExternalIP'), 1),
    column('OS-Image', 'string', (o) => (o.status as { nodeInfo?: { osImage?: string } } | undefined)?.nodeInfo?.osImage ?? '', 1),
    column('Kernel-Version', 'string', (o) => (o.status as { nodeInfo?: { kernelVersion?: string } } | undefined)?.nodeInfo?.kernelVersion ?? '', 1),
    column('Container-Runtime', 'string', (o) => (o.status as { nodeInfo?: { containerRuntimeVersion?: string } } | undefined)?.nodeInfo?.containerRuntimeVersion ?? '', 1),
  ],
  schema: objectSchema({
    spec: s.obj({
      podCIDR: s.str({ tag: 1 }), podCIDRs: s.set(s.str(), { tag: 7 }), providerID: s.str({ tag: 3 }),
      unschedulable: s.bool({ tag: 4 }), taints: s.atomic(taint, { tag: 5 }), configSource: s.any({ tag: 6 }),
      externalID: s.str({ tag: 2 }),
    }, { tag: 2 }),
    status: s.obj({
      capacity: { ...quantityMap, tag: 1 }, allocatable: { ...quantityMap, tag: 2 }, phase: s.str({ tag: 3 }),
      conditions: s.keyed(condition, ['type'], { tag: 4 }),
      addresses: s.keyed(s.obj({ type: s.str({ tag: 1 }), address: s.str({ tag: 2 }) }, { required: ['type', 'address'] }), ['type'], { tag: 5, listType: 'atomic' }),
      daemonEndpoints: s.any({ tag: 6 }),
      nodeInfo: s.obj({
        machineID: s.str({ tag: 1 }), systemUUID: s.str({ tag: 2 }), bootID: s.str({ tag: 3 }), kernelVersion: s.str({ tag: 4 }),
        osImage: s.str({ tag: 5 }), containerRuntimeVersion: s.str({ tag: 6 }), kubeletVersion: s.str({ tag: 7 }),
        kubeProxyVersion: s.str({ tag: 8 }), operatingSystem: s.str({ tag: 9 }), architecture: s.str({ tag: 10 }),
      }, { tag: 7 }),
      images: s.atomic(s.any(), { tag: 8 }), volumesInUse: s.atomic(s.str(), { tag: 9 }), volumesAttached: s.atomic(s.any(), { tag: 10 }),
      config: s.any({ tag: 11 }), runtimeHandlers: s.atomic(s.any(), { tag: 12 }), features: s.any({ tag: 13 }),
    }, { tag: 3 }),
  }),
  fieldSelectors: { 'spec.unschedulable': (o) => String((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable ?? false) },
});
