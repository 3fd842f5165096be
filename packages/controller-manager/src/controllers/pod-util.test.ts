import { isPodAvailable, sortPodsForDeletion } from './pod-util.js';
import type { Pod, PodPhase } from '@svc/api';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function pod(
  name: string,
  o: { node?: string; phase?: PodPhase; ready?: string; created?: string; restarts?: number; cost?: string } = {},
): Pod {
  return {
    metadata: {
      name,
      uid: name,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      annotations: o.cost ? { 'controller.svc.io/pod-deletion-cost': o.cost } : {},
    },
    spec: { containers: [], nodeName: o.node },
    status: {
      phase: o.phase ?? 'Running',
      conditions: o.ready ? [{ type: 'Ready', status: 'True', lastTransitionTime: o.ready }] : [],
      containerStatuses: [
        { name: 'c', state: {}, lastState: {}, ready: false, restartCount: o.restarts ?? 0, image: 'i', imageID: '' },
      ],
    },
  };
}

const names = (ps: Pod[]): string[] => ps.map((p) => p.metadata.name ?? '');

describe('sortPodsForDeletion', () => {
  it('puts unassigned, then earlier phases, then not-ready pods first', () => {
    const ps = [
      pod('ready', { node: 'n1', ready: '2026-01-01T00:01:00Z' }),
      pod('running', { node: 'n1' }),
      pod('pending', { node: 'n1', phase: 'Pending' }),
      pod('unassigned'),
    ];
    expect(names(sortPodsForDeletion(ps, ps, NOW))).toEqual(['unassigned', 'pending', 'running', 'ready']);
  });

  it('then lower deletion cost, more pods on the same node, shorter readiness, more restarts, newer pods', () => {
    const ready = '2026-01-01T00:01:00Z';
    expect(
      names(
        sortPodsForDeletion([pod('cheap', { node: 'a', cost: '-5' }), pod('dear', { node: 'a', cost: '5' })], [], NOW),
      ),
    ).toEqual(['cheap', 'dear']);
    const crowded = [pod('alone', { node: 'a' }), pod('crowd', { node: 'b' })];
    expect(names(sortPodsForDeletion(crowded, [...crowded, pod('x', { node: 'b' })], NOW))).toEqual(['crowd', 'alone']);
    expect(
      names(
        sortPodsForDeletion(
          [pod('old', { node: 'a', ready }), pod('fresh', { node: 'a', ready: '2026-01-01T00:09:59Z' })],
          [],
          NOW,
        ),
      ),
    ).toEqual(['fresh', 'old']);
    expect(
      names(sortPodsForDeletion([pod('stable', { node: 'a' }), pod('flaky', { node: 'a', restarts: 3 })], [], NOW)),
    ).toEqual(['flaky', 'stable']);
    expect(
      names(
        sortPodsForDeletion(
          [pod('older', { node: 'a' }), pod('newer', { node: 'a', created: '2026-01-01T00:09:00Z' })],
          [],
          NOW,
        ),
      ),
    ).toEqual(['newer', 'older']);
  });
});

describe('isPodAvailable', () => {
  it('needs Ready, and Ready for longer than minReadySeconds', () => {
    const p = pod('p', { ready: '2026-01-01T00:09:55Z' });
    expect(isPodAvailable(p, 0, NOW)).toBe(true);
    expect(isPodAvailable(p, 4, NOW)).toBe(true);
    expect(isPodAvailable(p, 5, NOW)).toBe(false);
    expect(isPodAvailable(pod('q'), 0, NOW)).toBe(false);
  });
});
