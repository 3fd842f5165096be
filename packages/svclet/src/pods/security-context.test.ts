import type { Container, Pod } from '@svc/api';
import { effectiveUser, fsUserOf } from './security-context.js';

const pod = (spec: Partial<Pod['spec']>, ...containers: Array<Partial<Container>>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: containers.map((c, i) => ({ name: `c${i}`, image: 'busybox', ...c })), ...spec },
});

describe('the security context kubelet derives', () => {
  it("merges the container's settings over the pod's; fsGroup comes first among the supplementary groups", () => {
    const p = pod(
      { securityContext: { runAsUser: 1, runAsGroup: 2, fsGroup: 3, supplementalGroups: [4, 5] } },
      { securityContext: { runAsUser: 10 } },
    );
    expect(effectiveUser(p, p.spec.containers[0] as Container)).toEqual({
      runAsUser: 10,
      runAsGroup: 2,
      runAsNonRoot: undefined,
      supplementalGroups: [3, 4, 5],
    });
  });

  it('FsUser: the one runAsUser of every init and app container, else none', () => {
    expect(fsUserOf(pod({ securityContext: { runAsUser: 1234 } }, {}, {}))).toBe(1234);
    expect(fsUserOf(pod({ securityContext: { runAsUser: 1234 } }, {}, { securityContext: { runAsUser: 99 } }))).toBe(
      undefined,
    );
    expect(fsUserOf(pod({}, { securityContext: { runAsUser: 7 } }, {}))).toBe(undefined);
    expect(fsUserOf(pod({}, { securityContext: { runAsUser: 7 } }, { securityContext: { runAsUser: 7 } }))).toBe(7);
    expect(
      fsUserOf(
        pod(
          {
            securityContext: { runAsUser: 7 },
            initContainers: [{ name: 'i', image: 'busybox', securityContext: { runAsUser: 0 } }],
          },
          {},
        ),
      ),
    ).toBe(undefined);
  });
});
