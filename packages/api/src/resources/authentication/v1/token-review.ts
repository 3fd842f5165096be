import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { group } from '../../../names.js';
import { userInfo } from './user-info.js';

/** Create-only: authenticates `spec.token` (for delegated authentication) and answers in `status`. */
export const tokenReview = (): ResourceType =>
  defineResource({
    group: group('authentication'),
    version: 'v1',
    kind: 'TokenReview',
    plural: 'tokenreviews',
    singular: 'tokenreview',
    namespaced: false,
    strategicMerge: false,
    verbs: ['create'],
    virtual: true,
    schema: objectSchema({
      spec: s.obj({ token: s.str({ tag: 1 }), audiences: s.atomic(s.str(), { tag: 2 }) }, { tag: 2 }),
      status: s.obj(
        {
          authenticated: s.bool({ tag: 1 }),
          user: { ...userInfo, tag: 2 },
          error: s.str({ tag: 3 }),
          audiences: s.atomic(s.str(), { tag: 4 }),
        },
        { tag: 3 },
      ),
    }),
  });
