// autoscaling/v1 and v2 HorizontalPodAutoscaler against a real API server and etcd: one stored
// version (v2) served as both, v1's annotations carrying what v2 has beyond v1, 1.32's defaults
// and 422s, stock kubectl autoscale / get hpa; then horizontal-pod-autoscaler-controller end to
// end on a real node: a svclet and svc-runtime in this process run the Deployment's pods as
// processes burning some CPU, and the controller reads their usage from the svclet's
// /metrics/resource through nodes/proxy, scales up to maxReplicas and, with a higher target,
// back down after the downscale stabilization window.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import {
  isConflict,
  naming,
  nodeAgentConfigType,
  type ApiObject,
  type Deployment,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerV1,
} from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { silentLogger } from '@svc/component-base';
import { connectCri, startRuntimeServer, type RuntimeServer } from '@svc/runtime';
import { parseSvcletOptions, startPodSide, startSvclet, type RunningSvclet } from '@svc/svclet';
import { freePort, uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { parseControllerManagerOptions } from '../options.js';
import { createNamespace, deploymentOf, deployments, eventsAbout, kubectlIn, refusal } from './workload-testing.js';

const env = withControllerManager(
  [
    '--controllers=horizontalpodautoscaling,deployment,replicaset',
    '--horizontal-pod-autoscaler-sync-period=1s',
    '--horizontal-pod-autoscaler-downscale-stabilization=3s',
  ],
  { serverArgs: ['--svclet-preferred-address-types=InternalIP,Hostname'] },
);

const V2 = { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' };
const V1 = { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' };
const hpasV2 = (api: RestClient, ns: string): ResourceClient<HorizontalPodAutoscaler> =>
  new ResourceClient<HorizontalPodAutoscaler>(api, V2).namespace(ns);
const hpasV1 = (api: RestClient, ns: string): ResourceClient<HorizontalPodAutoscalerV1> =>
  new ResourceClient<HorizontalPodAutoscalerV1>(api, V1).namespace(ns);

function hpaOf(name: string, spec: Partial<HorizontalPodAutoscaler['spec']>): HorizontalPodAutoscaler {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, ...spec },
  };
}

describe('HorizontalPodAutoscaler (autoscaling/v1 and v2)', () => {
  it('stores one object served as v2 and v1, with 1.32 defaults and the v1 round-trip annotations', async () => {
    const ns = await createNamespace(env.api, 'hpa-api');
    const created = await hpasV2(env.api, ns).create(
      hpaOf('both', {
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      }),
    );
    expect(created.spec.minReplicas).toBe(1);
    expect(created.status).toEqual({ desiredReplicas: 0 });
    expect(created.spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: {
        stabilizationWindowSeconds: 60,
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
      },
    });

    const v1 = await hpasV1(env.api, ns).get('both');
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      targetCPUUtilizationPercentage: 50,
    });
    const ann = v1.metadata.annotations ?? {};
    const key = Object.keys(ann).find((k) => k.endsWith('/metrics')) ?? '';
    expect(key).toMatch(/^autoscaling\.alpha\./);
    expect(JSON.parse(ann[key] ?? '[]')).toEqual([
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } },
    ]);
    const behaviorKey = key.replace(/metrics$/, 'behavior');
    expect(JSON.parse(ann[behaviorKey] ?? '{}').ScaleDown.StabilizationWindowSeconds).toBe(60);

    // A v1 read-modify-write keeps the memory metric and the behavior (retried if the controller wrote the status meanwhile).
    for (let copy = v1; ; copy = await hpasV1(env.api, ns).get('both')) {
      copy.spec.maxReplicas = 7;
      copy.spec.targetCPUUtilizationPercentage = 60;
      try {
        await hpasV1(env.api, ns).update(copy);
        break;
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
    const back = await hpasV2(env.api, ns).get('both');
    expect(back.spec.maxReplicas).toBe(7);
    expect(back.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
    ]);
    expect(back.spec.behavior?.scaleDown?.stabilizationWindowSeconds).toBe(60);
    expect(back.metadata.annotations).toBeUndefined();

    // A v1 object without a CPU target is stored with 1.32's default 80 %.
    const bare = await hpasV1(env.api, ns).create({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'bare' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
    });
    expect(bare.spec.minReplicas).toBe(1);
    expect(bare.status).toEqual({ currentReplicas: 0, desiredReplicas: 0 });
    const bare2 = await hpasV2(env.api, ns).get('bare');
    expect(bare2.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
    ]);
  });

  it("refuses bad specs with Kubernetes' causes, in both versions", async () => {
    const ns = await createNamespace(env.api, 'hpa-invalid');
    const bad = await refusal(
      hpasV2(env.api, ns).create(
        hpaOf('bad', {
          minReplicas: 0,
          maxReplicas: 0,
          scaleTargetRef: { kind: '', name: '' },
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } },
            { type: 'Pods' },
          ],
          behavior: {
            scaleUp: { stabilizationWindowSeconds: 3601, policies: [{ type: 'Pods', value: 0, periodSeconds: 1801 }] },
          },
        }),
      ),
      { messages: true },
    );
    expect(bad.code).toBe(422);
    expect(bad.causes).toEqual([
      'spec.minReplicas: FieldValueInvalid: Invalid value: 0: must be greater than or equal to 1',
      'spec.maxReplicas: FieldValueInvalid: Invalid value: 0: must be greater than 0',
      'spec.scaleTargetRef.kind: FieldValueRequired: Required value',
      'spec.scaleTargetRef.name: FieldValueRequired: Required value',
      'spec.metrics[0].resource.target.averageUtilization: FieldValueInvalid: Invalid value: 0: must be greater than 0',
      'spec.metrics[1].pods: FieldValueRequired: Required value: must populate information for the given metric source',
      'spec.behavior.scaleUp.stabilizationWindowSeconds: FieldValueInvalid: Invalid value: 3601: must be less than or equal to 3600',
      'spec.behavior.scaleUp.policies[0].value: FieldValueInvalid: Invalid value: 0: must be greater than zero',
      'spec.behavior.scaleUp.policies[0].periodSeconds: FieldValueInvalid: Invalid value: 1801: must be less than or equal to 1800',
    ]);

    const maxBelowMin = await refusal(hpasV2(env.api, ns).create(hpaOf('m', { minReplicas: 4, maxReplicas: 2 })), {
      messages: true,
    });
    expect(maxBelowMin.causes).toEqual([
      'spec.maxReplicas: FieldValueInvalid: Invalid value: 2: must be greater than or equal to `minReplicas`',
    ]);

    const v1 = await refusal(
      hpasV1(env.api, ns).create({
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'v1bad' },
        spec: {
          scaleTargetRef: { kind: 'Deployment', name: 'web' },
          maxReplicas: 3,
          targetCPUUtilizationPercentage: 0,
        },
      }),
    );
    expect(v1).toEqual({
      code: 422,
      causes: ['spec.metrics[0].resource.target.averageUtilization: FieldValueInvalid'],
    });
  });

  it('works with stock kubectl: autoscale, get hpa (Table), get all, describe', async () => {
    const ns = await createNamespace(env.api, 'hpa-kubectl');
    await deployments(env.api, ns).create(deploymentOf('x', 1));
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      await k.ok(['autoscale', 'deployment', 'x', '--min=1', '--max=5', '--cpu-percent=50', '-n', ns]);
      const v2 = await hpasV2(env.api, ns).get('x');
      expect(v2.spec.metrics).toEqual([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      ]);
      expect(v2.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' });
      const table = await k.ok(['get', 'hpa', '-n', ns]);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s+/)).toEqual(['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
      expect(row).toMatch(/^x\s+Deployment\/x\s+cpu: <unknown>\/50%\s+1\s+5\s+\d+\s+\S+$/);
      const all = await k.ok(['get', 'all', '-n', ns]);
      expect(all.stdout).toContain('horizontalpodautoscaler.autoscaling/x');
      const v1Json = await k.ok(['get', 'horizontalpodautoscalers.v1.autoscaling', 'x', '-n', ns, '-o', 'json']);
      expect(JSON.parse(v1Json.stdout).spec.targetCPUUtilizationPercentage).toBe(50);
      const described = await k.ok(['describe', 'hpa', 'x', '-n', ns]);
      expect(described.stdout).toContain('Reference:');
    } finally {
      await k.stop();
    }
  });
});

