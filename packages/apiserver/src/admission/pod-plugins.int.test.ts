// The optional plugins that shape pods, Services and Events, enabled together on a real server
// (etcd, HTTPS) configured from an AdmissionConfiguration file, through stock kubectl: AlwaysPullImages,
// LimitPodHardAntiAffinityTopology, ExtendedResourceToleration, PodNodeSelector,
// PodTolerationRestriction, DenyServiceExternalIPs and EventRateLimit, with the error lines
// kubectl prints for each refusal.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '@svc/api';
import {
  createDefaultServiceAccount,
  createNamespace,
  expectCode,
  startKubectlEnv,
  uniqueName,
  type KubectlEnv,
} from '@svc/testing';

const WHITELISTED_NS = 'restricted-nodes';
const CLUSTER_DEFAULT = { key: 'cluster-default', operator: 'Exists', effect: 'NoSchedule' };
const NODE_SELECTOR = 'scheduler.alpha.svc.io/node-selector';
const DEFAULT_TOLERATIONS = 'scheduler.alpha.svc.io/defaultTolerations';
const TOLERATIONS_WHITELIST = 'scheduler.alpha.svc.io/tolerationsWhitelist';

let env: KubectlEnv;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-pod-plugins-'));
  const config = join(dir, 'admission.yaml');
  await writeFile(
    config,
    JSON.stringify({
      apiVersion: 'apiserver.config.svc.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        {
          name: 'EventRateLimit',
          configuration: {
            apiVersion: 'eventratelimit.admission.svc.io/v1alpha1',
            kind: 'Configuration',
            limits: [{ type: 'Namespace', qps: 1, burst: 3 }],
          },
        },
        {
          name: 'PodNodeSelector',
          configuration: {
            podNodeSelectorPluginConfig: {
              clusterDefaultNodeSelector: 'pool=general',
              [WHITELISTED_NS]: 'pool=general,disk=ssd',
            },
          },
        },
        {
          name: 'PodTolerationRestriction',
          configuration: {
            apiVersion: 'podtolerationrestriction.admission.svc.io/v1alpha1',
            kind: 'Configuration',
            default: [CLUSTER_DEFAULT],
          },
        },
      ],
    }),
  );
  env = await startKubectlEnv({
    args: [
      '--enable-admission-plugins=AlwaysPullImages,LimitPodHardAntiAffinityTopology,ExtendedResourceToleration,PodNodeSelector,PodTolerationRestriction,DenyServiceExternalIPs,EventRateLimit',
      `--admission-control-config-file=${config}`,
    ],
  });
});

afterAll(async () => {
  await env.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A namespace with the `default` ServiceAccount (no controller manager runs here), annotated. */
async function namespace(annotations: Record<string, string> = {}, name?: string): Promise<string> {
  const c = env.server.client;
  let ns = name;
  if (ns) expectCode(await c.post('/api/v1/namespaces', { metadata: { name: ns, annotations } }), 201);
  else {
    ns = await createNamespace(c, 'pods');
    if (Object.keys(annotations).length > 0) {
      expectCode(
        await c.patch(`/api/v1/namespaces/${ns}`, { metadata: { annotations } }, 'application/merge-patch+json'),
        200,
      );
    }
  }
  await createDefaultServiceAccount(c, ns);
  return ns;
}

const podManifest = (ns: string, spec: Record<string, unknown> = {}, name = uniqueName('p')): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});

async function createPod(ns: string, spec: Record<string, unknown> = {}): Promise<Pod> {
  const manifest = podManifest(ns, spec) as { metadata: { name: string } };
  await env.ok(['create', '-f', await env.manifest(manifest)]);
  return JSON.parse((await env.ok(['get', 'pod', manifest.metadata.name, '-n', ns, '-o', 'json'])).stdout) as Pod;
}

/** kubectl's stderr for a create that must fail. */
async function refused(manifest: object): Promise<string> {
  const file = await env.manifest(manifest);
  const r = await env.run(['create', '-f', file]);
  expect(r.code).not.toBe(0);
  return r.stderr.trim().replace(file, '<file>');
}

