import type { ApiObject, FieldError } from '@svc/api';
import type { StrategyContext } from '../strategy.js';
import { deploymentStrategy, replicaSetStrategy } from './apps.js';

type Json = Record<string, unknown>;

const ctx: StrategyContext = { subresource: '' };

const template = (labels: Record<string, string> = { app: 'web' }): Json => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

function deployment(spec: Json = {}, status?: Json): ApiObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'ns' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...spec },
    ...(status ? { status } : {}),
  };
}

function replicaSet(spec: Json = {}): ApiObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'r', namespace: 'ns' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...spec },
  };
}

/** The object after create defaults, and the errors create validation finds. */
async function created(
  strategy: typeof deploymentStrategy,
  obj: ApiObject,
): Promise<{ obj: ApiObject; errs: FieldError[] }> {
  strategy.prepareForCreate?.(obj, ctx);
  return { obj, errs: (await strategy.validate?.(obj, ctx)) ?? [] };
}

const paths = (errs: FieldError[]): string[] => errs.map((e) => `${e.path} ${e.type}`);

describe('Deployment defaults (apps/v1)', () => {
  it('sets replicas, RollingUpdate 25%/25%, history 10, deadline 600, the pod defaults and an empty status', async () => {
    const { obj, errs } = await created(deploymentStrategy, deployment({}, { replicas: 9 }));
    expect(errs).toEqual([]);
    expect(obj.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      template: {
        spec: {
          restartPolicy: 'Always',
          dnsPolicy: 'ClusterFirst',
          terminationGracePeriodSeconds: 30,
          schedulerName: 'default-scheduler',
          containers: [{ imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log' }],
        },
      },
    });
    expect(obj.status).toEqual({});
  });

  it('keeps given values, including an explicit 0 replicas; Recreate gets no rollingUpdate', async () => {
    const { obj } = await created(
      deploymentStrategy,
      deployment({ replicas: 0, revisionHistoryLimit: 2, progressDeadlineSeconds: 30, strategy: { type: 'Recreate' } }),
    );
    expect(obj.spec).toMatchObject({
      replicas: 0,
      revisionHistoryLimit: 2,
      progressDeadlineSeconds: 30,
      strategy: { type: 'Recreate' },
    });
    expect((obj.spec as Json).strategy).not.toHaveProperty('rollingUpdate');
  });

  it('fills a partly given rollingUpdate', async () => {
    const { obj } = await created(deploymentStrategy, deployment({ strategy: { rollingUpdate: { maxSurge: 2 } } }));
    expect((obj.spec as Json).strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' },
    });
  });
});

describe('ReplicaSet defaults (apps/v1)', () => {
  it('sets replicas 1 and the pod defaults, nothing of a Deployment', async () => {
    const { obj, errs } = await created(replicaSetStrategy, replicaSet());
    expect(errs).toEqual([]);
    expect(obj.spec).toMatchObject({ replicas: 1, template: { spec: { restartPolicy: 'Always' } } });
    expect(obj.spec).not.toHaveProperty('strategy');
    expect(obj.spec).not.toHaveProperty('revisionHistoryLimit');
  });
});

