// The audit stage over stub requests: the Panic stage, a Status error before and after the
// answer began, a long-running request that fails before its first header, one that writes
// nothing, and blocking-strict refusal.
import type { Request, Response } from 'express';
import { Registry } from 'prom-client';
import { internalError, notFound } from '@svc/api';
import type { AuditBackend } from '../../audit/backend.js';
import type { AuditRecord } from '../../audit/event.js';
import { AuditMetrics } from '../../audit/metrics.js';
import { PolicyEvaluator } from '../../audit/policy.js';
import { Auditor } from '../../audit/request-audit.js';
import { parseRequestInfo } from '../../endpoints/request-info.js';
import { withAudit } from './audit.js';
import type { ApiRequest, Handler } from './chain.js';

function setup(o: { ok?: boolean } = {}): { auditor: Auditor; records: AuditRecord[]; metrics: AuditMetrics } {
  const records: AuditRecord[] = [];
  const backend: AuditBackend = {
    name: 'fake',
    processEvents: (rs) => {
      records.push(...rs);
      return Promise.resolve(o.ok ?? true);
    },
    shutdown: () => Promise.resolve(),
  };
  const metrics = new AuditMetrics(new Registry());
  const policy = new PolicyEvaluator({ apiVersion: 'audit.svc.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] });
  return { auditor: new Auditor({ policy, backend, metrics }), records, metrics };
}

/** A request to `path` whose response records what is written. */
function request(method: string, path: string): ApiRequest & { res: Response & { heads: number[] } } {
  const heads: number[] = [];
  const res = {
    heads,
    headersSent: false,
    statusCode: 200,
    writeHead(this: { statusCode: number; headersSent: boolean }, code: number) {
      heads.push(code);
      this.statusCode = code;
      this.headersSent = true;
      return this;
    },
  } as unknown as Response & { heads: number[] };
  const req = {
    method,
    originalUrl: path,
    url: path,
    headers: {},
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as Request;
  const user = { name: 'u', groups: [] };
  const info = parseRequestInfo(method, path, new URLSearchParams(path.split('?')[1] ?? ''));
  return {
    req,
    res,
    info,
    ctx: { user },
    requester: user,
    signal: new AbortController().signal,
    audit: { id: 'a1', receivedAt: 1 },
  };
}

const stages = (records: AuditRecord[]): Array<[string, number | undefined]> =>
  records.map((r) => [r.fields.stage, r.fields.responseStatus?.code]);

describe('withAudit', () => {
  it('records Panic (not ResponseComplete) when something other than a Status error escapes', async () => {
    const { auditor, records } = setup();
    const handler: Handler = () => Promise.reject(new Error('boom'));
    await expect(withAudit(auditor)(handler)(request('GET', '/api/v1/pods'))).rejects.toThrow('boom');
    expect(stages(records)).toEqual([
      ['RequestReceived', undefined],
      ['Panic', 500],
    ]);
    expect(records[1]?.fields.responseStatus).toEqual({
      metadata: {},
      status: 'Failure',
      message: "APIServer panic'd: boom",
      reason: 'InternalError',
      code: 500,
    });
  });

  it('records a Status error thrown before the answer as the answer', async () => {
    const { auditor, records } = setup();
    const handler: Handler = () => Promise.reject(notFound({ group: '', resource: 'pods' }, 'p'));
    await expect(withAudit(auditor)(handler)(request('GET', '/api/v1/namespaces/n/pods/p'))).rejects.toThrow();
    expect(stages(records)).toEqual([
      ['RequestReceived', undefined],
      ['ResponseComplete', 404],
    ]);
    expect(records[1]?.fields.responseStatus).toMatchObject({ reason: 'NotFound', status: 'Failure' });
  });

  it('keeps the written code when a Status error comes after the answer began', async () => {
    const { auditor, records } = setup();
    const handler: Handler = (r) => {
      r.res.writeHead(200);
      return Promise.reject(internalError('late'));
    };
    await expect(withAudit(auditor)(handler)(request('GET', '/api/v1/pods?watch=1'))).rejects.toThrow();
    expect(stages(records)).toEqual([
      ['RequestReceived', undefined],
      ['ResponseStarted', 200],
      ['ResponseComplete', 200],
    ]);
  });

  it('a long-running request refused before its first header still gets ResponseStarted', async () => {
    const { auditor, records } = setup();
    const handler: Handler = () => Promise.reject(notFound({ group: '', resource: 'pods' }, 'p'));
    await expect(withAudit(auditor)(handler)(request('GET', '/api/v1/namespaces/n/pods/p/log'))).rejects.toThrow();
    expect(stages(records)).toEqual([
      ['RequestReceived', undefined],
      ['ResponseStarted', 404],
      ['ResponseComplete', 404],
    ]);
  });

  it('a request that wrote nothing reads as "Connection closed early"', async () => {
    const { auditor, records } = setup();
    await withAudit(auditor)(() => Promise.resolve())(request('GET', '/api/v1/pods?watch=1'));
    expect(stages(records)).toEqual([
      ['RequestReceived', undefined],
      ['ResponseStarted', 200],
      ['ResponseComplete', 200],
    ]);
    expect(records[2]?.fields.responseStatus).toEqual({
      metadata: {},
      status: 'Success',
      message: 'Connection closed early',
      code: 200,
    });
  });

  it('refuses the request with 500 when the first event cannot be recorded, and counts it', async () => {
    const { auditor, records, metrics } = setup({ ok: false });
    let served = false;
    const handler: Handler = () => {
      served = true;
      return Promise.resolve();
    };
    await expect(withAudit(auditor)(handler)(request('GET', '/version'))).rejects.toMatchObject({
      status: { code: 500, message: 'Internal Server Error: "/version": failed to store audit event' },
    });
    expect(served).toBe(false);
    expect(records).toHaveLength(1);
    expect((await metrics.rejected.get()).values[0]?.value).toBe(1);
  });

  it('passes requests through when there is no auditor', async () => {
    let served = false;
    await withAudit(undefined)(() => {
      served = true;
      return Promise.resolve();
    })(request('GET', '/version'));
    expect(served).toBe(true);
  });
});
