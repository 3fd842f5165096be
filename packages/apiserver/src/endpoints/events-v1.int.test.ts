// events.svc.io/v1 Event (the spec's Events section): the newer shape of core Events, stored
// as them; real etcd, HTTPS, and stock kubectl.
import { builtinCatalog, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject } from '@svc/machinery';
import {
  expectCode,
  expectFailure,
  openWatch,
  startKubectlEnv,
  uniqueName,
  type HttpsClient,
  type Json,
  type KubectlEnv,
} from '@svc/testing';

describe('events.svc.io/v1 Event', () => {
  let env: KubectlEnv;
  let api: HttpsClient;
  let ns: string;
  const v1 = (): string => `/apis/events.svc.io/v1/namespaces/${ns}/events`;
  const core = (): string => `/api/v1/namespaces/${ns}/events`;

  beforeAll(async () => {
    env = await startKubectlEnv();
    api = env.server.client;
    ns = uniqueName('ev-ns');
    expectCode(await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } }), 201);
  });
  afterAll(async () => {
    await env?.stop();
  });

  /** A valid events/v1 Event about a Pod in the test namespace. */
  const newEvent = (name: string, extra: Json = {}): Json => ({
    apiVersion: 'events.svc.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2026-11-22T10:00:00.000000Z',
    reportingController: 'svc.io/tester',
    reportingInstance: 'tester-1',
    action: 'Testing',
    reason: 'Tested',
    type: 'Normal',
    note: 'hello from v1',
    regarding: { kind: 'Pod', namespace: ns, name: 'p1', apiVersion: 'v1' },
    ...extra,
  });

  it('is discovered with the usual verbs', async () => {
    const list = expectCode(await api.request('GET', '/apis/events.svc.io/v1'), 200);
    const r = (list.resources as Json[]).find((x) => x.name === 'events');
    expect(r).toMatchObject({ kind: 'Event', namespaced: true, shortNames: ['ev'] });
    expect(r?.verbs).toEqual(expect.arrayContaining(['create', 'get', 'list', 'watch', 'update', 'patch', 'delete']));
  });

  it('stores a v1 Event as a core Event: each API shows its own field names', async () => {
    const name = uniqueName('e');
    const created = expectCode(await api.request('POST', v1(), { body: newEvent(name) }), 201);
    expect(created).toMatchObject({
      apiVersion: 'events.svc.io/v1',
      kind: 'Event',
      note: 'hello from v1',
      reportingController: 'svc.io/tester',
    });
    expect(created.message).toBeUndefined();
    const asCore = expectCode(await api.request('GET', `${core()}/${name}`), 200);
    expect(asCore).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      message: 'hello from v1',
      reportingComponent: 'svc.io/tester',
      reportingInstance: 'tester-1',
      involvedObject: { kind: 'Pod', name: 'p1' },
      eventTime: '2026-11-22T10:00:00.000000Z',
    });
    expect(asCore.note).toBeUndefined();
    expect(asCore.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('shows a core Event through v1 with the deprecated fields filled', async () => {
    const name = uniqueName('legacy');
    expectCode(
      await api.request('POST', core(), {
        body: {
          metadata: { name },
          involvedObject: { kind: 'Pod', namespace: ns, name: 'p2' },
          reason: 'Old',
          message: 'from core',
          type: 'Warning',
          count: 3,
          source: { component: 'old-agent', host: 'h1' },
          firstTimestamp: '2026-11-22T09:00:00Z',
          lastTimestamp: '2026-11-22T09:05:00Z',
        },
      }),
      201,
    );
    const got = expectCode(await api.request('GET', `${v1()}/${name}`), 200);
    expect(got).toMatchObject({
      apiVersion: 'events.svc.io/v1',
      note: 'from core',
      regarding: { name: 'p2' },
      deprecatedCount: 3,
      deprecatedSource: { component: 'old-agent', host: 'h1' },
      deprecatedFirstTimestamp: '2026-11-22T09:00:00Z',
      deprecatedLastTimestamp: '2026-11-22T09:05:00Z',
    });
    for (const f of ['message', 'count', 'source', 'involvedObject', 'firstTimestamp']) expect(got[f]).toBeUndefined();
  });

  it('lists with the v1 field selectors (regarding.*, reportingController) and watches in the v1 shape', async () => {
    const target = uniqueName('target');
    const start = expectCode(await api.request('GET', v1()), 200).metadata.resourceVersion as string;
    const watch = await openWatch(
      { baseUrl: env.server.server.url, caPem: env.server.server.caPem, token: env.server.adminToken },
      `${v1()}?watch=1&resourceVersion=${start}&fieldSelector=regarding.name=${target}`,
    );
    try {
      expectCode(await api.request('POST', v1(), { body: newEvent(uniqueName('other')) }), 201);
      const mine = uniqueName('mine');
      expectCode(
        await api.request('POST', core(), {
          body: {
            metadata: { name: mine },
            involvedObject: { kind: 'Pod', namespace: ns, name: target },
            reason: 'Seen',
            message: 'via core',
            type: 'Normal',
          },
        }),
        201,
      );
      const e = await watch.next();
      expect(e?.type).toBe('ADDED');
      expect(e?.object).toMatchObject({
        apiVersion: 'events.svc.io/v1',
        metadata: { name: mine },
        note: 'via core',
        regarding: { name: target },
      });
      const sel = expectCode(await api.request('GET', `${v1()}?fieldSelector=regarding.name=${target}`), 200);
      expect((sel.items as Json[]).map((i) => i.metadata.name)).toEqual([mine]);
      const byController = expectCode(
        await api.request('GET', `${v1()}?fieldSelector=reportingController=svc.io/tester`),
        200,
      );
      expect((byController.items as Json[]).length).toBeGreaterThan(0);
      expect((byController.items as Json[]).every((i) => i.reportingController === 'svc.io/tester')).toBe(true);
      expectFailure(await api.request('GET', `${v1()}?fieldSelector=involvedObject.name=${target}`), {
        code: 400,
        reason: 'BadRequest',
        message: /involvedObject\.name/,
      });
    } finally {
      watch.close();
    }
  });

  it('refuses a v1 create without the required fields, with every cause', async () => {
    const s = expectFailure(
      await api.request('POST', v1(), {
        body: {
          metadata: { name: uniqueName('bad') },
          regarding: { kind: 'Pod', namespace: ns, name: 'p' },
          type: 'Odd',
          deprecatedCount: 2,
          series: { count: 1 },
        },
      }),
      { code: 422, reason: 'Invalid' },
    );
    const causes = (s.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
    expect(causes).toEqual(
      expect.arrayContaining([
        'eventTime: Required value',
        'type: Invalid value: "": has invalid value: Odd',
        'count: Invalid value: "": needs to be unset',
        'series.count: Invalid value: "": should be at least 2',
        'series.lastObservedTime: Required value',
      ]),
    );
    // Without eventTime the reporting fields are not required (the legacy rules).
    expect(causes.some((c) => c.startsWith('reportingController'))).toBe(false);
    const noReporter = expectFailure(
      await api.request('POST', v1(), {
        body: newEvent(uniqueName('bad'), { reportingController: '', reportingInstance: 'x'.repeat(129), action: '' }),
      }),
      { code: 422, reason: 'Invalid' },
    );
    expect((noReporter.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)).toEqual(
      expect.arrayContaining([
        'reportingController: Required value',
        'reportingInstance: Invalid value: "": can have at most 128 characters',
        'action: Required value',
      ]),
    );
  });

  it('refuses changes of immutable fields through v1, but allows a series update', async () => {
    const name = uniqueName('imm');
    expectCode(await api.request('POST', v1(), { body: newEvent(name) }), 201);
    const merge = { 'content-type': 'application/merge-patch+json' };
    const s = expectFailure(
      await api.request('PATCH', `${v1()}/${name}`, { body: { note: 'changed', action: 'Other' }, headers: merge }),
      { code: 422, reason: 'Invalid' },
    );
    expect((s.details?.causes ?? []).map((c) => c.field).sort()).toEqual(['action', 'message']);
    expect(s.message).toContain('field is immutable');
    const patched = expectCode(
      await api.request('PATCH', `${v1()}/${name}`, {
        body: { series: { count: 2, lastObservedTime: '2026-11-22T10:01:00.000000Z' } },
        headers: merge,
      }),
      200,
    );
    expect(patched.series).toEqual({ count: 2, lastObservedTime: '2026-11-22T10:01:00.000000Z' });
    expect(expectCode(await api.request('GET', `${v1()}/${name}`), 200).note).toBe('hello from v1');
  });

  it('compares immutable fields by value: another spelling of the same time and empty deprecated fields pass', async () => {
    const name = uniqueName('same');
    const created = expectCode(
      await api.request('POST', v1(), { body: newEvent(name, { eventTime: '2026-11-22T10:00:00Z' }) }),
      201,
    );
    // What a Go client sends back: MicroTime with six digits, empty structs and zero values spelled out.
    const put = expectCode(
      await api.request('PUT', `${v1()}/${name}`, {
        body: {
          ...created,
          eventTime: '2026-11-22T10:00:00.000000Z',
          deprecatedSource: {},
          deprecatedCount: 0,
          deprecatedFirstTimestamp: null,
          series: { count: 2, lastObservedTime: '2026-11-22T10:02:00.000000Z' },
        },
      }),
      200,
    );
    expect(put.series).toEqual({ count: 2, lastObservedTime: '2026-11-22T10:02:00.000000Z' });
    const moved = expectFailure(
      await api.request('PUT', `${v1()}/${name}`, { body: { ...put, eventTime: '2026-11-22T10:00:01Z' } }),
      { code: 422, reason: 'Invalid' },
    );
    expect((moved.details?.causes ?? []).map((c) => c.field)).toEqual(['eventTime']);
  });

  it('counts the note limit in bytes (UTF-8), and names the reporting controller as each API does', async () => {
    const long = expectFailure(
      await api.request('POST', v1(), { body: newEvent(uniqueName('long'), { note: 'é'.repeat(600) }) }),
      { code: 422, reason: 'Invalid' },
    );
    expect(long.message).toContain('message: Invalid value: "": can have at most 1024 characters');
    expectCode(await api.request('POST', v1(), { body: newEvent(uniqueName('fits'), { note: 'é'.repeat(512) }) }), 201);
    const coreMissing = expectFailure(
      await api.request('POST', core(), {
        body: {
          metadata: { name: uniqueName('c') },
          involvedObject: { kind: 'Pod', namespace: ns, name: 'p' },
          reason: 'R',
          action: 'A',
          reportingInstance: 'i',
          eventTime: '2026-11-22T10:00:00.000000Z',
        },
      }),
      { code: 422, reason: 'Invalid' },
    );
    expect((coreMissing.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)).toContain(
      'reportingComponent: Required value',
    );
  });

  it('refuses a core Event whose involvedObject is in another namespace', async () => {
    const s = expectFailure(
      await api.request('POST', core(), {
        body: {
          metadata: { name: uniqueName('x') },
          involvedObject: { kind: 'Pod', namespace: 'elsewhere', name: 'p' },
          reason: 'R',
        },
      }),
      { code: 422, reason: 'Invalid' },
    );
    expect(s.message).toContain('involvedObject.namespace: Invalid value: "elsewhere": does not match event.namespace');
  });

  it('answers in Protobuf with events/v1 field numbers, equal to the JSON answer', async () => {
    const name = uniqueName('pb');
    expectCode(await api.request('POST', v1(), { body: newEvent(name) }), 201);
    const json = expectCode(await api.request('GET', `${v1()}/${name}`), 200);
    const r = await api.request('GET', `${v1()}/${name}`, { headers: { accept: 'application/vnd.svc.protobuf' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.svc.protobuf');
    const schema = builtinCatalog().lookup('events.svc.io', 'v1', 'events')?.schema as ObjectSchema;
    expect(decodeProtobufObject(r.body, schema)).toEqual(json);
  });

  it('pages with limit and continue, and deletes a collection by field selector', async () => {
    const pns = uniqueName('page-ns');
    expectCode(await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: pns } } }), 201);
    const base = `/apis/events.svc.io/v1/namespaces/${pns}/events`;
    const names = ['a', 'b', 'c', 'd', 'e'].map((n) => `page-${n}`);
    for (const n of names) {
      expectCode(
        await api.request('POST', base, {
          body: { ...newEvent(n), regarding: { kind: 'Pod', namespace: pns, name: n === 'page-e' ? 'keep' : 'drop' } },
        }),
        201,
      );
    }
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = expectCode(
        await api.request('GET', `${base}?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`),
        200,
      );
      seen.push(...(page.items as Json[]).map((i) => i.metadata.name as string));
      expect(
        (page.items as Json[]).every((i) => i.apiVersion === undefined || i.apiVersion === 'events.svc.io/v1'),
      ).toBe(true);
      token = (page.metadata.continue as string | undefined) ?? '';
      pages++;
    } while (token);
    expect(seen).toEqual(names);
    expect(pages).toBe(3);
    expectCode(await api.request('DELETE', `${base}?fieldSelector=regarding.name=drop`), 200);
    const left = expectCode(await api.request('GET', `/api/v1/namespaces/${pns}/events`), 200);
    expect((left.items as Json[]).map((i) => i.metadata.name)).toEqual(['page-e']);
  });

  it('deletes through either API', async () => {
    const name = uniqueName('del');
    expectCode(await api.request('POST', v1(), { body: newEvent(name) }), 201);
    expectCode(await api.request('DELETE', `${core()}/${name}`), 200);
    expectFailure(await api.request('GET', `${v1()}/${name}`), { code: 404, reason: 'NotFound' });
  });

  it('kubectl lists and shows them as events.events.svc.io', async () => {
    const name = uniqueName('kc');
    expectCode(await api.request('POST', v1(), { body: newEvent(name, { note: 'shown by kubectl' }) }), 201);
    const table = await env.ok(['get', 'events.v1.events.svc.io', '-n', ns]);
    expect(table.stdout).toMatch(/LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(table.stdout).toMatch(/Normal\s+Tested\s+pod\/p1\s+shown by kubectl/);
    // SOURCE is `component, instance`, from the reporting fields when the source is empty (Kubernetes' printer).
    const wide = await env.ok(['get', 'events', name, '-n', ns, '-o', 'wide']);
    expect(wide.stdout).toMatch(/svc\.io\/tester, tester-1/);
    const yaml = await env.ok([
      'get',
      'events.v1.events.svc.io',
      name,
      '-n',
      ns,
      '-o',
      'jsonpath={.note}/{.regarding.name}',
    ]);
    expect(yaml.stdout).toBe('shown by kubectl/p1');
  });
});
