import { calculateReplicaSetStatus, podFromTemplate, slowStartBatch } from './replica-set.js';
import type { Pod, ReplicaSet } from '@svc/api';

describe('slowStartBatch', () => {
  it('runs batches of 1, 2, 4, ... and stops after the first batch with a failure', async () => {
    let calls = 0;
    const batches: number[] = [];
    let inFlight = 0;
    const r = await slowStartBatch(20, 1, async () => {
      const n = ++calls;
      inFlight++;
      await Promise.resolve();
      batches.push(inFlight);
      inFlight--;
      if (n === 5) throw new Error('quota');
    });
    expect(r.successes).toBe(6);
    expect(String(r.error)).toMatch(/quota/);
    expect(calls).toBe(7);
    expect(Math.max(...batches)).toBe(4);
    expect(await slowStartBatch(5, 1, async () => undefined)).toEqual({ successes: 5 });
  });
});

const rs: ReplicaSet = {
  metadata: { name: 'web', namespace: 'ns', uid: 'rs-uid', generation: 2 },
  spec: {
    replicas: 3,
    template: {
      metadata: { labels: { app: 'web', tier: 'a' }, annotations: { x: 'y' }, finalizers: ['f.example/x'] },
      spec: { containers: [{ name: 'c' }] },
    },
  },
  status: { observedGeneration: 1 },
};

describe('podFromTemplate', () => {
  it('copies the template labels, annotations, finalizers and spec, named <rs>- and controlled by the ReplicaSet', () => {
    expect(podFromTemplate(rs)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-',
        labels: { app: 'web', tier: 'a' },
        annotations: { x: 'y' },
        finalizers: ['f.example/x'],
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web',
            uid: 'rs-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { containers: [{ name: 'c' }] },
    });
  });
});

describe('calculateReplicaSetStatus', () => {
  const pod = (labels: Record<string, string>, ready?: string): Pod => ({
    metadata: { labels },
    spec: { containers: [] },
    status: { conditions: ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: ready }] : [] },
  });
  it('counts fully labelled, ready and available pods; keeps zeros out but replicas', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    const st = calculateReplicaSetStatus(
      { ...rs, spec: { ...rs.spec, minReadySeconds: 10 } },
      [
        pod({ app: 'web', tier: 'a' }, '2026-01-01T00:00:00Z'),
        pod({ app: 'web' }, '2026-01-01T00:00:55Z'),
        pod({ app: 'web', tier: 'a' }),
      ],
      { nowMs: now },
    );
    expect(st).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 1,
      observedGeneration: 1,
    });
    expect(calculateReplicaSetStatus(rs, [], { nowMs: now })).toEqual({ replicas: 0, observedGeneration: 1 });
  });

  it('adds ReplicaFailure while creating or deleting fails, and drops it once a sync succeeds', () => {
    const failed = calculateReplicaSetStatus(rs, [], { manageError: new Error('pods "web-" is forbidden') });
    expect(failed.conditions).toEqual([
      expect.objectContaining({
        type: 'ReplicaFailure',
        status: 'True',
        reason: 'FailedCreate',
        message: 'pods "web-" is forbidden',
      }),
    ]);
    expect(calculateReplicaSetStatus({ ...rs, status: failed }, []).conditions).toBeUndefined();
  });
});
