// Liveness, readiness and start-up probes (exec, httpGet, tcpSocket) of pods run through a real
// svc-runtime, seen in the API's pod status.
import { createServer, type Server } from 'node:http';
import { rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ResourceClient } from '@svc/client';
import { closedPort, waitFor } from '@svc/testing';
import type { Event, Pod, Probe } from '@svc/api';
import { containerOf, shPod, waitForPod, withPodEnv } from './pods-testing.js';

const env = withPodEnv();
let server: Server;
let openPort: number;

beforeAll(async () => {
  await env.startManager();
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  openPort = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const fast = (p: Probe): Probe => ({ periodSeconds: 1, failureThreshold: 1, ...p });

function probed(
  name: string,
  probes: Partial<Pick<Pod['spec']['containers'][number], 'livenessProbe' | 'readinessProbe' | 'startupProbe'>>,
): Pod {
  return shPod(name, env.nodeName, { script: 'exec sleep 60', container: probes });
}

/** Watches the pod for `ms` and returns the highest restart count seen. */
async function restartsDuring(name: string, ms: number): Promise<number> {
  let max = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    max = Math.max(max, containerOf(await env.pods().get(name))?.restartCount ?? 0);
    await new Promise((r) => setTimeout(r, 100));
  }
  return max;
}

describe('liveness probes restart the container when they fail', () => {
  it('exec `false`', async () => {
    await env.pods().create(probed('live-exec', { livenessProbe: fast({ exec: { command: ['false'] } }) }));
    const p = await waitForPod(env, 'live-exec', {
      what: 'a restart',
      cond: (x) => (containerOf(x)?.restartCount ?? 0) >= 1,
    });
    expect(containerOf(p)?.lastState.terminated).toMatchObject({ exitCode: 143, reason: 'Error' });
    // Kubernetes' events: Unhealthy for the failed probe, Killing for the restart it causes.
    const events = new ResourceClient<Event>(env.testApi, { group: '', version: 'v1', resource: 'events' }).namespace(
      'default',
    );
    const seen = await waitFor('Unhealthy and Killing events', async () => {
      const items = (await events.list({ fieldSelector: 'involvedObject.name=live-exec' })).items;
      const by = (r: string) => items.find((e) => e.reason === r);
      return by('Unhealthy') && by('Killing') ? { unhealthy: by('Unhealthy'), killing: by('Killing') } : undefined;
    });
    expect(seen.unhealthy).toMatchObject({ type: 'Warning', message: 'Liveness probe failed: ' }); // `false` prints nothing
    expect(seen.killing).toMatchObject({
      type: 'Normal',
      message: 'Container c failed liveness probe, will be restarted',
    });
  });

  it('httpGet to a closed port; an answering server keeps it running', async () => {
    const closed = await closedPort();
    await env
      .pods()
      .create(probed('live-http', { livenessProbe: fast({ httpGet: { port: closed, path: '/healthz' } }) }));
    await env.pods().create(
      probed('live-http-ok', {
        livenessProbe: fast({
          httpGet: { port: openPort, path: '/healthz' },
          failureThreshold: 3,
          timeoutSeconds: 2,
        }),
      }),
    );
    await waitForPod(env, 'live-http', { what: 'a restart', cond: (x) => (containerOf(x)?.restartCount ?? 0) >= 1 });
    expect(await restartsDuring('live-http-ok', 2500)).toBe(0);
  });

  it('tcpSocket to a closed port; an open port keeps it running', async () => {
    const closed = await closedPort();
    await env.pods().create(probed('live-tcp', { livenessProbe: fast({ tcpSocket: { port: closed } }) }));
    await env.pods().create(
      probed('live-tcp-ok', {
        livenessProbe: fast({ tcpSocket: { port: openPort }, failureThreshold: 3, timeoutSeconds: 2 }),
      }),
    );
    await waitForPod(env, 'live-tcp', { what: 'a restart', cond: (x) => (containerOf(x)?.restartCount ?? 0) >= 1 });
    expect(await restartsDuring('live-tcp-ok', 2500)).toBe(0);
  });
});

it('readiness flips the container ready and the pod Ready condition', async () => {
  const flag = join(env.dir, 'ready-flag');
  await env.pods().create(probed('ready', { readinessProbe: fast({ exec: { command: ['test', '-f', flag] } }) }));
  const ready = (p: Pod): string | undefined => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const notReady = await waitForPod(env, 'ready', {
    what: 'Running, not ready',
    cond: (p) => p.status?.phase === 'Running' && ready(p) === 'False',
  });
  expect(containerOf(notReady)).toMatchObject({ ready: false, started: true });
  expect(notReady.status?.conditions?.find((c) => c.type === 'ContainersReady')).toMatchObject({
    status: 'False',
    message: 'containers with unready status: [c]',
  });
  await writeFile(flag, '');
  const p = await waitForPod(env, 'ready', { what: 'Ready', cond: (x) => ready(x) === 'True' });
  expect(containerOf(p)?.ready).toBe(true);
  await rm(flag);
  await waitForPod(env, 'ready', {
    what: 'not Ready again',
    cond: (x) => ready(x) === 'False' && containerOf(x)?.ready === false,
  });
  expect(containerOf(await env.pods().get('ready'))?.restartCount).toBe(0);
});

it('a start-up probe holds back liveness and readiness until it passes', async () => {
  const flag = join(env.dir, 'started-flag');
  await env.pods().create(
    probed('startup', {
      startupProbe: { exec: { command: ['test', '-f', flag] }, periodSeconds: 1, failureThreshold: 30 },
      readinessProbe: fast({ exec: { command: ['true'] } }),
      livenessProbe: fast({ exec: { command: ['false'] } }),
    }),
  );
  await waitForPod(env, 'startup', { what: 'Running', cond: (p) => p.status?.phase === 'Running' });
  expect(await restartsDuring('startup', 2500)).toBe(0);
  expect(containerOf(await env.pods().get('startup'))).toMatchObject({ started: false, ready: false });
  await writeFile(flag, '');
  await waitForPod(env, 'startup', {
    what: 'started',
    cond: (p) => containerOf(p)?.started === true || (containerOf(p)?.restartCount ?? 0) >= 1,
  });
  // Now liveness runs, and fails.
  await waitForPod(env, 'startup', {
    what: 'a liveness restart',
    cond: (p) => (containerOf(p)?.restartCount ?? 0) >= 1,
  });
});
