import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';

export const configMap = (): ResourceType => defineResource({
  group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', shortNames: ['cm'],
  namespaced: true, hasSpec: false,
  schema: objectSchema({
    immutable: s.bool({ tag: 4 }),
    data: s.map(s.str(), { tag: 2 }),
    binaryData: s.map(s.bytes(), { tag: 3 }),
  }),
});
