import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import type { VolumeAttachment } from '../../../wire/storage.js';
import { persistentVolumeSchema } from '../../core/v1/persistent-volume.js';

const volumeError = (tag: number) => s.obj({ time: s.time({ tag: 1 }), message: s.str({ tag: 2 }) }, { tag });

/**
 * storage/v1 VolumeAttachment with generated.proto's numbers (spec 2 { attacher 1, source 2
 * { persistentVolumeName 1, inlineVolumeSpec 2 }, nodeName 3 }, status 3).
 */
export const volumeAttachmentSchema = objectSchema({
  spec: s.obj(
    {
      attacher: s.str({ tag: 1 }),
      source: s.obj(
        {
          persistentVolumeName: s.str({ tag: 1 }),
          inlineVolumeSpec: { ...persistentVolumeSchema.properties.spec, tag: 2 },
        },
        { tag: 2 },
      ),
      nodeName: s.str({ tag: 3 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      attached: s.bool({ tag: 1 }),
      attachmentMetadata: s.map(s.str(), { tag: 2 }),
      attachError: volumeError(3),
      detachError: volumeError(4),
    },
    { tag: 3 },
  ),
});

const va = (o: ApiObject): VolumeAttachment => o as VolumeAttachment;

/**
 * storage/v1 VolumeAttachment: cluster-scoped, a `status` subresource, no short name; kubectl's
 * columns Name, Attacher, PV, Node, Attached, Age.
 */
export const volumeAttachment = (): ResourceType =>
  defineResource({
    group: group('storage'),
    version: 'v1',
    kind: 'VolumeAttachment',
    plural: 'volumeattachments',
    singular: 'volumeattachment',
    namespaced: false,
    // The spec is immutable; Kubernetes keeps no metadata.generation on attachments.
    hasSpec: false,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      {
        ...column('Attacher', 'string', (o) => va(o).spec?.attacher ?? ''),
        format: 'name',
        description: 'The name of the volume driver that must handle this attachment.',
      },
      {
        ...column('PV', 'string', (o) => va(o).spec?.source?.persistentVolumeName ?? ''),
        description: 'The name of the PersistentVolume to attach.',
      },
      {
        ...column('Node', 'string', (o) => va(o).spec?.nodeName ?? ''),
        description: 'The node the volume is attached to.',
      },
      {
        ...column('Attached', 'boolean', (o) => va(o).status?.attached ?? false),
        description: 'Whether the attach operation succeeded.',
      },
      ageColumn,
    ],
    schema: volumeAttachmentSchema,
  });
