import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import { nodeRoles, nodeStatus, nodeAddress } from './node-printer.js';
import { quantityMap } from './common.js';

const taint = s.obj(
  {
    key: s.str({ tag: 1 }),
    value: s.str({ tag: 2 }),
    effect: s.str({ tag: 3, enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }),
    timeAdded: s.time({ tag: 4 }),
  },
  { required: ['key', 'effect'] },
);

/** NodeCondition: lastHeartbeatTime where other conditions have lastProbeTime. */
const nodeCondition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    lastHeartbeatTime: s.time({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
  },
  { required: ['type', 'status'] },
);

/** NodeConfigSource (the removed dynamic kubelet config): only a ConfigMap reference, field 2. */
const nodeConfigSource = s.obj({
  configMap: s.obj(
    {
      namespace: s.str({ tag: 1 }),
      name: s.str({ tag: 2 }),
      uid: s.str({ tag: 3 }),
      resourceVersion: s.str({ tag: 4 }),
      kubeletConfigKey: s.str({ tag: 5 }),
    },
    { tag: 2, required: ['namespace', 'name', 'kubeletConfigKey'] },
  ),
});

const nodeConfigStatus = s.obj({
  assigned: { ...nodeConfigSource, tag: 1 },
  active: { ...nodeConfigSource, tag: 2 },
  lastKnownGood: { ...nodeConfigSource, tag: 3 },
  error: s.str({ tag: 4 }),
});

/** DaemonEndpoint's one field is `Port`, capitalised in JSON too. */
const nodeDaemonEndpoints = s.obj({
  kubeletEndpoint: s.obj({ Port: s.int32({ tag: 1 }) }, { tag: 1, required: ['Port'] }),
});

const containerImage = s.obj({ names: s.atomic(s.str(), { tag: 1 }), sizeBytes: s.int64({ tag: 2 }) });

/** devicePath is often empty (CSI attachments); Protobuf drops empty strings, so only name is required. */
const attachedVolume = s.obj({ name: s.str({ tag: 1 }), devicePath: s.str({ tag: 2 }) }, { required: ['name'] });

const nodeRuntimeHandler = s.obj({
  name: s.str({ tag: 1 }),
  features: s.obj({ recursiveReadOnlyMounts: s.bool({ tag: 1 }), userNamespaces: s.bool({ tag: 2 }) }, { tag: 2 }),
});

const nodeFeatures = s.obj({ supplementalGroupsPolicy: s.bool({ tag: 1 }) });

export const nodeSchema = objectSchema({
  spec: s.obj(
    {
      podCIDR: s.str({ tag: 1 }),
      podCIDRs: s.set(s.str(), { tag: 7 }),
      providerID: s.str({ tag: 3 }),
      unschedulable: s.bool({ tag: 4 }),
      taints: s.atomic(taint, { tag: 5 }),
      configSource: { ...nodeConfigSource, tag: 6 },
      externalID: s.str({ tag: 2 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      capacity: { ...quantityMap, tag: 1 },
      allocatable: { ...quantityMap, tag: 2 },
      phase: s.str({ tag: 3 }),
      conditions: s.keyed(nodeCondition, ['type'], { tag: 4 }),
      addresses: s.keyed(
        s.obj({ type: s.str({ tag: 1 }), address: s.str({ tag: 2 }) }, { required: ['type', 'address'] }),
        ['type'],
        { tag: 5, listType: 'atomic' },
      ),
      daemonEndpoints: { ...nodeDaemonEndpoints, tag: 6 },
      nodeInfo: s.obj(
        {
          machineID: s.str({ tag: 1 }),
          systemUUID: s.str({ tag: 2 }),
          bootID: s.str({ tag: 3 }),
          kernelVersion: s.str({ tag: 4 }),
          osImage: s.str({ tag: 5 }),
          containerRuntimeVersion: s.str({ tag: 6 }),
          kubeletVersion: s.str({ tag: 7 }),
          kubeProxyVersion: s.str({ tag: 8 }),
          operatingSystem: s.str({ tag: 9 }),
          architecture: s.str({ tag: 10 }),
          swap: s.obj({ capacity: s.int64({ tag: 1 }) }, { tag: 11 }),
        },
        { tag: 7 },
      ),
      images: s.atomic(containerImage, { tag: 8 }),
      volumesInUse: s.atomic(s.str(), { tag: 9 }),
      volumesAttached: s.atomic(attachedVolume, { tag: 10 }),
      config: { ...nodeConfigStatus, tag: 11 },
      runtimeHandlers: s.atomic(nodeRuntimeHandler, { tag: 12 }),
      features: { ...nodeFeatures, tag: 13 },
    },
    { tag: 3 },
  ),
});

export const node = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Node',
    plural: 'nodes',
    singular: 'node',
    shortNames: ['no'],
    namespaced: false,
    subresources: ['status', 'proxy'],
    tableColumns: [
      nameColumn,
      column('Status', 'string', nodeStatus),
      column('Roles', 'string', nodeRoles),
      ageColumn,
      column(
        'Version',
        'string',
        (o) => (o.status as { nodeInfo?: { kubeletVersion?: string } } | undefined)?.nodeInfo?.kubeletVersion ?? '',
      ),
      wideColumn('Internal-IP', 'string', (o) => nodeAddress(o, 'InternalIP')),
      wideColumn('External-IP', 'string', (o) => nodeAddress(o, 'ExternalIP')),
      wideColumn(
        'OS-Image',
        'string',
        (o) => (o.status as { nodeInfo?: { osImage?: string } } | undefined)?.nodeInfo?.osImage ?? '',
      ),
      wideColumn(
        'Kernel-Version',
        'string',
        (o) => (o.status as { nodeInfo?: { kernelVersion?: string } } | undefined)?.nodeInfo?.kernelVersion ?? '',
      ),
      wideColumn(
        'Container-Runtime',
        'string',
        (o) =>
          (o.status as { nodeInfo?: { containerRuntimeVersion?: string } } | undefined)?.nodeInfo
            ?.containerRuntimeVersion ?? '',
      ),
    ],
    schema: nodeSchema,
    fieldSelectors: {
      'spec.unschedulable': (o) => String((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable ?? false),
    },
  });
