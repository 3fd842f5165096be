import type { Container, PodSandbox } from './cri-types.js';
import { matchesContainer, matchesSandbox } from './process-runtime.js';

const sandbox: PodSandbox = {
  id: 'abc123',
  metadata: null,
  state: 'SANDBOX_READY',
  createdAt: 1,
  labels: { app: 'web', tier: 'front' },
  annotations: {},
  runtimeHandler: '',
};
const container: Container = {
  id: 'def456',
  podSandboxId: 'abc123',
  metadata: null,
  image: null,
  imageRef: '',
  state: 'CONTAINER_RUNNING',
  createdAt: 1,
  labels: { app: 'web' },
  annotations: {},
  imageId: '',
};

describe('CRI list filters', () => {
  it('match sandboxes by id prefix, state and labels, all ANDed', () => {
    expect(matchesSandbox(sandbox, null)).toBe(true);
    expect(matchesSandbox(sandbox, { id: 'abc', state: null, labelSelector: {} })).toBe(true);
    expect(matchesSandbox(sandbox, { id: 'x', state: null, labelSelector: {} })).toBe(false);
    expect(matchesSandbox(sandbox, { id: '', state: { state: 'SANDBOX_NOTREADY' }, labelSelector: {} })).toBe(false);
    expect(matchesSandbox(sandbox, { id: '', state: { state: 'SANDBOX_READY' }, labelSelector: { app: 'web' } })).toBe(
      true,
    );
    expect(matchesSandbox(sandbox, { id: '', state: null, labelSelector: { app: 'web', tier: 'back' } })).toBe(false);
  });

  it('match containers by id, sandbox, state and labels, all ANDed', () => {
    expect(matchesContainer(container, { id: '', state: null, podSandboxId: 'abc123', labelSelector: {} })).toBe(true);
    expect(matchesContainer(container, { id: '', state: null, podSandboxId: 'zzz', labelSelector: {} })).toBe(false);
    expect(
      matchesContainer(container, {
        id: 'def',
        state: { state: 'CONTAINER_RUNNING' },
        podSandboxId: '',
        labelSelector: { app: 'web' },
      }),
    ).toBe(true);
    expect(
      matchesContainer(container, {
        id: '',
        state: { state: 'CONTAINER_EXITED' },
        podSandboxId: '',
        labelSelector: {},
      }),
    ).toBe(false);
    expect(matchesContainer(container, { id: '', state: null, podSandboxId: '', labelSelector: { app: 'db' } })).toBe(
      false,
    );
  });
});
