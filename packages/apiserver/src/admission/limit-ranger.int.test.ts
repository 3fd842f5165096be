// LimitRanger on a real server (etcd, HTTPS): LimitRange defaults and validation, defaults into
// containers and init containers (with the limit-ranger annotation), requests from limits before
// them, min/max/ratio per Container and per Pod with Kubernetes' 403s, and stock kubectl's
// `describe limitrange` and error text.
import type { LimitRange, Pod } from '@svc/api';
import {
  createDefaultServiceAccount,
  createNamespace,
  expectCode,
  startKubectlEnv,
  uniqueName,
  type HttpResponse,
  type KubectlEnv,
} from '@svc/testing';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env.stop();
});

async function namespace(): Promise<string> {
  const ns = await createNamespace(env.server.client, 'lr');
  await createDefaultServiceAccount(env.server.client, ns);
  return ns;
}

function createLimitRange(ns: string, limits: object[], name = 'limits'): Promise<HttpResponse> {
  return env.server.client.post(`/api/v1/namespaces/${ns}/limitranges`, {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name },
    spec: { limits },
  });
}

function createPod(ns: string, spec: object, name = uniqueName('p')): Promise<HttpResponse> {
  return env.server.client.post(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { automountServiceAccountToken: false, ...spec },
  });
}

describe('LimitRange', () => {
  it('defaults a Container item (default from max, defaultRequest from default, else min) with canonical quantities', async () => {
    const ns = await namespace();
    const lr = expectCode(
      await createLimitRange(ns, [
        { type: 'Container', max: { cpu: '2', memory: '1024Mi' }, min: { cpu: '0.1', 'ephemeral-storage': 1 } },
        { type: 'Pod', max: { cpu: 4 } },
      ]),
      201,
    ) as LimitRange;
    expect(lr.spec?.limits).toEqual([
      {
        type: 'Container',
        max: { cpu: '2', memory: '1Gi' },
        min: { cpu: '100m', 'ephemeral-storage': '1' },
        default: { cpu: '2', memory: '1Gi' },
        defaultRequest: { cpu: '2', memory: '1Gi', 'ephemeral-storage': '1' },
      },
      { type: 'Pod', max: { cpu: '4' } },
    ]);
    expect(lr.metadata.generation).toBeUndefined();
  });

  it("refuses what Kubernetes' validation refuses, with its paths and messages", async () => {
    const ns = await namespace();
    const r = await createLimitRange(ns, [
      { type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } },
      { type: 'Container' },
      { type: 'Pod', default: { cpu: '1' } },
      { type: 'PersistentVolumeClaim', max: { cpu: '1' } },
      { type: 'Bogus' },
    ]);
    expect(r.status).toBe(422);
    const message = r.json<{ message: string }>().message;
    expect(message).toContain('spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1');
    expect(message).toContain('spec.limits[1].type: Duplicate value: "Container"');
    expect(message).toContain("spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'");
    expect(message).toContain(
      'spec.limits[3].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    );
    expect(message).toContain(
      'spec.limits[4].type: Invalid value: "Bogus": must be a standard limit type or fully qualified',
    );
  });
});

