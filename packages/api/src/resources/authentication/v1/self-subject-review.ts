import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { group } from '../../../names.js';
import { userInfo } from './user-info.js';

/** Create-only: the answer carries the caller's own user information. */
export const selfSubjectReview = (): ResourceType =>
  defineResource({
    group: group('authentication'),
    version: 'v1',
    kind: 'SelfSubjectReview',
    plural: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    namespaced: false,
    hasSpec: false,
    strategicMerge: false,
    verbs: ['create'],
    virtual: true,
    schema: objectSchema({
      status: s.obj({ userInfo: { ...userInfo, tag: 1 } }, { tag: 2 }),
    }),
  });
