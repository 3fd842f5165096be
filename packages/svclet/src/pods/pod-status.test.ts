import type { ContainerStatus, Pod } from '@svc/api';
import { containerStatus, podConditions, podPhase, qosClass, type ContainerInstance } from './pod-status.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function instance(o: Partial<ContainerInstance>): ContainerInstance {
  return {
    id: 'id',
    name: 'c',
    restartCount: 0,
    state: 'CONTAINER_RUNNING',
    hash: 'h',
    createdAtMs: T0,
    startedAtMs: T0,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    imageRef: 'sha256:1',
    ...o,
  };
}

function pod(restartPolicy: 'Always' | 'OnFailure' | 'Never', names = ['c']): Pod {
  return {
    metadata: { name: 'p' },
    spec: { restartPolicy, containers: names.map((name) => ({ name, image: 'busybox' })) },
  };
}

const c = { name: 'c', image: 'busybox' };

describe('containerStatus', () => {
  it('running: started and ready per probes, the previous instance as lastState', () => {
    const s = containerStatus(
      c,
      {
        instances: [
          instance({ id: 'b', restartCount: 1 }),
          instance({ id: 'a', state: 'CONTAINER_EXITED', exitCode: 2, finishedAtMs: T0 + 1000 }),
        ],
        started: true,
        ready: false,
      },
      { runtimeName: 'svc-runtime' },
    );
    expect(s).toEqual({
      name: 'c',
      image: 'busybox',
      imageID: 'sha256:1',
      containerID: 'svc-runtime://b',
      restartCount: 1,
      started: true,
      ready: false,
      state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
      lastState: {
        terminated: {
          exitCode: 2,
          reason: 'Error',
          startedAt: '2026-01-01T00:00:00Z',
          finishedAt: '2026-01-01T00:00:01Z',
          containerID: 'svc-runtime://a',
        },
      },
    });
  });

  it('exited and waiting to restart: waiting with the reason, itself as lastState; never run: waiting', () => {
    const s = containerStatus(
      c,
      {
        instances: [instance({ state: 'CONTAINER_EXITED', exitCode: 1 })],
        waiting: { reason: 'CrashLoopBackOff', message: 'm' },
        started: false,
        ready: false,
      },
      { runtimeName: 'rt' },
    );
    expect(s.state).toEqual({ waiting: { reason: 'CrashLoopBackOff', message: 'm' } });
    expect(s.lastState.terminated?.exitCode).toBe(1);
    expect(containerStatus(c, { instances: [], started: false, ready: false }, { runtimeName: 'rt' }).state).toEqual({
      waiting: { reason: 'ContainerCreating' },
    });
    const done = containerStatus(
      c,
      {
        instances: [instance({ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' })],
        started: false,
        ready: false,
      },
      { runtimeName: 'rt' },
    );
    expect(done.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(done.lastState).toEqual({});
  });
});

describe('podPhase', () => {
  const running: ContainerStatus = {
    name: 'c',
    state: { running: {} },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: '',
    imageID: '',
  };
  const ok: ContainerStatus = { ...running, state: { terminated: { exitCode: 0 } } };
  const failed: ContainerStatus = { ...running, state: { terminated: { exitCode: 1 } } };
  const crashLoop: ContainerStatus = {
    ...running,
    state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: { terminated: { exitCode: 1 } },
  };
  const creating: ContainerStatus = { ...running, state: { waiting: { reason: 'ContainerCreating' } } };

  it("follows Kubernetes' getPhase", () => {
    expect(podPhase(pod('Always'), { init: [], regular: [creating], terminal: false })).toBe('Pending');
    expect(podPhase(pod('Always'), { init: [], regular: [running], terminal: false })).toBe('Running');
    expect(podPhase(pod('Always'), { init: [], regular: [crashLoop], terminal: false })).toBe('Running');
    expect(podPhase(pod('Always'), { init: [], regular: [failed], terminal: true })).toBe('Failed');
    expect(podPhase(pod('OnFailure'), { init: [], regular: [ok], terminal: false })).toBe('Succeeded');
    expect(podPhase(pod('OnFailure'), { init: [], regular: [crashLoop], terminal: false })).toBe('Running');
    expect(podPhase(pod('Never'), { init: [], regular: [failed], terminal: false })).toBe('Failed');
    expect(
      podPhase(pod('Never', ['c', 'd']), { init: [], regular: [ok, { ...running, name: 'd' }], terminal: false }),
    ).toBe('Running');
  });

  it('waits for init containers; a failed one fails a Never pod', () => {
    const p = { ...pod('Never'), spec: { ...pod('Never').spec, initContainers: [{ name: 'i', image: 'x' }] } };
    expect(
      podPhase(p, {
        init: [{ ...running, name: 'i' }],
        regular: [{ ...creating, state: { waiting: { reason: 'PodInitializing' } } }],
        terminal: false,
      }),
    ).toBe('Pending');
    expect(
      podPhase(p, {
        init: [{ ...failed, name: 'i' }],
        regular: [{ ...creating, state: { waiting: { reason: 'PodInitializing' } } }],
        terminal: false,
      }),
    ).toBe('Failed');
  });
});

describe('podConditions', () => {
  it('lists unready containers and keeps lastTransitionTime while a status holds', () => {
    const p = pod('Always', ['a', 'b']);
    const st = (name: string, ready: boolean): ContainerStatus => ({
      name,
      state: { running: {} },
      lastState: {},
      ready,
      restartCount: 0,
      image: '',
      imageID: '',
    });
    const first = podConditions({
      pod: p,
      phase: 'Running',
      sandboxReady: true,
      init: [],
      regular: [st('a', true), st('b', false)],
      nowMs: T0,
    });
    expect(first.map((x) => [x.type, x.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'False'],
      ['ContainersReady', 'False'],
      ['PodScheduled', 'True'],
    ]);
    expect(first[2]).toMatchObject({ reason: 'ContainersNotReady', message: 'containers with unready status: [b]' });
    const later = podConditions({
      pod: p,
      phase: 'Running',
      sandboxReady: true,
      init: [],
      regular: [st('a', true), st('b', true)],
      old: first,
      nowMs: T0 + 5000,
    });
    expect(later[1]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(later[2]).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z' });
  });
});

it('qosClass: BestEffort, Burstable, Guaranteed', () => {
  const withRes = (resources: object): Pod => ({ metadata: {}, spec: { containers: [{ name: 'c', resources }] } });
  expect(qosClass(withRes({}))).toBe('BestEffort');
  expect(qosClass(withRes({ requests: { cpu: '100m' } }))).toBe('Burstable');
  expect(qosClass(withRes({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } }))).toBe(
    'Guaranteed',
  );
});
