import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { group } from '../../../names.js';

// Create-only reviews of `authorization/v1`; field numbers of Kubernetes' generated.proto.

const resourceAttributes = s.obj(
  {
    namespace: s.str({ tag: 1 }),
    verb: s.str({ tag: 2 }),
    group: s.str({ tag: 3 }),
    version: s.str({ tag: 4 }),
    resource: s.str({ tag: 5 }),
    subresource: s.str({ tag: 6 }),
    name: s.str({ tag: 7 }),
  },
  { tag: 1 },
);

const nonResourceAttributes = s.obj({ path: s.str({ tag: 1 }), verb: s.str({ tag: 2 }) }, { tag: 2 });

const accessReviewStatus = s.obj(
  {
    allowed: s.bool({ tag: 1 }),
    reason: s.str({ tag: 2 }),
    evaluationError: s.str({ tag: 3 }),
    denied: s.bool({ tag: 4 }),
  },
  { tag: 3 },
);

const subjectAccessReviewSpec = s.obj(
  {
    resourceAttributes,
    nonResourceAttributes,
    user: s.str({ tag: 3 }),
    groups: s.atomic(s.str(), { tag: 4 }),
    extra: s.map(s.atomic(s.str()), { tag: 5 }),
    uid: s.str({ tag: 6 }),
  },
  { tag: 2 },
);

export const subjectAccessReviewSchema = objectSchema(
  { spec: subjectAccessReviewSpec, status: accessReviewStatus },
  { required: ['spec'] },
);

const base = () => ({
  group: group('authorization'),
  version: 'v1',
  strategicMerge: false,
  verbs: ['create'] as const,
  virtual: true,
});

/** Whether any user may do something (for delegated authorization). */
export const subjectAccessReview = (): ResourceType =>
  defineResource({
    ...base(),
    kind: 'SubjectAccessReview',
    plural: 'subjectaccessreviews',
    singular: 'subjectaccessreview',
    namespaced: false,
    schema: subjectAccessReviewSchema,
  });

/** Whether any user may do something in the URL's namespace. */
export const localSubjectAccessReview = (): ResourceType =>
  defineResource({
    ...base(),
    kind: 'LocalSubjectAccessReview',
    plural: 'localsubjectaccessreviews',
    singular: 'localsubjectaccessreview',
    namespaced: true,
    schema: subjectAccessReviewSchema,
  });

/** Whether the caller may do something. */
export const selfSubjectAccessReview = (): ResourceType =>
  defineResource({
    ...base(),
    kind: 'SelfSubjectAccessReview',
    plural: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    schema: objectSchema(
      {
        spec: s.obj({ resourceAttributes, nonResourceAttributes }, { tag: 2 }),
        status: accessReviewStatus,
      },
      { required: ['spec'] },
    ),
  });

/** Everything the caller may do in a namespace. */
export const selfSubjectRulesReview = (): ResourceType =>
  defineResource({
    ...base(),
    kind: 'SelfSubjectRulesReview',
    plural: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview',
    namespaced: false,
    schema: objectSchema({
      spec: s.obj({ namespace: s.str({ tag: 1 }) }, { tag: 2 }),
      status: s.obj(
        {
          resourceRules: s.atomic(
            s.obj({
              verbs: s.atomic(s.str(), { tag: 1 }),
              apiGroups: s.atomic(s.str(), { tag: 2 }),
              resources: s.atomic(s.str(), { tag: 3 }),
              resourceNames: s.atomic(s.str(), { tag: 4 }),
            }),
            { tag: 1 },
          ),
          nonResourceRules: s.atomic(
            s.obj({ verbs: s.atomic(s.str(), { tag: 1 }), nonResourceURLs: s.atomic(s.str(), { tag: 2 }) }),
            { tag: 2 },
          ),
          incomplete: s.bool({ tag: 3 }),
          evaluationError: s.str({ tag: 4 }),
        },
        { tag: 3 },
      ),
    }),
  });
