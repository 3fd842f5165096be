import { s } from '../../../schema.js';

export const objectReference = s.obj(
  {
    kind: s.str({ tag: 1 }),
    namespace: s.str({ tag: 2 }),
    name: s.str({ tag: 3 }),
    uid: s.str({ tag: 4 }),
    apiVersion: s.str({ tag: 5 }),
    resourceVersion: s.str({ tag: 6 }),
    fieldPath: s.str({ tag: 7 }),
  },
  { structType: 'atomic' },
);

export const localObjectReference = s.obj({ name: s.str({ tag: 1 }) }, { structType: 'atomic' });

/** PodCondition. */
export const podCondition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    lastProbeTime: s.time({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
    observedGeneration: s.int64({ tag: 7 }),
  },
  { required: ['type', 'status'] },
);

export const quantityMap = s.map(s.quantity());
