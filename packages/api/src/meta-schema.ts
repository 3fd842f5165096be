import { s, type ObjectSchema, type Schema, type StringSchema } from './schema.js';

/** Field numbers follow Kubernetes' ObjectMeta in generated.proto. */
export const ownerReference = s.obj(
  {
    apiVersion: s.str({ tag: 5 }),
    kind: s.str({ tag: 1 }),
    name: s.str({ tag: 3 }),
    uid: s.str({ tag: 4 }),
    controller: s.bool({ tag: 6 }),
    blockOwnerDeletion: s.bool({ tag: 7 }),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], structType: 'atomic' },
);

export const managedFieldsEntry = s.obj({
  manager: s.str({ tag: 1 }),
  operation: s.str({ tag: 2 }),
  apiVersion: s.str({ tag: 3 }),
  time: s.time({ tag: 4 }),
  fieldsType: s.str({ tag: 6 }),
  fieldsV1: s.any({ tag: 7, format: 'json-bytes' }),
  subresource: s.str({ tag: 8 }),
});

export const objectMeta = s.obj({
  name: s.str({ tag: 1 }),
  generateName: s.str({ tag: 2 }),
  namespace: s.str({ tag: 3 }),
  selfLink: s.str({ tag: 4 }),
  uid: s.str({ tag: 5 }),
  resourceVersion: s.str({ tag: 6 }),
  generation: s.int64({ tag: 7 }),
  creationTimestamp: s.time({ tag: 8 }),
  deletionTimestamp: s.time({ tag: 9 }),
  deletionGracePeriodSeconds: s.int64({ tag: 10 }),
  labels: s.map(s.str(), { tag: 11 }),
  annotations: s.map(s.str(), { tag: 12 }),
  ownerReferences: s.keyed(ownerReference, ['uid'], { tag: 13 }),
  finalizers: s.set(s.str(), { tag: 14, patchStrategy: 'merge' }),
  managedFields: s.atomic(managedFieldsEntry, { tag: 17 }),
});

export const listMeta = s.obj({
  selfLink: s.str({ tag: 1 }),
  resourceVersion: s.str({ tag: 2 }),
  continue: s.str({ tag: 3 }),
  remainingItemCount: s.int64({ tag: 4 }),
});

/** A top-level object schema: apiVersion, kind, metadata, then the type's own fields. */
export function objectSchema<F extends Record<string, Schema>>(
  fields: F,
  opts: { required?: string[] } = {},
): ObjectSchema<TopLevelProperties & F> {
  return s.obj({ apiVersion: s.str(), kind: s.str(), metadata: { ...objectMeta, tag: 1 }, ...fields }, opts);
}

/** The properties every top-level object schema starts with (a type literal: it needs an implicit index signature). */
export type TopLevelProperties = {
  apiVersion: StringSchema;
  kind: StringSchema;
  metadata: typeof objectMeta;
};

export const labelSelector = s.obj(
  {
    matchLabels: s.map(s.str(), { tag: 1 }),
    matchExpressions: s.atomic(
      s.obj(
        {
          key: s.str({ tag: 1 }),
          operator: s.str({ tag: 2 }),
          values: s.atomic(s.str(), { tag: 3 }),
        },
        { required: ['key', 'operator'] },
      ),
      { tag: 2 },
    ),
  },
  { structType: 'atomic' },
);