describe('workload validation', () => {
  const cases: Array<[string, ApiObject, string[]]> = [
    ['negative replicas', deployment({ replicas: -1 }), ['spec.replicas FieldValueInvalid']],
    [
      'no selector',
      deployment({ selector: undefined }),
      ['spec.selector FieldValueRequired', 'spec.template.metadata.labels FieldValueInvalid'],
    ],
    ['empty selector', deployment({ selector: {} }), ['spec.selector FieldValueInvalid']],
    [
      'selector not matching the template',
      deployment({ selector: { matchLabels: { app: 'db' } } }),
      ['spec.template.metadata.labels FieldValueInvalid'],
    ],
    [
      'bad selector operator',
      deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['x'] }] } }),
      ['spec.selector.matchExpressions[0].operator FieldValueInvalid', 'spec.selector FieldValueInvalid'],
    ],
    [
      'no containers',
      deployment({ template: { metadata: { labels: { app: 'web' } }, spec: {} } }),
      ['spec.template.spec.containers FieldValueRequired'],
    ],
    [
      'restartPolicy Never',
      deployment({
        template: { ...template(), spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } },
      }),
      ['spec.template.spec.restartPolicy FieldValueNotSupported'],
    ],
    [
      'activeDeadlineSeconds',
      deployment({
        template: { ...template(), spec: { containers: [{ name: 'c', image: 'i' }], activeDeadlineSeconds: 5 } },
      }),
      ['spec.template.spec.activeDeadlineSeconds FieldValueForbidden'],
    ],
    [
      'maxSurge and maxUnavailable both 0',
      deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }),
      ['spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid'],
    ],
    [
      'maxUnavailable over 100%',
      deployment({ strategy: { rollingUpdate: { maxUnavailable: '101%' } } }),
      ['spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid'],
    ],
    [
      'maxSurge not a percent',
      deployment({ strategy: { rollingUpdate: { maxSurge: 'lots' } } }),
      ['spec.strategy.rollingUpdate.maxSurge FieldValueInvalid'],
    ],
    [
      'negative maxSurge',
      deployment({ strategy: { rollingUpdate: { maxSurge: -1 } } }),
      ['spec.strategy.rollingUpdate.maxSurge FieldValueInvalid'],
    ],
    [
      'Recreate with rollingUpdate',
      deployment({ strategy: { type: 'Recreate', rollingUpdate: {} } }),
      ['spec.strategy.rollingUpdate FieldValueForbidden'],
    ],
    [
      'unknown strategy type',
      deployment({ strategy: { type: 'BlueGreen' } }),
      ['spec.strategy FieldValueNotSupported'],
    ],
    [
      'deadline not above minReadySeconds',
      deployment({ minReadySeconds: 10, progressDeadlineSeconds: 10 }),
      ['spec.progressDeadlineSeconds FieldValueInvalid'],
    ],
    [
      'negative revisionHistoryLimit',
      deployment({ revisionHistoryLimit: -1 }),
      ['spec.revisionHistoryLimit FieldValueInvalid'],
    ],
    ['ReplicaSet negative replicas', replicaSet({ replicas: -3 }), ['spec.replicas FieldValueInvalid']],
    [
      'ReplicaSet without selector',
      replicaSet({ selector: undefined }),
      ['spec.selector FieldValueRequired', 'spec.template.metadata.labels FieldValueInvalid'],
    ],
    [
      'ReplicaSet negative minReadySeconds',
      replicaSet({ minReadySeconds: -1 }),
      ['spec.minReadySeconds FieldValueInvalid'],
    ],
  ];
  it.each(cases)('%s', async (_name, obj, want) => {
    const strategy = obj.kind === 'Deployment' ? deploymentStrategy : replicaSetStrategy;
    expect(paths((await created(strategy, obj)).errs)).toEqual(want);
  });

  it("the messages are Kubernetes'", async () => {
    const { errs } = await created(
      deploymentStrategy,
      deployment({
        selector: { matchLabels: { app: 'db' } },
        strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } },
      }),
    );
    expect(errs.map((e) => e.detail)).toEqual([
      '`selector` does not match template `labels`',
      'may not be 0 when `maxSurge` is 0',
    ]);
    expect(
      (await created(deploymentStrategy, deployment({ strategy: { rollingUpdate: { maxSurge: '1.5%' } } }))).errs[0]
        ?.detail,
    ).toBe(
      "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    );
  });
});

describe('workload updates', () => {
  async function updated(
    strategy: typeof deploymentStrategy,
    old: ApiObject,
    change: (o: ApiObject) => void,
  ): Promise<string[]> {
    strategy.prepareForCreate?.(old, ctx);
    const obj = structuredClone(old);
    change(obj);
    strategy.prepareForUpdate?.(obj, old, ctx);
    return paths((await strategy.validateUpdate?.(obj, old, ctx)) ?? []);
  }

  it('spec.selector is immutable (with a template still matching)', async () => {
    expect(
      await updated(deploymentStrategy, deployment(), (o) => {
        (o.spec as Json).selector = { matchLabels: { app: 'web', tier: 'x' } };
        ((o.spec as Json).template as { metadata: Json }).metadata.labels = { app: 'web', tier: 'x' };
      }),
    ).toEqual(['spec.selector FieldValueInvalid']);
    expect(
      await updated(replicaSetStrategy, replicaSet(), (o) => {
        (o.spec as Json).selector = { matchExpressions: [{ key: 'app', operator: 'Exists' }] };
      }),
    ).toEqual(['spec.selector FieldValueInvalid']);
  });

  it('other spec changes pass and are defaulted again', async () => {
    expect(
      await updated(deploymentStrategy, deployment(), (o) => {
        (o.spec as Json).replicas = 4;
        delete (o.spec as Json).revisionHistoryLimit;
      }),
    ).toEqual([]);
  });

  it('status counts: non-negative, at most replicas, available at most ready; collisionCount never decreases', async () => {
    const old = deployment();
    deploymentStrategy.prepareForCreate?.(old, ctx);
    old.status = { collisionCount: 2 };
    const next = {
      ...structuredClone(old),
      status: { replicas: 1, readyReplicas: 2, availableReplicas: 2, updatedReplicas: -1, collisionCount: 1 },
    };
    expect(paths((await deploymentStrategy.validateUpdate?.(next, old, ctx)) ?? [])).toEqual([
      'status.updatedReplicas FieldValueInvalid',
      'status.readyReplicas FieldValueInvalid',
      'status.availableReplicas FieldValueInvalid',
      'status.collisionCount FieldValueInvalid',
    ]);
    const rs = replicaSet();
    replicaSetStrategy.prepareForCreate?.(rs, ctx);
    const rsNext = {
      ...structuredClone(rs),
      status: { replicas: 2, fullyLabeledReplicas: 3, readyReplicas: 1, availableReplicas: 2 },
    };
    expect(paths((await replicaSetStrategy.validateUpdate?.(rsNext, rs, ctx)) ?? [])).toEqual([
      'status.fullyLabeledReplicas FieldValueInvalid',
      'status.availableReplicas FieldValueInvalid',
    ]);
  });
});
