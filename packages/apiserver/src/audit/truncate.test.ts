import type { AuditLevel } from '@svc/api';
import type { AuditBackend, PluginErrors } from './backend.js';
import { AuditRecord } from './event.js';
import { TruncatingBackend } from './truncate.js';

const V = 'audit.svc.io/v1';

const record = (o: { id: string; level?: AuditLevel; body?: number }): AuditRecord =>
  new AuditRecord({
    level: o.level ?? 'RequestResponse',
    auditID: o.id,
    stage: 'ResponseComplete',
    requestURI: '/',
    verb: 'create',
    user: {},
    sourceIPs: [],
    userAgent: '',
    requestObject: o.body ? JSON.stringify({ data: 'x'.repeat(o.body) }) : undefined,
    responseObject: o.body ? JSON.stringify({ data: 'y'.repeat(o.body) }) : undefined,
    requestReceivedTimestamp: 0,
    stageTimestamp: 0,
  });

function setup(c: { maxEventSize: number; maxBatchSize: number }): {
  b: TruncatingBackend;
  batches: AuditRecord[][];
  lost: Record<string, number>;
} {
  const batches: AuditRecord[][] = [];
  const lost: Record<string, number> = {};
  const delegate: AuditBackend = {
    name: 'fake',
    processEvents: (records) => {
      batches.push([...records]);
      return Promise.resolve(true);
    },
    shutdown: () => Promise.resolve(),
  };
  const errors: PluginErrors = (plugin, _e, impacted) => {
    lost[plugin] = (lost[plugin] ?? 0) + impacted.length;
  };
  return { b: new TruncatingBackend(delegate, { ...c, apiVersion: V }, errors), batches, lost };
}

describe('TruncatingBackend', () => {
  it('passes events within the limit as they are', async () => {
    const { b, batches } = setup({ maxEventSize: 10_000, maxBatchSize: 100_000 });
    const r = record({ id: 'a', body: 100 });
    expect(await b.processEvents([r])).toBe(true);
    expect(batches).toEqual([[r]]);
  });

  it('drops the request and response of an over-size event and marks it truncated', async () => {
    const { b, batches, lost } = setup({ maxEventSize: 1_000, maxBatchSize: 100_000 });
    await b.processEvents([record({ id: 'big', body: 2_000 })]);
    const sent = batches[0]?.[0];
    expect(sent?.fields.requestObject).toBeUndefined();
    expect(sent?.fields.responseObject).toBeUndefined();
    expect(sent?.fields.annotations).toEqual({ 'audit.svc.io/truncated': 'true' });
    expect(sent?.size(V)).toBeLessThanOrEqual(1_000);
    expect(lost).toEqual({});
  });

  it('drops (and counts) an event still too large, or too large at Metadata level', async () => {
    const { b, batches, lost } = setup({ maxEventSize: 100, maxBatchSize: 100_000 });
    await b.processEvents([
      record({ id: 'x'.repeat(200), body: 10 }),
      record({ id: 'y'.repeat(200), level: 'Metadata' }),
    ]);
    expect(batches).toEqual([]);
    expect(lost).toEqual({ truncate: 2 });
  });

  it('splits batches larger than the maximum', async () => {
    const one = record({ id: 'a', body: 100 }).size(V);
    const { b, batches } = setup({ maxEventSize: 10_000, maxBatchSize: one * 2 + 10 });
    await b.processEvents(['a', 'b', 'c', 'd', 'e'].map((id) => record({ id, body: 100 })));
    expect(batches.map((x) => x.map((r) => r.fields.auditID))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });
});
