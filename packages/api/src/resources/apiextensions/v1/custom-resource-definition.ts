import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { s } from '../../../schema.js';

/** `names` and `status.acceptedNames`. */
const names = s.obj(
  {
    plural: s.str({ tag: 1 }),
    singular: s.str({ tag: 2 }),
    shortNames: s.atomic(s.str(), { tag: 3 }),
    kind: s.str({ tag: 4 }),
    listKind: s.str({ tag: 5 }),
    categories: s.atomic(s.str(), { tag: 6 }),
  },
  {},
);

const printerColumn = s.obj(
  {
    name: s.str({ tag: 1 }),
    type: s.str({ tag: 2 }),
    format: s.str({ tag: 3 }),
    description: s.str({ tag: 4 }),
    priority: s.int32({ tag: 5 }),
    jsonPath: s.str({ tag: 6 }),
  },
  {},
);

const version = s.obj(
  {
    name: s.str({ tag: 1 }),
    served: s.bool({ tag: 2 }),
    storage: s.bool({ tag: 3 }),
    deprecated: s.bool({ tag: 7 }),
    deprecationWarning: s.str({ tag: 8 }),
    // JSONSchemaProps is recursive: kept as written (no Protobuf form; answers fall back to JSON).
    schema: s.obj({ openAPIV3Schema: s.any({ tag: 1 }) }, { tag: 4 }),
    subresources: s.obj(
      {
        status: s.any({ tag: 1 }),
        scale: s.obj(
          {
            specReplicasPath: s.str({ tag: 1 }),
            statusReplicasPath: s.str({ tag: 2 }),
            labelSelectorPath: s.str({ tag: 3 }),
          },
          { tag: 2 },
        ),
      },
      { tag: 5 },
    ),
    additionalPrinterColumns: s.atomic(printerColumn, { tag: 6 }),
    selectableFields: s.atomic(s.obj({ jsonPath: s.str({ tag: 1 }) }, {}), { tag: 9 }),
  },
  {},
);

const webhookClientConfig = s.obj({
  url: s.str({ tag: 3 }),
  service: s.obj(
    {
      namespace: s.str({ tag: 1 }),
      name: s.str({ tag: 2 }),
      path: s.str({ tag: 3 }),
      port: s.int32({ tag: 4 }),
    },
    { tag: 1 },
  ),
  caBundle: s.bytes({ tag: 2 }),
});

/** Required fields are left to validation (Kubernetes' messages), not the decoder. */
export const customResourceDefinitionSchema = objectSchema({
  spec: s.obj(
    {
      group: s.str({ tag: 1 }),
      names: { ...names, tag: 3 },
      scope: s.str({ tag: 4 }),
      versions: s.atomic(version, { tag: 7 }),
      conversion: s.obj(
        {
          strategy: s.str({ tag: 1 }),
          webhook: s.obj(
            {
              clientConfig: { ...webhookClientConfig, tag: 2 },
              conversionReviewVersions: s.atomic(s.str(), { tag: 3 }),
            },
            { tag: 2 },
          ),
        },
        { tag: 9 },
      ),
      preserveUnknownFields: s.bool({ tag: 10 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      conditions: s.keyed(
        s.obj(
          {
            type: s.str({ tag: 1 }),
            status: s.str({ tag: 2 }),
            lastTransitionTime: s.time({ tag: 3 }),
            reason: s.str({ tag: 4 }),
            message: s.str({ tag: 5 }),
            observedGeneration: s.int({ tag: 6 }),
          },
          {},
        ),
        ['type'],
        { tag: 1 },
      ),
      acceptedNames: { ...names, tag: 2 },
      storedVersions: s.atomic(s.str(), { tag: 3 }),
      observedGeneration: s.int({ tag: 4 }),
    },
    { tag: 3 },
  ),
});

/** `apiextensions.<suffix>/v1` CustomResourceDefinition: cluster scoped, with a status subresource. */
export const customResourceDefinition = (): ResourceType =>
  defineResource({
    group: group('apiextensions'),
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    namespaced: false,
    subresources: ['status'],
    schema: customResourceDefinitionSchema,
  });
