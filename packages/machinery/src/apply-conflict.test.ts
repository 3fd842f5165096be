import { applyConflictError, conflictManagerName, type ApplyConflict } from './apply-conflict.js';

const c = (manager: string, path: string[], more: Partial<ApplyConflict> = {}): ApplyConflict => ({
  manager,
  operation: 'Update',
  apiVersion: 'v1',
  path,
  ...more,
});

describe('conflictManagerName', () => {
  test.each<[Omit<ApplyConflict, 'path'>, string]>([
    [{ manager: 'm', operation: 'Apply', apiVersion: 'v1' }, '"m"'],
    [{ manager: 'm', operation: 'Update', apiVersion: 'apps/v1' }, '"m" using apps/v1'],
    [
      { manager: 'm', operation: 'Update', apiVersion: 'v1', subresource: 'status' },
      '"m" with subresource "status" using v1',
    ],
    [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', subresource: 'scale' }, '"m" with subresource "scale"'],
    [{ manager: 'say "hi"', operation: 'Apply', apiVersion: 'v1' }, '"say \\"hi\\""'],
  ])('%j → %s', (entry, want) => {
    expect(conflictManagerName(entry)).toBe(want);
  });
});

describe('applyConflictError', () => {
  test('one conflict', () => {
    const err = applyConflictError([c('kubectl-client-side-apply', ['f:data', 'f:key'])]);
    expect(err.code).toBe(409);
    expect(err.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "kubectl-client-side-apply" using v1',
            field: '.data.key',
          },
        ],
      },
    });
  });

  test('several conflicts: grouped per manager, managers sorted, one cause each', () => {
    const err = applyConflictError([
      c('m2', ['f:spec', 'f:y'], { operation: 'Apply' }),
      c('m1', ['f:spec', 'f:x']),
      c('m1', ['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image']),
    ]);
    expect(err.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "m1" using v1:\n- .spec.x\n- .spec.containers[name="c"].image\nconflicts with "m2":\n- .spec.y',
    );
    expect(err.status.details?.causes?.map((x) => x.field)).toEqual([
      '.spec.y',
      '.spec.x',
      '.spec.containers[name="c"].image',
    ]);
  });
});
