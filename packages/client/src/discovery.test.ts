import type { APIResourceList } from '@svc/api';
import { apiResources, findApiResource, groupVersionPath, parseApiVersion } from './discovery.js';

const widgets: APIResourceList = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'example.com/v1',
  resources: [
    {
      name: 'widgets',
      singularName: 'widget',
      namespaced: true,
      kind: 'Widget',
      verbs: ['create', 'get', 'list', 'watch'],
      shortNames: ['wd'],
      categories: ['all'],
    },
    { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get', 'patch', 'update'] },
    {
      name: 'widgets/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    },
    { name: 'gadgets', singularName: '', namespaced: false, kind: 'Gadget', verbs: ['get', 'list'] },
  ],
};

describe('parseApiVersion and groupVersionPath', () => {
  it('reads the core group and named groups', () => {
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseApiVersion('example.com/v1beta1')).toEqual({ group: 'example.com', version: 'v1beta1' });
    expect(groupVersionPath({ group: '', version: 'v1' })).toBe('/api/v1');
    expect(groupVersionPath({ group: 'example.com', version: 'v1' })).toBe('/apis/example.com/v1');
  });
});

describe('apiResources', () => {
  it('lists resources with their scope, kind and subresources; subresource entries are not resources', () => {
    const rs = apiResources(widgets);
    expect(rs.map((r) => r.resource)).toEqual(['widgets', 'gadgets']);
    expect(rs[0]).toEqual({
      group: 'example.com',
      version: 'v1',
      resource: 'widgets',
      namespaced: true,
      kind: 'Widget',
      singular: 'widget',
      verbs: ['create', 'get', 'list', 'watch'],
      shortNames: ['wd'],
      categories: ['all'],
      subresources: ['status', 'scale'],
    });
    // An empty singularName falls back to the lower-cased kind, as Kubernetes' RESTMapper does.
    expect(rs[1]).toMatchObject({ singular: 'gadget', namespaced: false, subresources: [], shortNames: [] });
  });
});

describe('findApiResource', () => {
  it('finds by exact kind', () => {
    expect(findApiResource(widgets, { kind: 'Widget' })?.resource).toBe('widgets');
    expect(findApiResource(widgets, { kind: 'widget' })).toBeUndefined();
    expect(findApiResource(widgets, { kind: 'Scale' })).toBeUndefined();
  });

  it('finds by plural, singular or short name, in any case', () => {
    for (const name of ['widgets', 'widget', 'wd', 'Widgets', 'WD']) {
      expect(findApiResource(widgets, { resource: name })?.kind).toBe('Widget');
    }
    expect(findApiResource(widgets, { resource: 'widgets/status' })).toBeUndefined();
    expect(findApiResource(widgets, { resource: 'sprockets' })).toBeUndefined();
  });

  it('needs a kind or a resource name', () => {
    expect(() => findApiResource(widgets, {})).toThrow(/kind or a resource/);
  });
});
