import { Etcd3 } from 'etcd3';
import { startEtcd, startTestApiServer, waitFor, type WatchEventJson } from '@svc/testing';

// What the watch cache and the compactor promise when etcd misbehaves or is shared.
const NS = '/api/v1/namespaces/default/configmaps';

it('a restart of etcd loses and duplicates no events for open watches, and readyz recovers', async () => {
  const etcd = await startEtcd();
  const t = await startTestApiServer({ etcd });
  try {
    const c = t.client;
    const rv = (await c.get(NS)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const w = await c.watch(`${NS}?watch=1&resourceVersion=${rv}`);
    expect((await c.post(NS, { metadata: { name: 'before' } })).status).toBe(201);
    await etcd.killMember(0);
    await etcd.restartMember(0);
    await waitFor(
      'a write after the restart',
      async () => (await c.post(NS, { metadata: { name: 'after' } })).status === 201,
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    await waitFor('readyz after the restart', async () => (await c.get('/readyz')).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    const events: WatchEventJson[] = await w.take(2, { timeoutMs: 20_000 });
    // Nothing more (no duplicate) arrives before a later, distinct write.
    expect((await c.post(NS, { metadata: { name: 'marker' } })).status).toBe(201);
    events.push(...(await w.take(1)));
    w.close();
    expect(events.map((e) => `${e.type}:${e.object.metadata?.name}`)).toEqual([
      'ADDED:before',
      'ADDED:after',
      'ADDED:marker',
    ]);
  } finally {
    await t.stop();
    await etcd.stop();
  }
}, 60_000);

it('two API servers compact once per interval between them', async () => {
  const etcd = await startEtcd();
  const raw = new Etcd3({ hosts: etcd.endpoints });
  const args = ['--store-compaction-interval=300ms'];
  const a = await startTestApiServer({ etcd, args });
  const b = await startTestApiServer({ etcd, args });
  try {
    const old = await a.client.post(NS, { metadata: { name: 'old' } });
    const oldRv = old.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const version = async (): Promise<number> => Number((await raw.get('compact_rev_key').exec()).kvs[0]?.version ?? 0);
    // Rounds may already have run while the servers started: count from the write, whose
    // revision is compacted by the second round after it (the first records a later revision).
    const afterWrite = await version();
    await waitFor(
      'several compaction rounds after the write',
      async () => (await version()) >= Math.max(6, afterWrite + 3),
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    await a.server.shutdown();
    await b.server.shutdown();
    const v = await version();
    const compactions = async (s: typeof a): Promise<number> =>
      (await s.server.metrics.etcdRequestDuration.get()).values
        .filter((x) => x.metricName === 'etcd_request_duration_seconds_count' && x.labels.operation === 'compact')
        .reduce((sum, x) => sum + x.value, 0);
    const sum = (await compactions(a)) + (await compactions(b));
    // The first round only records a revision; every later round compacts exactly once.
    expect(sum).toBeGreaterThanOrEqual(v - 2);
    expect(sum).toBeLessThanOrEqual(v - 1);
    // History before the compactions is gone.
    await expect(raw.get('/x').revision(oldRv).exec()).rejects.toThrow(/compacted/);
  } finally {
    await a.stop();
    await b.stop();
    raw.close();
    await etcd.stop();
  }
}, 60_000);