describe('LimitRanger', () => {
  it('gives containers and init containers the defaults they lack and notes it in the annotation', async () => {
    const ns = await namespace();
    expectCode(
      await createLimitRange(ns, [
        { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' } },
      ]),
      201,
    );
    const pod = expectCode(
      await createPod(ns, {
        initContainers: [{ name: 'init', image: 'busybox' }],
        containers: [
          { name: 'a', image: 'busybox' },
          { name: 'b', image: 'busybox', resources: { limits: { cpu: '1' } } },
        ],
      }),
      201,
    ) as Pod;
    const [a, b] = pod.spec.containers;
    // The LimitRange's memory request defaulted to its default limit.
    expect(a?.resources).toEqual({
      limits: { cpu: '500m', memory: '256Mi' },
      requests: { cpu: '100m', memory: '256Mi' },
    });
    // b's cpu request comes from its own limit (Kubernetes' pod defaulting), before the LimitRange's.
    expect(b?.resources).toEqual({ limits: { cpu: '1', memory: '256Mi' }, requests: { cpu: '1', memory: '256Mi' } });
    expect(pod.spec.initContainers?.[0]?.resources).toEqual(a?.resources);
    expect(pod.metadata.annotations?.['svc.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; memory request for container b; memory limit for container b; cpu, memory request for init container init; cpu, memory limit for init container init',
    );
    expect(pod.status?.qosClass).toBe('Burstable');
  });

  it('enforces min, max and maxLimitRequestRatio per Container and per Pod', async () => {
    const ns = await namespace();
    expectCode(
      await createLimitRange(ns, [
        {
          type: 'Container',
          max: { cpu: '1' },
          min: { cpu: '100m' },
          default: { cpu: '200m' },
          maxLimitRequestRatio: { cpu: '4' },
        },
        { type: 'Pod', max: { cpu: '1500m' } },
      ]),
      201,
    );
    const tooBig = await createPod(
      ns,
      { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: '2' } } }] },
      'x',
    );
    expect(tooBig.status).toBe(403);
    expect(tooBig.json<{ message: string; reason: string }>()).toMatchObject({
      reason: 'Forbidden',
      message:
        'pods "x" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum cpu usage per Pod is 1500m, but limit is 2]',
    });
    const ratio = await createPod(
      ns,
      { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' }, limits: { cpu: '1' } } }] },
      'y',
    );
    expect(ratio.json<{ message: string }>().message).toBe(
      'pods "y" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000',
    );
    const pod = await createPod(
      ns,
      {
        containers: [
          { name: 'a', image: 'x', resources: { limits: { cpu: '1' } } },
          { name: 'b', image: 'x', resources: { limits: { cpu: '1' } } },
        ],
      },
      'z',
    );
    expect(pod.json<{ message: string }>().message).toBe(
      'pods "z" is forbidden: maximum cpu usage per Pod is 1500m, but limit is 2',
    );
    expectCode(await createPod(ns, { containers: [{ name: 'a', image: 'x' }] }), 201);
  });

  it('enforces min and max storage of PersistentVolumeClaims', async () => {
    const ns = await namespace();
    expectCode(
      await createLimitRange(ns, [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '2Gi' } }]),
      201,
    );
    const claim = (name: string, storage: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    const path = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    const big = await env.server.client.post(path, claim('big', '5Gi'));
    expect(big.status).toBe(403);
    expect(big.json<{ message: string }>().message).toBe(
      'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi',
    );
    const small = await env.server.client.post(path, claim('small', '100Mi'));
    expect(small.json<{ message: string }>().message).toBe(
      'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi',
    );
    expectCode(await env.server.client.post(path, claim('fits', '1536Mi')), 201);
  });

  it('kubectl describes the LimitRange and prints the 403', async () => {
    const ns = await namespace();
    await env.ok(['create', '-n', ns, '-f', await env.manifest(limitRangeManifest())]);
    const out = (await env.ok(['describe', 'limitrange', 'mem', '-n', ns])).stdout;
    expect(out).toMatch(/Type\s+Resource\s+Min\s+Max\s+Default Request\s+Default Limit\s+Max Limit\/Request Ratio/);
    expect(out).toMatch(/Container\s+memory\s+64Mi\s+512Mi\s+128Mi\s+256Mi\s+-/);
    expect((await env.ok(['get', 'limits', '-n', ns])).stdout).toMatch(/^NAME\s+CREATED AT\nmem\s+\d{4}-/);
    const r = await env.run(['run', 'big', '-n', ns, '--image=busybox', '--overrides', bigMemoryOverrides()]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'Error from server (Forbidden): pods "big" is forbidden: maximum memory usage per Container is 512Mi, but limit is 1Gi',
    );
  });
});

function limitRangeManifest(): object {
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'mem' },
    spec: {
      limits: [
        {
          type: 'Container',
          min: { memory: '64Mi' },
          max: { memory: '512Mi' },
          default: { memory: '256Mi' },
          defaultRequest: { memory: '128Mi' },
        },
      ],
    },
  };
}

function bigMemoryOverrides(): string {
  return JSON.stringify({
    apiVersion: 'v1',
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'big', image: 'busybox', resources: { limits: { memory: '1Gi' } } }],
    },
  });
}
