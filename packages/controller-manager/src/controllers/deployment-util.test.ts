import {
  computeHash,
  equalIgnoreHash,
  findActiveOrLatest,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  proportion,
  scaledValue,
  setNewReplicaSetAnnotations,
} from './deployment-util.js';
import type { Deployment, DeploymentStrategy, IntOrString, ReplicaSet } from '@svc/api';

interface Strategy {
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
  type?: DeploymentStrategy['type'];
}

/** A Deployment of `replicas` with `strategy` (a rolling update when no type is given). */
function deployment(
  replicas: number,
  { maxSurge: maxSurgeV, maxUnavailable: maxUnavailableV, type = 'RollingUpdate' }: Strategy = {},
): Deployment {
  return {
    metadata: { name: 'd', uid: 'd-uid', annotations: { team: 'a', 'deployment.svc.io/revision': '7' } },
    spec: {
      replicas,
      strategy: { type, rollingUpdate: { maxSurge: maxSurgeV, maxUnavailable: maxUnavailableV } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: [] } },
    },
    status: { replicas: 10 },
  };
}

function rs(
  name: string,
  replicas: number,
  o: { created?: string; annotations?: Record<string, string> } = {},
): ReplicaSet {
  return {
    metadata: { name, uid: name, creationTimestamp: o.created ?? '2026-01-01T00:00:00Z', annotations: o.annotations },
    spec: { replicas, template: { spec: { containers: [] } } },
  };
}

describe('surge and unavailability', () => {
  it('percentages: surge rounds up, unavailable rounds down', () => {
    expect(scaledValue('25%', 10, true)).toBe(3);
    expect(scaledValue('25%', 10, false)).toBe(2);
    expect(scaledValue(4, 10, false)).toBe(4);
    expect(() => scaledValue('25', 10, true)).toThrow(/invalid value/);
    expect(maxSurge(deployment(4, { maxSurge: '30%', maxUnavailable: '30%' }))).toBe(2);
    expect(maxUnavailable(deployment(4, { maxSurge: '30%', maxUnavailable: '30%' }))).toBe(1);
  });

  it('both 0 after rounding make maxUnavailable 1; maxUnavailable is capped at replicas; Recreate has neither', () => {
    expect(maxUnavailable(deployment(3, { maxSurge: 0, maxUnavailable: '10%' }))).toBe(1);
    expect(maxUnavailable(deployment(2, { maxSurge: 0, maxUnavailable: 5 }))).toBe(2);
    expect(maxUnavailable(deployment(0, { maxSurge: 0, maxUnavailable: 5 }))).toBe(0);
    expect(maxSurge(deployment(3, { maxSurge: 1, maxUnavailable: 1, type: 'Recreate' }))).toBe(0);
    expect(maxUnavailable(deployment(3, { maxSurge: 1, maxUnavailable: 1, type: 'Recreate' }))).toBe(0);
  });

  it('the new ReplicaSet grows up to replicas + maxSurge in all', () => {
    const d = deployment(4, { maxSurge: 2, maxUnavailable: 0 });
    const newRS = rs('new', 0);
    expect(newRSNewReplicas(d, [rs('old', 4), newRS], newRS)).toBe(2);
    expect(newRSNewReplicas(d, [rs('old', 4), rs('new', 2)], rs('new', 2))).toBe(2);
    expect(newRSNewReplicas(d, [rs('old', 1), rs('new', 2)], rs('new', 2))).toBe(4);
    expect(newRSNewReplicas(deployment(4, { maxSurge: 2, maxUnavailable: 0, type: 'Recreate' }), [newRS], newRS)).toBe(
      4,
    );
  });
});

