import { builtinCatalog, isStatusError, type ApiObject, type ResourceType } from '@svc/api';
import { scaleOf, scaleView, withScale } from './scale.js';

const catalog = builtinCatalog();
const deployments = catalog.lookup('apps', 'v1', 'deployments') as ResourceType;
const paths = deployments.scale ?? { specReplicasPath: '', statusReplicasPath: '' };

const stored = (): ApiObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '7',
    creationTimestamp: '2026-01-01T00:00:00Z',
    labels: { a: 'b' },
    generation: 3,
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] },
  },
  status: { replicas: 2 },
});

function statusOf(f: () => unknown): { code: number; reason?: string; causes?: unknown } {
  try {
    f();
  } catch (e) {
    if (isStatusError(e)) return { code: e.status.code, reason: e.status.reason, causes: e.status.details?.causes };
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('scaleOf', () => {
  it('is the autoscaling/v1 Scale of the object: identity metadata, replicas, the selector as text', () => {
    expect(scaleOf(paths, stored())).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'web',
        namespace: 'ns',
        uid: 'u1',
        resourceVersion: '7',
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: { replicas: 3 },
      status: { replicas: 2, selector: 'app=web,tier in (a,b)' },
    });
  });

  it('omits zero desired replicas and an absent selector; a text selector is kept as it is', () => {
    const o = stored();
    o.spec = { replicas: 0 };
    delete o.status;
    expect(scaleOf(paths, o)).toMatchObject({ spec: {}, status: { replicas: 0 } });
    expect(scaleOf(paths, o).status).not.toHaveProperty('selector');
    o.status = { sel: 'x=y' };
    expect(scaleOf({ ...paths, labelSelectorPath: 'status.sel' }, o).status).toEqual({ replicas: 0, selector: 'x=y' });
  });
});

describe('withScale', () => {
  it("writes spec.replicas and carries the Scale's resourceVersion as precondition; nothing else changes", () => {
    const before = stored();
    const next = withScale({ resource: deployments, paths }, before, {
      metadata: { name: 'web', resourceVersion: '7' },
      spec: { replicas: 5 },
      status: { replicas: 99 },
    });
    expect(next.spec).toMatchObject({ replicas: 5 });
    expect(next.status).toEqual({ replicas: 2 });
    expect(next.metadata).toEqual({ ...before.metadata, resourceVersion: '7' });
    expect(before.spec).toMatchObject({ replicas: 3 });
  });

  it('an absent spec.replicas scales to 0; no resourceVersion means unconditional', () => {
    const next = withScale({ resource: deployments, paths }, stored(), { metadata: {} });
    expect(next.spec).toMatchObject({ replicas: 0 });
    expect(next.metadata.resourceVersion).toBeUndefined();
  });

  it('negative replicas: 422 Invalid on Scale spec.replicas', () => {
    expect(
      statusOf(() => withScale({ resource: deployments, paths }, stored(), { metadata: {}, spec: { replicas: -1 } })),
    ).toEqual({
      code: 422,
      reason: 'Invalid',
      causes: [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.replicas',
          message: 'Invalid value: -1: must be greater than or equal to 0',
        },
      ],
    });
  });

  it('another uid: 409 Conflict', () => {
    expect(
      statusOf(() =>
        withScale({ resource: deployments, paths }, stored(), { metadata: { uid: 'other' }, spec: { replicas: 1 } }),
      ),
    ).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  it('creates missing parents of the replicas path', () => {
    const o = stored();
    delete o.spec;
    expect(withScale({ resource: deployments, paths }, o, { metadata: {}, spec: { replicas: 2 } }).spec).toEqual({
      replicas: 2,
    });
  });
});

describe('scaleView', () => {
  it('serves types with scale paths, 404 for others', () => {
    expect(scaleView(deployments).kind).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(statusOf(() => scaleView(catalog.lookup('', 'v1', 'pods') as ResourceType))).toMatchObject({
      code: 404,
      reason: 'NotFound',
    });
  });
});
