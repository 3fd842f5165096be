import type { AuditBackend, PluginErrors } from './backend.js';
import { BufferedBackend, TokenBucket, type BatchConfig } from './buffered.js';
import { AuditRecord } from './event.js';

const record = (i: number): AuditRecord =>
  new AuditRecord({
    level: 'Metadata',
    auditID: `id-${i}`,
    stage: 'ResponseComplete',
    requestURI: '/',
    verb: 'get',
    user: {},
    sourceIPs: [],
    userAgent: '',
    requestReceivedTimestamp: 0,
    stageTimestamp: 0,
  });

/** A delegate that records its batches; `gate` holds each call until released. */
function sink(o: { gate?: Promise<void>; ok?: boolean } = {}): AuditBackend & { batches: string[][]; shut: boolean } {
  const s = {
    name: 'fake',
    batches: [] as string[][],
    shut: false,
    async processEvents(records: readonly AuditRecord[]) {
      s.batches.push(records.map((r) => r.fields.auditID));
      await o.gate;
      return o.ok ?? true;
    },
    shutdown() {
      s.shut = true;
      return Promise.resolve();
    },
  };
  return s;
}

function lost(): PluginErrors & { events: Record<string, number>; reasons: string[] } {
  const events: Record<string, number> = {};
  const reasons: string[] = [];
  const f = ((plugin: string, err: unknown, impacted: readonly AuditRecord[]) => {
    events[plugin] = (events[plugin] ?? 0) + impacted.length;
    reasons.push(String(err));
  }) as PluginErrors & { events: Record<string, number>; reasons: string[] };
  f.events = events;
  f.reasons = reasons;
  return f;
}

const config = (o: Partial<BatchConfig> = {}): BatchConfig => ({
  bufferSize: 100,
  maxBatchSize: 3,
  maxBatchWaitMs: 60_000,
  asyncDelegate: true,
  ...o,
});

const tick = (ms = 20): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('BufferedBackend', () => {
  it('sends full batches at once and the rest at shutdown, in order; then shuts the delegate down', async () => {
    const d = sink();
    const b = new BufferedBackend(d, config(), lost());
    expect(await b.processEvents([0, 1, 2, 3, 4, 5, 6].map(record))).toBe(true);
    await tick();
    expect(d.batches).toEqual([
      ['id-0', 'id-1', 'id-2'],
      ['id-3', 'id-4', 'id-5'],
    ]);
    await b.shutdown();
    expect(d.batches[2]).toEqual(['id-6']);
    expect(d.shut).toBe(true);
  });

  it('sends a partial batch when the wait is over', async () => {
    const d = sink();
    const b = new BufferedBackend(d, config({ maxBatchWaitMs: 50 }), lost());
    await b.processEvents([record(0)]);
    await tick(10);
    expect(d.batches).toEqual([]);
    await tick(100);
    expect(d.batches).toEqual([['id-0']]);
    await b.shutdown();
  });

  it('with batches of one, sends each event as it comes', async () => {
    const d = sink();
    const b = new BufferedBackend(d, config({ maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false }), lost());
    await b.processEvents([record(0), record(1)]);
    await tick();
    expect(d.batches).toEqual([['id-0'], ['id-1']]);
    await b.shutdown();
  });

  it('counts events that find the buffer full, and events after shutdown began', async () => {
    let release = (): void => undefined;
    const d = sink({ gate: new Promise<void>((r) => (release = r)) });
    const errors = lost();
    const b = new BufferedBackend(d, config({ bufferSize: 2, maxBatchSize: 1, asyncDelegate: false }), errors);
    await b.processEvents([record(0)]);
    await tick(); // id-0 is with the (held) delegate
    expect(await b.processEvents([1, 2, 3, 4].map(record))).toBe(true);
    expect(errors.events.buffered).toBe(2);
    expect(errors.reasons[0]).toContain('audit buffer queue blocked');
    const done = b.shutdown();
    await b.processEvents([record(5)]);
    expect(errors.events.buffered).toBe(3);
    expect(errors.reasons[1]).toContain('audit backend shut down');
    release();
    await done;
    expect(d.batches.flat()).toEqual(['id-0', 'id-1', 'id-2']);
  });

  it('runs batches concurrently with an asynchronous delegate and waits for them at shutdown', async () => {
    let release = (): void => undefined;
    const d = sink({ gate: new Promise<void>((r) => (release = r)) });
    const b = new BufferedBackend(d, config({ maxBatchSize: 1 }), lost());
    await b.processEvents([0, 1, 2].map(record));
    await tick();
    expect(d.batches).toHaveLength(3);
    let shut = false;
    const done = b.shutdown().then(() => (shut = true));
    await tick();
    expect(shut).toBe(false);
    release();
    await done;
    expect(d.shut).toBe(true);
  });

  it('throttles batches: burst at once, then qps', async () => {
    const d = sink();
    const b = new BufferedBackend(d, config({ maxBatchSize: 1, throttle: { qps: 20, burst: 2 } }), lost());
    const t0 = performance.now();
    await b.processEvents([0, 1, 2, 3, 4].map(record));
    await b.shutdown();
    // Two at once, then three at 50 ms intervals.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(d.batches).toHaveLength(5);
  });
});

describe('TokenBucket', () => {
  it('gives burst tokens at once and then one per 1/qps', async () => {
    let now = 0;
    const t = new TokenBucket(10, 2, () => now);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = performance.now();
      await t.accept();
      waits.push(performance.now() - s);
    }
    expect(waits[0]).toBeLessThan(60);
    expect(waits[1]).toBeLessThan(60);
    expect(waits[2]).toBeGreaterThanOrEqual(90);
    now += 1000; // a second later the bucket is full again
    const s = performance.now();
    await t.accept();
    expect(performance.now() - s).toBeLessThan(60);
  });
});
