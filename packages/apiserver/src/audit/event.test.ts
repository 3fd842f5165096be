import {
  AuditRecord,
  encodeEvent,
  encodeEventList,
  goQuote,
  legacyEventLine,
  microTime,
  rfc3339Nano,
  type AuditEventFields,
} from './event.js';

const T = Date.UTC(2024, 0, 2, 3, 4, 5) * 1000 + 123_450; // 2024-01-02T03:04:05.12345Z

const base = (o: Partial<AuditEventFields> = {}): AuditEventFields => ({
  level: 'Metadata',
  auditID: 'id-1',
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces/ns/pods?limit=1',
  verb: 'list',
  user: { username: 'alice', groups: ['dev', 'system:authenticated'], extra: { z: ['1'], a: ['2'] } },
  sourceIPs: ['10.0.0.1', '127.0.0.1'],
  userAgent: 'kubectl/v1.32.0',
  objectRef: { resource: 'pods', namespace: 'ns', apiVersion: 'v1' },
  responseStatus: { metadata: {}, code: 200 },
  requestReceivedTimestamp: T,
  stageTimestamp: T + 1_000,
  annotations: { 'z/b': '1', 'a/c': '2' },
  ...o,
});

describe('event encoding', () => {
  it('writes MicroTime with six digits in UTC and RFC3339Nano without trailing zeros', () => {
    expect(microTime(T)).toBe('2024-01-02T03:04:05.123450Z');
    expect(rfc3339Nano(T)).toBe('2024-01-02T03:04:05.12345Z');
    expect(rfc3339Nano(Date.UTC(2024, 0, 2) * 1000)).toBe('2024-01-02T00:00:00Z');
  });

  it('writes the fields in the Go type’s order, leaves empty optional ones out and sorts maps', () => {
    expect(encodeEvent(base(), 'audit.svc.io/v1')).toBe(
      '{"kind":"Event","apiVersion":"audit.svc.io/v1","level":"Metadata","auditID":"id-1","stage":"ResponseComplete",' +
        '"requestURI":"/api/v1/namespaces/ns/pods?limit=1","verb":"list",' +
        '"user":{"username":"alice","groups":["dev","system:authenticated"],"extra":{"a":["2"],"z":["1"]}},' +
        '"sourceIPs":["10.0.0.1","127.0.0.1"],"userAgent":"kubectl/v1.32.0",' +
        '"objectRef":{"resource":"pods","namespace":"ns","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},' +
        '"requestReceivedTimestamp":"2024-01-02T03:04:05.123450Z","stageTimestamp":"2024-01-02T03:04:05.124450Z",' +
        '"annotations":{"a/c":"2","z/b":"1"}}',
    );
    const bare = encodeEvent(
      base({
        user: {},
        sourceIPs: [],
        userAgent: '',
        objectRef: undefined,
        responseStatus: undefined,
        annotations: {},
      }),
      'audit.svc.io/v1',
    );
    expect(JSON.parse(bare)).toEqual({
      kind: 'Event',
      apiVersion: 'audit.svc.io/v1',
      level: 'Metadata',
      auditID: 'id-1',
      stage: 'ResponseComplete',
      requestURI: '/api/v1/namespaces/ns/pods?limit=1',
      verb: 'list',
      user: {},
      requestReceivedTimestamp: '2024-01-02T03:04:05.123450Z',
      stageTimestamp: '2024-01-02T03:04:05.124450Z',
    });
  });

  it('embeds captured objects as they are and writes a Status in its Go order', () => {
    const e = JSON.parse(
      encodeEvent(
        base({
          requestObject: '{"kind":"ConfigMap"}',
          responseObject: '{"kind":"Status"}',
          responseStatus: {
            metadata: {},
            code: 404,
            reason: 'NotFound',
            message: 'nope',
            status: 'Failure',
            details: { kind: 'pods', name: 'p' },
          },
        }),
        'audit.svc.io/v1',
      ),
    ) as Record<string, unknown>;
    expect(e.requestObject).toEqual({ kind: 'ConfigMap' });
    expect(e.responseObject).toEqual({ kind: 'Status' });
    expect(JSON.stringify(e.responseStatus)).toBe(
      '{"metadata":{},"status":"Failure","message":"nope","reason":"NotFound","details":{"name":"p","kind":"pods"},"code":404}',
    );
  });

  it('makes an EventList of records and reuses each record’s JSON', () => {
    const r = new AuditRecord(base());
    expect(r.json('v')).toBe(r.json('v'));
    expect(r.size('v')).toBe(Buffer.byteLength(r.json('v')));
    const list = JSON.parse(encodeEventList([r, r], 'audit.svc.io/v1')) as { kind: string; items: unknown[] };
    expect(list.kind).toBe('EventList');
    expect(list.items).toHaveLength(2);
  });
});

describe('legacy format', () => {
  it('quotes as Go’s %q does', () => {
    expect(goQuote('a"b\\c\n\t\x01\x7f é')).toBe('"a\\"b\\\\c\\n\\t\\x01\\x7f é"');
  });

  it('is Kubernetes’ one line of text', () => {
    expect(legacyEventLine(base())).toBe(
      '2024-01-02T03:04:05.12345Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" method="list" user="alice" ' +
        'groups="\\"dev\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.32.0" ' +
        'namespace="ns" uri="/api/v1/namespaces/ns/pods?limit=1" response="200"',
    );
    expect(
      legacyEventLine(
        base({
          user: {},
          impersonatedUser: { username: 'bob', groups: ['g'] },
          sourceIPs: [],
          objectRef: undefined,
          responseStatus: undefined,
        }),
      ),
    ).toContain(
      'ip="<unknown>" method="list" user="<none>" groups="<none>" as="bob" asgroups="\\"g\\"" user-agent="kubectl/v1.32.0" namespace="<none>" uri="/api/v1/namespaces/ns/pods?limit=1" response="<deferred>"',
    );
  });
});
