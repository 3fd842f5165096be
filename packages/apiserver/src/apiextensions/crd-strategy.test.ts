// The CRD strategy and validation take whatever the decoder let through (the schema types
// fields but requires none): odd shapes are validation errors, never a throw (a 500).
import { crdStrategy } from './crd-strategy.js';
import { validateCrd, validateCrdUpdate } from './crd-validation.js';

const shapes: unknown[] = [
  { metadata: {} },
  { metadata: {}, spec: {} },
  { metadata: {}, spec: { versions: [{}] } },
  { metadata: {}, spec: { names: {}, versions: [null] } },
  { metadata: {}, spec: { versions: [{ name: 'v1', schema: {} }] } },
  { metadata: {}, spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: {} }, subresources: {} }] } },
  { metadata: {}, spec: { conversion: { webhook: { clientConfig: { service: {} } } } } },
  { metadata: {}, spec: { conversion: { strategy: 'Webhook' } }, status: {} },
  { metadata: {}, spec: {}, status: { conditions: [], acceptedNames: {} } },
];

describe('CRD strategy and validation on odd shapes', () => {
  it.each(shapes.map((s) => [JSON.stringify(s), s]))('%s gives errors, not a throw', (_name, shape) => {
    const obj = structuredClone(shape) as never;
    crdStrategy.prepareForCreate?.(obj, { subresource: '' });
    expect(validateCrd(obj).length).toBeGreaterThan(0);
    crdStrategy.prepareForUpdate?.(obj, structuredClone(obj), { subresource: '' });
    expect(validateCrdUpdate(obj, structuredClone(obj)).length).toBeGreaterThan(0);
  });
});