it('AlwaysPullImages: every container pulls Always, also after an image change', async () => {
  const ns = await namespace();
  await env.ok(['run', 'web', '--image=busybox', '--image-pull-policy=IfNotPresent', '-n', ns]);
  const get = async (): Promise<Pod> =>
    JSON.parse((await env.ok(['get', 'pod', 'web', '-n', ns, '-o', 'json'])).stdout) as Pod;
  expect((await get()).spec.containers[0]?.imagePullPolicy).toBe('Always');
  const pod = await createPod(ns, { initContainers: [{ name: 'i', image: 'busybox', imagePullPolicy: 'Never' }] });
  expect([pod.spec.initContainers?.[0]?.imagePullPolicy, pod.spec.containers[0]?.imagePullPolicy]).toEqual([
    'Always',
    'Always',
  ]);
  await env.ok(['set', 'image', 'pod/web', 'web=busybox:1.37', '-n', ns]);
  expect((await get()).spec.containers[0]).toMatchObject({ image: 'busybox:1.37', imagePullPolicy: 'Always' });
});

it('LimitPodHardAntiAffinityTopology: required anti-affinity only by host name', async () => {
  const ns = await namespace();
  const term = (topologyKey: string): Record<string, unknown> => ({
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey, labelSelector: { matchLabels: { app: 'db' } } },
        ],
      },
    },
  });
  await createPod(ns, term('svc.io/hostname'));
  const name = uniqueName('zonal');
  expect(await refused(podManifest(ns, term('topology.svc.io/zone'), name))).toBe(
    `Error from server (Forbidden): error when creating "<file>": pods "${name}" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.svc.io/zone but only key svc.io/hostname is allowed`,
  );
});

it('ExtendedResourceToleration: a NoSchedule toleration per extended resource requested', async () => {
  const ns = await namespace();
  const pod = await createPod(ns, {
    containers: [
      {
        name: 'c',
        image: 'busybox',
        resources: { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } },
      },
    ],
  });
  expect(pod.spec.tolerations).toContainEqual({ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
});

it('PodNodeSelector: the namespace selector (else the cluster default) merged in; conflicts and whitelists refused', async () => {
  const plain = await namespace();
  expect((await createPod(plain, { nodeSelector: { disk: 'ssd' } })).spec.nodeSelector).toEqual({
    pool: 'general',
    disk: 'ssd',
  });
  const prod = await namespace({ [NODE_SELECTOR]: 'env=prod' });
  expect((await createPod(prod)).spec.nodeSelector).toEqual({ env: 'prod' });
  const name = uniqueName('dev');
  expect(await refused(podManifest(prod, { nodeSelector: { env: 'dev' } }, name))).toBe(
    `Error from server (Forbidden): error when creating "<file>": pods "${name}" is forbidden: pod node label selector conflicts with its namespace node label selector`,
  );
  const restricted = await namespace({}, WHITELISTED_NS);
  expect((await createPod(restricted, { nodeSelector: { disk: 'ssd' } })).spec.nodeSelector).toEqual({
    pool: 'general',
    disk: 'ssd',
  });
  const hdd = uniqueName('hdd');
  expect(await refused(podManifest(restricted, { nodeSelector: { disk: 'hdd' } }, hdd))).toBe(
    `Error from server (Forbidden): error when creating "<file>": pods "${hdd}" is forbidden: pod node label selector labels conflict with its namespace whitelist`,
  );
});

it('PodTolerationRestriction: namespace (else cluster) defaults, memory-pressure for non-BestEffort pods, whitelists', async () => {
  const plain = await namespace();
  const gpu = { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' };
  expect((await createPod(plain)).spec.tolerations).toContainEqual(CLUSTER_DEFAULT);
  const burstable = await createPod(plain, {
    containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
  });
  expect(burstable.spec.tolerations).toContainEqual({
    key: 'node.svc.io/memory-pressure',
    operator: 'Exists',
    effect: 'NoSchedule',
  });
  // The whitelist covers DefaultTolerationSeconds' NoExecute tolerations too, as it must in Kubernetes.
  const whitelist = [gpu, { operator: 'Exists', effect: 'NoExecute' }];
  const strict = await namespace({
    [DEFAULT_TOLERATIONS]: JSON.stringify([gpu]),
    [TOLERATIONS_WHITELIST]: JSON.stringify(whitelist),
  });
  const tolerations = (await createPod(strict)).spec.tolerations;
  expect(tolerations).toContainEqual(gpu);
  expect(tolerations).not.toContainEqual(CLUSTER_DEFAULT);
  expect(
    await refused(podManifest(strict, { tolerations: [{ key: 'db', operator: 'Exists', effect: 'NoSchedule' }] })),
  ).toBe(
    'Error from server: error when creating "<file>": pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
  );
});

it('DenyServiceExternalIPs: no new external IPs, on create or update', async () => {
  const ns = await namespace();
  const service = (name: string, externalIPs?: string[]): object => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) },
  });
  const name = uniqueName('svc');
  expect(await refused(service(name, ['203.0.113.7']))).toBe(
    `Error from server (Forbidden): error when creating "<file>": services "${name}" is forbidden: Use of external IPs is denied by admission control`,
  );
  await env.ok(['create', '-f', await env.manifest(service(name))]);
  const r = await env.run(['patch', 'service', name, '-n', ns, '-p', '{"spec":{"externalIPs":["203.0.113.7"]}}']);
  expect(r.stderr.trim()).toBe(
    `Error from server (Forbidden): services "${name}" is forbidden: Use of external IPs is denied by admission control`,
  );
});

