// Static pods from a manifest directory and a manifest URL, run through a real svc-runtime,
// with their mirror pods in a real API server; and standalone mode (no API).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { criLabel, isNotFound, podConfigAnnotation, type Pod } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { NODES, containerOf, withPodEnv } from './pods-testing.js';

const env = withPodEnv();

function manifest(name: string, script = 'exec sleep 60'): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    `metadata: {name: ${name}, labels: {app: ${name}}}`,
    'spec:',
    '  containers:',
    '  - name: c',
    '    image: busybox',
    `    command: [sh, -c, ${JSON.stringify(script)}]`,
    '',
  ].join('\n');
}

async function mirrorPod(name: string): Promise<Pod | undefined> {
  try {
    return await env.pods().get(`${name}-${env.nodeName}`);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function containersOf(uid: string): Promise<number> {
  return (await env.cri.runtime.listContainers({ filter: { labelSelector: { [criLabel('pod.uid')]: uid } } }))
    .containers.length;
}

it('runs a static pod from the manifest directory with a mirror pod; a deleted mirror comes back; a deleted file stops the pod', async () => {
  const dir = join(env.dir, 'manifests');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'web.yaml'), manifest('web'));
  await writeFile(join(dir, '.hidden.yaml'), manifest('hidden'));
  const { manager, stop } = await env.startManager({ staticPodPath: dir });
  try {
    const node = await new ResourceClient(env.testApi, NODES).get(env.nodeName);
    const mirror = await waitFor(
      'a running mirror pod',
      async () => {
        const m = await mirrorPod('web');
        return m?.status?.phase === 'Running' && containerOf(m)?.ready ? m : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const ann = mirror.metadata.annotations ?? {};
    const staticPod = manager.pods().find((p) => p.metadata.name === `web-${env.nodeName}`);
    expect(staticPod?.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(ann).toMatchObject({
      [podConfigAnnotation('source')]: 'file',
      [podConfigAnnotation('hash')]: staticPod?.metadata.uid,
      [podConfigAnnotation('mirror')]: staticPod?.metadata.uid,
    });
    expect(mirror.metadata.uid).not.toBe(staticPod?.metadata.uid);
    expect(mirror.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: env.nodeName, uid: node.metadata.uid, controller: true },
    ]);
    expect(mirror.metadata).toMatchObject({ namespace: 'default', labels: { app: 'web' } });
    expect(mirror.spec.nodeName).toBe(env.nodeName);
    expect(await mirrorPod('hidden')).toBeUndefined();
    const containerId = containerOf(mirror)?.containerID;

    // Deleting the mirror pod (gracefully, as kubectl does) does not touch the static pod; the mirror comes back.
    await env.pods().delete(mirror.metadata.name ?? '');
    const again = await waitFor(
      'a new mirror pod',
      async () => {
        const m = await mirrorPod('web');
        return m &&
          m.metadata.uid !== mirror.metadata.uid &&
          !m.metadata.deletionTimestamp &&
          containerOf(m)?.containerID
          ? m
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(containerOf(again)).toMatchObject({ containerID: containerId, restartCount: 0 });

    await rm(join(dir, 'web.yaml'));
    await waitFor('the mirror pod gone', async () => (await mirrorPod('web')) === undefined, { timeoutMs: 20_000 });
    await waitFor(
      "the static pod's containers removed",
      async () => (await containersOf(staticPod?.metadata.uid ?? '')) === 0,
      { timeoutMs: 20_000 },
    );
    expect(manager.pods().find((p) => p.metadata.name === `web-${env.nodeName}`)).toBeUndefined();
  } finally {
    await stop();
  }
});

it('runs static pods from --manifest-url, sent with --manifest-url-header', async () => {
  let body = manifest('remote');
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.headers['x-token'] !== 'a, b') {
      res.statusCode = 401;
      res.end('no');
      return;
    }
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods.yaml`;
  const { manager, stop } = await env.startManager({ manifestUrl: url, manifestUrlHeaders: { 'X-Token': ['a', 'b'] } });
  try {
    const mirror = await waitFor(
      'a running mirror pod',
      async () => {
        const m = await mirrorPod('remote');
        return m?.status?.phase === 'Running' ? m : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(mirror.metadata.annotations?.[podConfigAnnotation('source')]).toBe('http');
    expect(seen[0]?.['x-token']).toBe('a, b');
    const uid = manager.pods().find((p) => p.metadata.name === `remote-${env.nodeName}`)?.metadata.uid ?? '';
    expect(await containersOf(uid)).toBe(1);

    body = '';
    await waitFor(
      'the pod gone',
      async () => (await mirrorPod('remote')) === undefined && (await containersOf(uid)) === 0,
      { timeoutMs: 20_000 },
    );
  } finally {
    await stop();
    await new Promise((r) => server.close(r));
  }
});

it('standalone mode (no API): runs static pods, makes no mirror pods', async () => {
  const dir = join(env.dir, 'standalone');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'solo.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'solo', namespace: 'kube' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo solo; exit 0'] }],
      },
    }),
  );
  const { manager, stop } = await env.startManager({ client: undefined, staticPodPath: dir });
  try {
    const p = await waitFor(
      'the static pod Succeeded',
      () => manager.pods().find((x) => x.metadata.name === `solo-${env.nodeName}` && x.status?.phase === 'Succeeded'),
      { timeoutMs: 20_000 },
    );
    expect(p.metadata.namespace).toBe('kube');
    expect(containerOf(p)?.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const files = manager.containerLogFiles('kube', `solo-${env.nodeName}`, 'c');
    expect(files?.current).toContain(`kube_solo-${env.nodeName}_${p.metadata.uid}`);
    await expect(env.pods('kube').get(`solo-${env.nodeName}`)).rejects.toThrow();
  } finally {
    await stop();
  }
});
