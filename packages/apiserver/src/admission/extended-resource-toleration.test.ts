// ExtendedResourceToleration: a NoSchedule toleration for each extended resource a pod requests.
import { useNaming, type Pod } from '@svc/api';
import { ExtendedResourceToleration, isExtendedResourceName } from './extended-resource-toleration.js';
import { attributes, podObject } from './admission-testing.js';

afterEach(() => useNaming('svc'));

it('knows extended resource names from native ones', () => {
  expect(isExtendedResourceName('example.com/gpu')).toBe(true);
  expect(isExtendedResourceName('cpu')).toBe(false);
  expect(isExtendedResourceName('svc.io/thing')).toBe(false);
  expect(isExtendedResourceName('requests.example.com/gpu')).toBe(false);
  expect(isExtendedResourceName('example.com/not valid')).toBe(false);
  useNaming('kubernetes');
  expect(isExtendedResourceName('kubernetes.io/thing')).toBe(false);
  expect(isExtendedResourceName('svc.io/thing')).toBe(true);
});

it('adds one toleration per extended resource, in name order, replacing a differing match', async () => {
  const pod = podObject({
    initContainers: [{ name: 'i', image: 'x', resources: { requests: { 'example.com/fpga': '1', memory: '1Gi' } } }],
    containers: [
      {
        name: 'c',
        image: 'x',
        resources: { requests: { 'example.com/gpu': '2', cpu: '1' }, limits: { 'example.com/gpu': '2' } },
      },
      { name: 'd', image: 'x', resources: { requests: { 'example.com/fpga': '1' } } },
    ],
    tolerations: [
      { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 },
      { key: 'other', operator: 'Exists' },
    ],
  });
  const a = attributes({ resource: 'pods', object: pod });
  await new ExtendedResourceToleration().admit(a);
  expect((a.object as Pod).spec.tolerations).toEqual([
    { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'other', operator: 'Exists' },
    { key: 'example.com/fpga', operator: 'Exists', effect: 'NoSchedule' },
  ]);
  // Again on update: nothing changes.
  const again = attributes({
    resource: 'pods',
    operation: 'UPDATE',
    object: structuredClone(a.object),
    oldObject: a.object,
  });
  await new ExtendedResourceToleration().admit(again);
  expect(again.object).toEqual(a.object);
});

it('leaves pods without extended resources, subresources and other types alone', async () => {
  const plain = attributes({
    resource: 'pods',
    object: podObject({ containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] }),
  });
  await new ExtendedResourceToleration().admit(plain);
  expect((plain.object as Pod).spec.tolerations).toBeUndefined();
  const status = attributes({
    resource: 'pods',
    subresource: 'status',
    operation: 'UPDATE',
    object: podObject({ containers: [{ name: 'c', image: 'x', resources: { requests: { 'example.com/gpu': '1' } } }] }),
    oldObject: podObject(),
  });
  await new ExtendedResourceToleration().admit(status);
  expect((status.object as Pod).spec.tolerations).toBeUndefined();
});