describe('templates and hashes', () => {
  it('hashes to Kubernetes-style safe strings, different per collision count', () => {
    const t = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'a' }] } };
    const h = computeHash(t);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(computeHash(structuredClone(t))).toBe(h);
    expect(computeHash(t, 1)).not.toBe(h);
    expect(computeHash({ ...t, spec: { containers: [{ name: 'c', image: 'b' }] } })).not.toBe(h);
  });

  it('compares templates ignoring pod-template-hash', () => {
    expect(
      equalIgnoreHash(
        { metadata: { labels: { app: 'x', 'pod-template-hash': 'abc' } }, spec: { containers: [] } },
        { metadata: { labels: { app: 'x' } }, spec: { containers: [] } },
      ),
    ).toBe(true);
    expect(
      equalIgnoreHash(
        { metadata: { labels: { app: 'y' } }, spec: { containers: [] } },
        { metadata: { labels: { app: 'x' } }, spec: { containers: [] } },
      ),
    ).toBe(false);
    // Zero-valued fields equal absent ones (typed round trips drop them), in comparison and hash.
    const typed = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'a' }] } };
    const zeros = {
      metadata: { labels: { app: 'x' }, generation: 0 },
      spec: { hostNetwork: false, containers: [{ name: 'c', image: 'a', stdin: false, resources: {}, args: [] }] },
    };
    expect(equalIgnoreHash(typed, zeros)).toBe(true);
    expect(computeHash(typed)).toBe(computeHash(zeros));
  });
});

describe('proportional scaling', () => {
  it('gives each ReplicaSet its share of the new size, from its max-replicas annotation', () => {
    // 10 replicas + 3 surge = 13 before; scaling to 20 (+5 surge = 25): an RS of 8 goes to round(8*25/13) = 15.
    const d = deployment(20, { maxSurge: '25%', maxUnavailable: '25%' });
    const big = rs('big', 8, { annotations: { 'deployment.svc.io/max-replicas': '13' } });
    expect(proportion(big, d, { toAdd: 12, added: 0 })).toBe(7);
    expect(proportion(big, d, { toAdd: 12, added: 10 })).toBe(2);
    expect(proportion(big, deployment(0, { maxSurge: 1, maxUnavailable: 1 }), { toAdd: -8, added: 0 })).toBe(-8);
  });

  it('finds the single active ReplicaSet, or the newest when none is active', () => {
    const older = rs('older', 0, { created: '2026-01-01T00:00:00Z' });
    const newer = rs('newer', 0, { created: '2026-01-02T00:00:00Z' });
    expect(findActiveOrLatest(undefined, [older, newer])?.metadata.name).toBe('newer');
    expect(findActiveOrLatest(rs('new', 0), [older])?.metadata.name).toBe('new');
    expect(findActiveOrLatest(rs('new', 0), [rs('a', 2)])?.metadata.name).toBe('a');
    expect(findActiveOrLatest(rs('new', 1), [rs('a', 2)])).toBeUndefined();
  });
});

describe('revision annotations', () => {
  it('copies the Deployment annotations, raises the revision and keeps the history of a rolled-back ReplicaSet', () => {
    const d = deployment(3, { maxSurge: 1, maxUnavailable: 1 });
    const fresh = rs('new', 0);
    expect(setNewReplicaSetAnnotations(d, fresh, { newRevision: 8, exists: false })).toBe(true);
    expect(fresh.metadata.annotations).toEqual({
      team: 'a',
      'deployment.svc.io/revision': '8',
      'deployment.svc.io/desired-replicas': '3',
      'deployment.svc.io/max-replicas': '4',
    });
    const rolledBack = rs('old', 0, {
      annotations: { 'deployment.svc.io/revision': '2', 'deployment.svc.io/revision-history': '1' },
    });
    setNewReplicaSetAnnotations(d, rolledBack, { newRevision: 8, exists: true });
    expect(rolledBack.metadata.annotations?.['deployment.svc.io/revision']).toBe('8');
    expect(rolledBack.metadata.annotations?.['deployment.svc.io/revision-history']).toBe('1,2');
    expect(setNewReplicaSetAnnotations(d, rolledBack, { newRevision: 8, exists: true })).toBe(false);
  });
});
