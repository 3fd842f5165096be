// LimitPodHardAntiAffinityTopology: required pod anti-affinity only by node host name.
import { useNaming } from '@svc/api';
import { LimitPodHardAntiAffinityTopology } from './limit-pod-hard-anti-affinity-topology.js';
import { attributes, failure, podObject } from './admission-testing.js';

const withAntiAffinity = (keys: string[], preferred: string[] = []): ReturnType<typeof podObject> =>
  podObject({
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: keys.map((topologyKey) => ({ topologyKey, labelSelector: {} })),
        preferredDuringSchedulingIgnoredDuringExecution: preferred.map((topologyKey) => ({
          weight: 1,
          podAffinityTerm: { topologyKey },
        })),
      },
    },
  });

const check = (pod: ReturnType<typeof podObject>, operation: 'CREATE' | 'UPDATE' = 'CREATE'): Promise<void> =>
  new LimitPodHardAntiAffinityTopology().validate(
    attributes({ resource: 'pods', operation, object: pod, oldObject: pod }),
  );

afterEach(() => useNaming('svc'));

it('allows the host name key, preferred terms and pods without anti-affinity', async () => {
  await check(withAntiAffinity(['svc.io/hostname'], ['topology.svc.io/zone']));
  await check(podObject());
});

it('refuses any other required topology key with Kubernetes message, on create and update', async () => {
  const s = await failure(check(withAntiAffinity(['svc.io/hostname', 'topology.svc.io/zone'])));
  expect([s.code, s.message]).toEqual([
    403,
    'pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.svc.io/zone but only key svc.io/hostname is allowed',
  ]);
  await failure(check(withAntiAffinity(['zone']), 'UPDATE'));
  useNaming('kubernetes');
  await check(withAntiAffinity(['kubernetes.io/hostname']));
  expect((await failure(check(withAntiAffinity(['svc.io/hostname'])))).message).toContain(
    'but only key kubernetes.io/hostname is allowed',
  );
});
