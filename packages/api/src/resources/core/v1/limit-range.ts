import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { quantityMap } from './common.js';

const limitRangeItem = s.obj({
  type: s.str({ tag: 1 }),
  max: { ...quantityMap, tag: 2 },
  min: { ...quantityMap, tag: 3 },
  default: { ...quantityMap, tag: 4 },
  defaultRequest: { ...quantityMap, tag: 5 },
  maxLimitRequestRatio: { ...quantityMap, tag: 6 },
});

export const limitRangeSchema = objectSchema({
  spec: s.obj({ limits: s.atomic(limitRangeItem, { tag: 1 }) }, { tag: 2 }),
});

/** Kubernetes prints no columns of its own for LimitRanges: `Name` and `Created At`. */
export const limitRange = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'LimitRange',
    plural: 'limitranges',
    singular: 'limitrange',
    shortNames: ['limits'],
    namespaced: true,
    hasSpec: false,
    schema: limitRangeSchema,
  });
