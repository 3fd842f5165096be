import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import type { SubresourceKind } from '../../authentication/v1/token-request.js';
import { objectReference } from './common.js';

const bindingSchema = () => objectSchema({ target: { ...objectReference, tag: 2 } }, { required: ['target'] });

/**
 * Binding (core v1): assigns a pod to a node. Create-only and never stored: `bindings` names
 * the pod in `metadata.name`, `pods/<name>/binding` in the URL; either sets the pod's
 * `spec.nodeName` (the scheduler's write).
 */
export const binding = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'Binding',
    plural: 'bindings',
    singular: 'binding',
    namespaced: true,
    hasSpec: false,
    strategicMerge: false,
    verbs: ['create'],
    virtual: true,
    schema: bindingSchema(),
  });

/** The body of `pods/<name>/binding`. */
export const bindingKind = (): SubresourceKind => ({
  group: '',
  version: 'v1',
  kind: 'Binding',
  schema: bindingSchema(),
});
