import { fieldErrorMessage } from '@svc/api';
import { embeddedResourceErrors, validateEmbeddedResources } from './embedded-meta.js';
import { extKey, type JSONSchemaProps } from './types.js';

const embedded: JSONSchemaProps = {
  type: 'object',
  [extKey('embedded-resource')]: true,
  [extKey('preserve-unknown-fields')]: true,
};

describe('embedded resources (Kubernetes objectmeta.Validate)', () => {
  it('require apiVersion and kind, and check them', () => {
    expect(embeddedResourceErrors({}, 'x').map(fieldErrorMessage)).toEqual([
      'x.apiVersion: Required value: must not be empty',
      'x.kind: Required value: must not be empty',
    ]);
    expect(embeddedResourceErrors({ apiVersion: 'a/b/c', kind: 3 }, 'x').map(fieldErrorMessage)).toEqual([
      'x.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      'x.kind: Invalid value: 3: must be a string',
    ]);
  });

  it('validate metadata as ObjectMeta with path-segment names', () => {
    const meta = { name: '..', generateName: 'a%', namespace: 'Bad_NS', finalizers: ['plain'], generation: -1 };
    const msgs = embeddedResourceErrors({ apiVersion: 'v1', kind: 'Pod', metadata: meta }, 'x').map(fieldErrorMessage);
    expect(msgs).toEqual([
      'x.metadata.generateName: Invalid value: "a%": may not contain \'%\'',
      'x.metadata.name: Invalid value: "..": may not be \'..\'',
      expect.stringMatching(/^x\.metadata\.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label/),
      'x.metadata.generation: Invalid value: -1: must be greater than or equal to 0',
      'x.metadata.finalizers[0]: Forbidden: name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('are found in lists and maps of the value', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { list: { type: 'array', items: embedded }, map: { type: 'object', additionalProperties: embedded } },
    };
    const msgs = validateEmbeddedResources(
      schema,
      { list: [{ apiVersion: 'v1' }], map: { a: { kind: 'Pod' } } },
      'spec',
    );
    expect(msgs.map(fieldErrorMessage)).toEqual([
      'spec.list[0].kind: Required value: must not be empty',
      'spec.map[a].apiVersion: Required value: must not be empty',
    ]);
  });
});
