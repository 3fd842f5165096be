import { useNaming } from '@svc/api';
import { crdManifest } from './crd-manifest.js';

afterAll(() => {
  useNaming('svc');
});

describe('crdManifest', () => {
  const schema = { type: 'object', properties: { spec: { type: 'object' } } };

  it('fills in the name, scope, singular, served and the storage of an only version', () => {
    useNaming('svc');
    expect(
      crdManifest({ group: 'shop.example.com', plural: 'widgets', kind: 'Widget', versions: [{ name: 'v1', schema }] }),
    ).toEqual({
      apiVersion: 'apiextensions.svc.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.shop.example.com' },
      spec: {
        group: 'shop.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    });
  });

  it('takes names, other version and spec fields, and the naming to spell the apiVersion in', () => {
    useNaming('svc');
    const crd = crdManifest({
      group: 'g.example.com',
      plural: 'gadgets',
      kind: 'Gadget',
      scope: 'Cluster',
      names: { shortNames: ['gd'], categories: ['all'] },
      versions: [
        { name: 'v1beta1', served: false },
        { name: 'v1', storage: true, subresources: { status: {} } },
      ],
      spec: { conversion: { strategy: 'None' } },
      naming: 'kubernetes',
    });
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.spec).toEqual({
      group: 'g.example.com',
      scope: 'Cluster',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gd'], categories: ['all'] },
      versions: [
        { name: 'v1beta1', served: false, storage: false },
        { name: 'v1', served: true, storage: true, subresources: { status: {} } },
      ],
      conversion: { strategy: 'None' },
    });
  });
});