it('EventRateLimit: a namespace bucket of 3 then 1/s; 429 in Kubernetes words; other namespaces and events.svc.io unaffected', async () => {
  const ns = await namespace();
  const other = await namespace();
  const event = (namespace: string): object => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: uniqueName('e'), namespace },
    involvedObject: { kind: 'Pod', name: 'p', namespace },
    reason: 'Test',
    message: 'hello',
  });
  const c = env.server.client;
  const post = (namespace: string): ReturnType<typeof c.post> =>
    c.post(`/api/v1/namespaces/${namespace}/events`, event(namespace));
  // The bucket refills one token a second: raw requests drain it faster than that.
  for (let i = 0; i < 3; i++) expectCode(await post(ns), 201);
  const raw = await post(ns);
  expect([raw.status, raw.json<{ reason: string }>().reason, raw.headers['retry-after']]).toEqual([
    429,
    'TooManyRequests',
    undefined,
  ]);
  // kubectl takes a while to start: drain again before each try, until its request finds the bucket empty.
  let stderr = '';
  for (let attempt = 0; attempt < 5 && !stderr; attempt++) {
    while ((await post(ns)).status !== 429);
    const file = await env.manifest(event(ns));
    const r = await env.run(['create', '-f', file]);
    if (r.code !== 0) stderr = r.stderr.trim().replace(file, '<file>');
  }
  expect(stderr).toBe(
    `Error from server (TooManyRequests): error when creating "<file>": Too many requests: limit reached on type Namespace for key ${ns}`,
  );
  await env.ok(['create', '-f', await env.manifest(event(other))]);
  const dryRun = await c.post(`/api/v1/namespaces/${ns}/events?dryRun=All`, event(ns));
  expect(dryRun.status).toBe(201);
  const v1 = {
    apiVersion: 'events.svc.io/v1',
    kind: 'Event',
    metadata: { name: uniqueName('e'), namespace: ns },
    eventTime: new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    reportingController: 'test',
    reportingInstance: 'test-1',
    action: 'Test',
    reason: 'Test',
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'p', namespace: ns },
  };
  expectCode(await c.post(`/apis/events.svc.io/v1/namespaces/${ns}/events`, v1), 201);
});
