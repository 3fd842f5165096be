import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import type { CSIDriver, CSIDriverSpec } from '../../../wire/storage.js';

/** storage/v1 CSIDriver with generated.proto's numbers (spec 2). */
export const csiDriverSchema = objectSchema({
  spec: s.obj(
    {
      attachRequired: s.bool({ tag: 1 }),
      podInfoOnMount: s.bool({ tag: 2 }),
      volumeLifecycleModes: s.set(s.str(), { tag: 3 }),
      storageCapacity: s.bool({ tag: 4 }),
      fsGroupPolicy: s.str({ tag: 5 }),
      tokenRequests: s.atomic(s.obj({ audience: s.str({ tag: 1 }), expirationSeconds: s.int64({ tag: 2 }) }), {
        tag: 6,
      }),
      requiresRepublish: s.bool({ tag: 7 }),
      seLinuxMount: s.bool({ tag: 8 }),
    },
    { tag: 2 },
  ),
});

const specOf = (o: ApiObject): CSIDriverSpec => (o as CSIDriver).spec ?? {};

/** kubectl's TokenRequests cell: the audiences joined by commas, `<unset>` when there are none. */
function tokenRequestsCell(o: ApiObject): string {
  const requests = specOf(o).tokenRequests ?? [];
  return requests.length === 0 ? '<unset>' : requests.map((t) => t.audience).join(',');
}

/** kubectl's Modes cell: the lifecycle modes joined by commas, `<none>` when there are none. */
function modesCell(o: ApiObject): string {
  const modes = specOf(o).volumeLifecycleModes ?? [];
  return modes.length === 0 ? '<none>' : modes.join(',');
}

/**
 * storage/v1 CSIDriver: cluster-scoped, no short name; kubectl's columns Name, AttachRequired,
 * PodInfoOnMount, StorageCapacity, TokenRequests, RequiresRepublish, Modes, Age.
 */
export const csiDriver = (): ResourceType =>
  defineResource({
    group: group('storage'),
    version: 'v1',
    kind: 'CSIDriver',
    plural: 'csidrivers',
    singular: 'csidriver',
    namespaced: false,
    tableColumns: [
      nameColumn,
      {
        ...column('AttachRequired', 'boolean', (o) => specOf(o).attachRequired ?? true),
        description: 'Whether the driver needs an attach operation (ControllerPublishVolume) before mounting.',
      },
      {
        ...column('PodInfoOnMount', 'boolean', (o) => specOf(o).podInfoOnMount ?? false),
        description: 'Whether the driver is given pod information (name, namespace, uid) on mount.',
      },
      {
        ...column('StorageCapacity', 'boolean', (o) => specOf(o).storageCapacity ?? false),
        description: 'Whether scheduling considers the CSIStorageCapacity objects the driver publishes.',
      },
      {
        ...column('TokenRequests', 'string', tokenRequestsCell),
        description: 'The audiences of the service account tokens the driver is given on mount.',
      },
      {
        ...column('RequiresRepublish', 'boolean', (o) => specOf(o).requiresRepublish ?? false),
        description: 'Whether NodePublishVolume is called again periodically.',
      },
      {
        ...column('Modes', 'string', modesCell),
        description: 'The volume lifecycle modes the driver supports (Persistent, Ephemeral).',
      },
      ageColumn,
    ],
    schema: csiDriverSchema,
  });
