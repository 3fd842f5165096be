// AlwaysPullImages: Always on every container of created and re-imaged pods; validation refuses others.
import type { Pod } from '@svc/api';
import { AlwaysPullImages } from './always-pull-images.js';
import { attributes, failure, podObject } from './admission-testing.js';

const spec = {
  initContainers: [{ name: 'i', image: 'init', imagePullPolicy: 'IfNotPresent' }],
  containers: [
    { name: 'c', image: 'app', imagePullPolicy: 'Never' },
    { name: 'd', image: 'side' },
  ],
  ephemeralContainers: [{ name: 'e', image: 'debug' }],
};
const policies = (p: Pod): Array<string | undefined> =>
  [...(p.spec.initContainers ?? []), ...p.spec.containers, ...(p.spec.ephemeralContainers ?? [])].map(
    (c) => c.imagePullPolicy,
  );

it('sets Always on init, regular and ephemeral containers of a created pod', async () => {
  const a = attributes({ resource: 'pods', object: podObject(structuredClone(spec)) });
  const plugin = new AlwaysPullImages();
  await plugin.admit(a);
  await plugin.validate(a);
  expect(policies(a.object as Pod)).toEqual(['Always', 'Always', 'Always', 'Always']);
});

it('on update, only when the pod brings an image its old version did not have', async () => {
  const plugin = new AlwaysPullImages();
  const old = podObject(structuredClone(spec));
  const same = attributes({
    resource: 'pods',
    operation: 'UPDATE',
    object: podObject(structuredClone(spec)),
    oldObject: old,
  });
  await plugin.admit(same);
  await plugin.validate(same);
  expect(policies(same.object as Pod)).toEqual(['IfNotPresent', 'Never', undefined, undefined]);
  const renamed = structuredClone(spec);
  renamed.containers[1] = { name: 'd', image: 'side:2' };
  const changed = attributes({ resource: 'pods', operation: 'UPDATE', object: podObject(renamed), oldObject: old });
  await plugin.admit(changed);
  expect(policies(changed.object as Pod)).toEqual(['Always', 'Always', 'Always', 'Always']);
});

it('refuses in validation what a later mutation set otherwise, as Kubernetes aggregates it (a plain 500)', async () => {
  const plugin = new AlwaysPullImages();
  const one = attributes({
    resource: 'pods',
    object: podObject({ containers: [{ name: 'c', image: 'x', imagePullPolicy: 'Never' }] }),
  });
  const s = await failure(plugin.validate(one));
  expect(s.code).toBe(500);
  expect(s.reason).toBeUndefined();
  expect(s.message).toBe(
    'pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"',
  );
  const two = attributes({ resource: 'pods', object: podObject(structuredClone(spec)) });
  expect((await failure(plugin.validate(two))).message).toBe(
    '[pods "p" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always", ' +
      'pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", ' +
      'pods "p" is forbidden: spec.containers[1].imagePullPolicy: Unsupported value: "": supported values: "Always", ' +
      'pods "p" is forbidden: spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: "": supported values: "Always"]',
  );
});

it('leaves subresources and other resources alone', async () => {
  const plugin = new AlwaysPullImages();
  const status = attributes({
    resource: 'pods',
    subresource: 'status',
    operation: 'UPDATE',
    object: podObject(structuredClone(spec)),
    oldObject: podObject(),
  });
  await plugin.admit(status);
  await plugin.validate(status);
  expect(policies(status.object as Pod)).toEqual(['IfNotPresent', 'Never', undefined, undefined]);
  await plugin.validate(attributes({ resource: 'configmaps', object: { metadata: { name: 'x' } } }));
});
