import { labelSelector } from '../../../meta-schema.js';
import { s } from '../../../schema.js';

// Field numbers of Kubernetes' rbac/v1 generated.proto.

/** PolicyRule: `*` wildcards, `<resource>/<subresource>`, resourceNames, nonResourceURLs. */
export const policyRule = s.obj(
  {
    verbs: s.atomic(s.str(), { tag: 1 }),
    apiGroups: s.atomic(s.str(), { tag: 2 }),
    resources: s.atomic(s.str(), { tag: 3 }),
    resourceNames: s.atomic(s.str(), { tag: 4 }),
    nonResourceURLs: s.atomic(s.str(), { tag: 5 }),
  },
  { required: ['verbs'] },
);

export const rules = s.atomic(policyRule, { tag: 2 });

export const aggregationRule = s.obj(
  {
    clusterRoleSelectors: s.atomic(labelSelector, { tag: 1 }),
  },
  { tag: 3 },
);

export const subject = s.obj(
  {
    kind: s.str({ tag: 1 }),
    apiGroup: s.str({ tag: 2 }),
    name: s.str({ tag: 3 }),
    namespace: s.str({ tag: 4 }),
  },
  { required: ['kind', 'name'], structType: 'atomic' },
);

export const roleRef = s.obj(
  {
    apiGroup: s.str({ tag: 1 }),
    kind: s.str({ tag: 2 }),
    name: s.str({ tag: 3 }),
  },
  { required: ['apiGroup', 'kind', 'name'], structType: 'atomic', tag: 3 },
);

export const subjects = s.atomic(subject, { tag: 2 });
