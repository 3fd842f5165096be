import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import type { SubresourceKind } from '../../authentication/v1/token-request.js';

/** Scale (`autoscaling/v1`): the body of a workload's `scale` subresource. */
export const scaleKind = (): SubresourceKind => ({
  group: 'autoscaling',
  version: 'v1',
  kind: 'Scale',
  schema: objectSchema({
    spec: s.obj({ replicas: s.int32({ tag: 1 }) }, { tag: 2 }),
    status: s.obj({ replicas: s.int32({ tag: 1 }), selector: s.str({ tag: 2 }) }, { tag: 3 }),
  }),
});
