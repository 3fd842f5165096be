import { spawn } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { startKubectlEnv, startRedis, waitFor, type KubectlEnv, type RedisHandle } from '@svc/testing';

// Events on Redis: svc-apiserver started with --store-servers-overrides sending core and
// events/v1 Events to a Redis (started by the harness), stock kubectl watching them.
let redis: RedisHandle;
let env: KubectlEnv;
beforeAll(async () => {
  redis = await startRedis();
  env = await startKubectlEnv({
    args: ['--store-servers-overrides', `/events#${redis.url},events.svc.io/events#${redis.url}`],
  });
});
afterAll(async () => {
  await env?.stop();
  await redis?.stop();
});

function event(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'ConfigMap', name: 'x', namespace: 'default' },
    reason: 'Tested',
    message: `message of ${name}`,
    type: 'Normal',
  });
}

it('kubectl get events -w sees an Event stored in Redis, and etcd never holds it', async () => {
  await env.ok(['create', '-f', '-'], { stdin: event('on-redis-1') });
  const child = spawn('kubectl', ['get', 'events', '-w', '--output-watch-events'], {
    env: { ...process.env, KUBECONFIG: env.server.svcconfigPath, HOME: env.home },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    // Listed first, then the watch is open: a new Event arrives through it.
    await waitFor('the list', () => out.includes('on-redis-1'));
    await env.ok(['create', '-f', '-'], { stdin: event('on-redis-2') });
    await waitFor(`the ADDED line (${out})`, () =>
      out.split('\n').some((l) => l.startsWith('ADDED') && l.includes('message of on-redis-2')),
    );
  } finally {
    child.kill();
  }
  const key = `${env.server.storePrefix}/core/events/default/on-redis-1`;
  const r = new Redis(redis.url);
  const etcd = new Etcd3({ hosts: env.server.etcd.endpoints });
  try {
    expect(await r.exists(`svc:o:${key}`)).toBe(1);
    expect(await etcd.get(key).string()).toBeNull();
  } finally {
    r.disconnect();
    etcd.close();
  }
  // events/v1 reads the same Events (stored as core Events, so from Redis too).
  const v1 = await env.ok(['get', 'events.v1.events.svc.io', 'on-redis-1', '-o', 'jsonpath={.note}']);
  expect(v1.stdout).toBe('message of on-redis-1');
});