/** The first non-loopback IPv4 address: proxying to nodes refuses loopback addresses, as Kubernetes does. */
const NODE_IP =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';

/** A svclet (anonymous, AlwaysAllow) over an svc-runtime, both in this process, registered as node `name`. */
async function startRealNode(name: string): Promise<{ svclet: RunningSvclet; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-hpa-node-'));
  const runtime: RuntimeServer = await startRuntimeServer({
    socket: join(dir, 'cri.sock'),
    rootDir: join(dir, 'runtime'),
    podIp: NODE_IP,
    logger: silentLogger,
  });
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    JSON.stringify({
      ...nodeAgentConfigType(),
      address: NODE_IP,
      port: await freePort(),
      healthzPort: 0,
      podLogsDir: join(dir, 'logs'),
      nodeStatusUpdateFrequency: '1s',
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
    }),
  );
  const opts = parseSvcletOptions(
    [
      ...['--config', config, '--root-dir', join(dir, 'root'), '--cert-dir', join(dir, 'pki')],
      ...['--svcconfig', env.server.svcconfigPath, '--hostname-override', name, '--node-ip', NODE_IP],
      ...['--container-runtime-endpoint', `unix://${runtime.socket}`],
    ],
    { quiet: true },
  );
  const cri = connectCri(runtime.socket);
  const svclet = await startSvclet(opts, {
    logger: silentLogger,
    runtime: { version: (req) => cri.runtime.version(req), status: (req) => cri.runtime.status(req) },
    startPods: startPodSide,
  });
  await svclet.registered;
  return {
    svclet,
    stop: async () => {
      await svclet.shutdown();
      const { containers = [] } = await cri.runtime.listContainers({});
      await Promise.all(
        containers.map((c) => cri.runtime.stopContainer({ containerId: c.id, timeout: 0 }).catch(() => undefined)),
      );
      cri.close();
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A Deployment of one pod on `node` whose container burns about 7 % of a core and requests 10m. */
function burner(name: string, node: string): Deployment {
  const d = deploymentOf(name, 1);
  const spec = d.spec.template.spec;
  if (!spec) throw new Error('no pod spec');
  spec.nodeName = node;
  spec.automountServiceAccountToken = false;
  spec.terminationGracePeriodSeconds = 0;
  spec.containers = [
    {
      name: 'burn',
      image: 'busybox',
      command: ['sh', '-c', 'while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.5; done'],
      resources: { requests: { cpu: '10m', memory: '10Mi' } },
    },
  ];
  return d;
}

const conditionOf = (h: HorizontalPodAutoscaler, type: string) => h.status?.conditions?.find((c) => c.type === type);

describe('horizontal-pod-autoscaler-controller', () => {
  it('refuses bad flag values', () => {
    for (const [flag, message] of [
      ['--horizontal-pod-autoscaler-sync-period=soon', /horizontal-pod-autoscaler-sync-period/],
      ['--horizontal-pod-autoscaler-tolerance=much', /horizontal-pod-autoscaler-tolerance/],
      [
        '--concurrent-horizontal-pod-autoscaler-syncs=0',
        /--concurrent-horizontal-pod-autoscaler-syncs must be at least 1/,
      ],
    ] as const) {
      let err: unknown;
      try {
        parseControllerManagerOptions([flag], { quiet: true });
      } catch (e) {
        err = e;
      }
      // componentMain exits 2 on a CommanderError.
      expect(err).toBeInstanceOf(CommanderError);
      expect((err as Error).message).toMatch(message);
    }
    const o = parseControllerManagerOptions([], { quiet: true });
    expect(o.concurrentSyncs['horizontal-pod-autoscaler']).toBe(5);
    expect(o.horizontalPodAutoscaler).toEqual({
      syncPeriodMs: 15_000,
      tolerance: 0.1,
      downscaleStabilizationMs: 300_000,
      cpuInitializationPeriodMs: 300_000,
      initialReadinessDelayMs: 30_000,
    });
  });

  it('reports what it cannot do in its conditions: a missing target, a Pods metric, pods without requests', async () => {
    const ns = await createNamespace(env.api, 'hpa-fail');
    await hpasV2(env.api, ns).create(
      hpaOf('missing', { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'nope' } }),
    );
    const missing = await waitFor('FailedGetScale', async () => {
      const h = await hpasV2(env.api, ns).get('missing');
      return conditionOf(h, 'AbleToScale')?.reason === 'FailedGetScale' ? h : undefined;
    });
    expect(conditionOf(missing, 'AbleToScale')).toMatchObject({ status: 'False' });
    expect(conditionOf(missing, 'AbleToScale')?.message).toMatch(
      /^the HPA controller was unable to get the target's current scale: /,
    );

    const d = deploymentOf('norequest', 1);
    await deployments(env.api, ns).create(d);
    await hpasV2(env.api, ns).create(
      hpaOf('pods', {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'norequest' },
        metrics: [
          { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1' } } },
        ],
      }),
    );
    await hpasV2(env.api, ns).create(
      hpaOf('cpu', { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'norequest' } }),
    );
    for (const [name, reason] of [
      ['pods', 'FailedGetPodsMetric'],
      ['cpu', 'FailedGetResourceMetric'],
    ] as const) {
      const h = await waitFor(`${name}: ${reason}`, async () => {
        const x = await hpasV2(env.api, ns).get(name);
        if (conditionOf(x, 'ScalingActive')?.reason !== reason) throw new Error(JSON.stringify(x.status));
        return x;
      });
      expect(conditionOf(h, 'ScalingActive')?.status).toBe('False');
      expect(conditionOf(h, 'ScalingActive')?.message).toMatch(/^the HPA was unable to compute the replica count: /);
      expect(conditionOf(h, 'AbleToScale')).toMatchObject({ status: 'True', reason: 'SucceededGetScale' });
    }
    const events = await waitFor('a FailedComputeMetricsReplicas event', async () => {
      const e = await eventsAbout(env.api, ns, { kind: 'HorizontalPodAutoscaler', name: 'cpu' });
      return e.some((x) => x.startsWith('FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1)'))
        ? e
        : undefined;
    });
    expect(events.length).toBeGreaterThan(0);
  });

  it('scales a Deployment on the CPU its pods use on a real node, up to maxReplicas and back down', async () => {
    const ns = await createNamespace(env.api, 'hpa-e2e');
    const nodeName = uniqueName('hpa-node');
    const node = await startRealNode(nodeName);
    try {
      await new ResourceClient<ApiObject>(env.api, { group: '', version: 'v1', resource: 'configmaps' })
        .namespace(ns)
        .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: naming().rootCaConfigMap }, data: {} });
      await deployments(env.api, ns).create(burner('burn', nodeName));
      // The node's own /metrics/resource through nodes/proxy, as the controller reads it.
      const text = await waitFor(
        "the pod's container in the node's resource metrics",
        async () => {
          const r = await env.api.request('GET', `/api/v1/nodes/${nodeName}/proxy/metrics/resource`);
          const body = r.body.toString('utf8');
          if (r.status === 200 && /container_cpu_usage_seconds_total\{container="burn",/.test(body)) return body;
          const pods = await new ResourceClient<ApiObject>(env.api, { group: '', version: 'v1', resource: 'pods' })
            .namespace(ns)
            .list();
          throw new Error(`${r.status} ${body.slice(0, 200)} ${JSON.stringify(pods.items.map((p) => p.status))}`);
        },
        { timeoutMs: 30_000 },
      );
      expect(text).toMatch(
        new RegExp(`^pod_memory_working_set_bytes\\{namespace="${ns}",pod="burn-[^"]+"\\} \\d+ \\d+$`, 'm'),
      );
      expect(text).toMatch(/^node_cpu_usage_seconds_total [\d.e+]+ \d+$/m);
      // The Summary API from the same numbers: the burning container's CPU rate and memory.
      interface Usage {
        cpu: { usageNanoCores?: number; usageCoreNanoSeconds: number };
        memory: { workingSetBytes: number; availableBytes?: number };
      }
      const summary = JSON.parse(
        (await env.api.request('GET', `/api/v1/nodes/${nodeName}/proxy/stats/summary`)).body.toString('utf8'),
      ) as {
        node: Usage & { nodeName: string; startTime?: string };
        pods: Array<
          Usage & {
            podRef: { namespace: string; name: string; uid: string };
            containers: Array<Usage & { name: string }>;
          }
        >;
      };
      expect(summary.node.nodeName).toBe(nodeName);
      expect(summary.node.memory.availableBytes).toBeGreaterThan(0);
      expect(summary.node.cpu.usageCoreNanoSeconds).toBeGreaterThan(0);
      const burning = summary.pods.find((p) => p.podRef.namespace === ns && p.podRef.name.startsWith('burn-'));
      expect(burning?.podRef.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(burning?.containers.map((c) => c.name)).toEqual(['burn']);
      // A rate over the last second (the burner sleeps half of each cycle, so it may be 0) and the total.
      expect(typeof burning?.containers[0]?.cpu.usageNanoCores).toBe('number');
      expect(burning?.containers[0]?.cpu.usageCoreNanoSeconds).toBeGreaterThan(0);
      expect(burning?.containers[0]?.memory.workingSetBytes).toBeGreaterThan(0);
      expect(burning?.memory.workingSetBytes).toBe(burning?.containers[0]?.memory.workingSetBytes);

      await hpasV2(env.api, ns).create(
        hpaOf('burn', {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'burn' },
          maxReplicas: 3,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
          ],
        }),
      );
      const up = await waitFor(
        'the HPA to scale the Deployment to 3',
        async () => {
          const [h, dep] = await Promise.all([hpasV2(env.api, ns).get('burn'), deployments(env.api, ns).get('burn')]);
          return dep.spec.replicas === 3 && h.status?.desiredReplicas === 3 ? h : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const current = up.status?.currentMetrics?.[0];
      expect(current?.type).toBe('Resource');
      expect(current?.resource?.name).toBe('cpu');
      expect(current?.resource?.current.averageUtilization).toBeGreaterThan(50);
      expect(up.status?.lastScaleTime).toBeDefined();
      expect(conditionOf(up, 'ScalingActive')).toMatchObject({
        status: 'True',
        reason: 'ValidMetricFound',
        message:
          'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      });
      const rescales = await waitFor('a SuccessfulRescale event', async () => {
        const e = await eventsAbout(env.api, ns, { kind: 'HorizontalPodAutoscaler', name: 'burn' });
        const hits = e.filter((x) => x.startsWith('SuccessfulRescale: '));
        return hits.length > 0 ? hits : undefined;
      });
      expect(rescales[0]).toMatch(
        /^SuccessfulRescale: New size: [23]; reason: cpu resource utilization \(percentage of request\) above target$/,
      );
      // At maxReplicas and still above target: limited.
      const limited = await waitFor(
        'ScalingLimited TooManyReplicas',
        async () => {
          const h = await hpasV2(env.api, ns).get('burn');
          return conditionOf(h, 'ScalingLimited')?.reason === 'TooManyReplicas' ? h : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(conditionOf(limited, 'ScalingLimited')?.status).toBe('True');

      // A target far above the usage: down to minReplicas once the 3 s window has passed.
      for (let h = limited; ; h = await hpasV2(env.api, ns).get('burn')) {
        h.spec.metrics = [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 100_000 } } },
        ];
        try {
          await hpasV2(env.api, ns).update(h);
          break;
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
      await waitFor(
        'the HPA to scale the Deployment back to 1',
        async () => (await deployments(env.api, ns).get('burn')).spec.replicas === 1 || undefined,
        { timeoutMs: 60_000 },
      );
      const down = await waitFor('a scale-down event', async () => {
        const e = await eventsAbout(env.api, ns, { kind: 'HorizontalPodAutoscaler', name: 'burn' });
        return e.find((x) => x === 'SuccessfulRescale: New size: 1; reason: All metrics below target');
      });
      expect(down).toBeDefined();
      const k = await kubectlIn(env.server.svcconfigPath);
      try {
        const table = await k.ok(['get', 'hpa', 'burn', '-n', ns]);
        expect(table.stdout.trim().split('\n')[1]).toMatch(
          /^burn\s+Deployment\/burn\s+cpu: (?:\d+%|<unknown>)\/100000%\s+1\s+3\s+\d+\s+\S+$/,
        );
      } finally {
        await k.stop();
      }
    } finally {
      await node.stop();
    }
  });
});
