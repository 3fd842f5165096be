// The dynamic client's paths and scope rules, against a RestClient that answers from memory.
import type { ApiObject } from '@svc/api';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { RestClient, type RequestOptions, type Response, type StreamResponse } from './rest-client.js';
import { dynamicInformer, dynamicResource } from './dynamic.js';

interface Widget extends ApiObject {
  spec: { color: string };
  status?: { phase?: string };
}

/** Records each request and answers 200 with an empty list or the sent body. */
class FakeClient extends RestClient {
  readonly sent: string[] = [];
  constructor() {
    super({
      server: 'https://127.0.0.1:1',
      insecureSkipTlsVerify: true,
      namespace: 'default',
      user: {},
      clusterEntry: {},
    });
  }
  override request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    this.sent.push(`${method} ${path}`);
    const body = Buffer.from(
      typeof opts.body === 'object' && !Buffer.isBuffer(opts.body)
        ? JSON.stringify(opts.body)
        : (opts.body ?? '{"metadata":{"resourceVersion":"7"},"items":[]}'),
    );
    return Promise.resolve({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body,
      json: <T>() => JSON.parse(body.toString()) as T,
    });
  }
  /** A watch that the server ends at once, with no events. */
  override stream(method: string, path: string): Promise<StreamResponse> {
    this.sent.push(`${method} ${path}`);
    const body = Readable.from([]) as unknown as IncomingMessage;
    return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json' }, body });
  }
}

const widgetRef = { group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true };
const widget = (ns: string, name: string): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { namespace: ns, name, resourceVersion: '5' },
  spec: { color: 'red' },
});

let client: FakeClient;
beforeEach(() => {
  client = new FakeClient();
});
afterEach(() => client.close());

describe('dynamicResource', () => {
  it('serves every verb at /apis/<group>/<version>/..., typed by the caller', async () => {
    const widgets = dynamicResource<Widget>(client, widgetRef).namespace('ns1');
    const created = await widgets.create(widget('ns1', 'a'));
    expect(created.spec.color).toBe('red');
    await widgets.get('a');
    await widgets.list({ labelSelector: 'x=y' });
    await widgets.patch('a', { status: { phase: 'Ready' } }, { type: 'merge', subresource: 'status' });
    await widgets.delete('a');
    expect(client.sent).toEqual([
      'POST /apis/example.com/v1/namespaces/ns1/widgets',
      'GET /apis/example.com/v1/namespaces/ns1/widgets/a',
      'GET /apis/example.com/v1/namespaces/ns1/widgets?labelSelector=x%3Dy',
      'PATCH /apis/example.com/v1/namespaces/ns1/widgets/a/status',
      'DELETE /apis/example.com/v1/namespaces/ns1/widgets/a',
    ]);
  });

  it('writes an object of a namespaced resource to its own namespace when the client has none', async () => {
    const widgets = dynamicResource<Widget>(client, widgetRef);
    await widgets.create(widget('ns2', 'b'));
    await widgets.update(widget('ns2', 'b'), { subresource: 'status' });
    await widgets.list();
    expect(client.sent).toEqual([
      'POST /apis/example.com/v1/namespaces/ns2/widgets',
      'PUT /apis/example.com/v1/namespaces/ns2/widgets/b/status',
      'GET /apis/example.com/v1/widgets',
    ]);
  });

  it('keeps the client namespace first, and the old behaviour when the scope is unknown', async () => {
    await dynamicResource<Widget>(client, widgetRef).namespace('mine').create(widget('other', 'c'));
    const unknownScope = { group: 'example.com', version: 'v1', resource: 'widgets' };
    await dynamicResource<Widget>(client, unknownScope).create(widget('other', 'c'));
    expect(client.sent).toEqual([
      'POST /apis/example.com/v1/namespaces/mine/widgets',
      'POST /apis/example.com/v1/widgets',
    ]);
  });

  it('refuses a namespace for a cluster-scoped resource', () => {
    const gadgets = dynamicResource(client, { ...widgetRef, resource: 'gadgets', namespaced: false });
    expect(() => gadgets.namespace('x')).toThrow(/cluster-scoped/);
    expect(() => dynamicInformer(client, { ...widgetRef, namespaced: false }, { namespace: 'x' })).toThrow(
      /cluster-scoped/,
    );
  });

  it('uses the core group path for the core group', async () => {
    await dynamicResource(client, { group: '', version: 'v1', resource: 'configmaps' }).namespace('n').get('x');
    expect(client.sent).toEqual(['GET /api/v1/namespaces/n/configmaps/x']);
  });
});

describe('dynamicInformer', () => {
  it('lists, then watches, the collection of its namespace with its selectors', async () => {
    const inf = dynamicInformer<Widget>(client, widgetRef, {
      namespace: 'ns1',
      labelSelector: 'a=b',
      pageSize: 7,
      backoffInitialMs: 1,
    });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await inf.waitForSync({ timeoutMs: 5000 });
    while (client.sent.length < 2) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await run;
    expect(client.sent.slice(0, 2)).toEqual([
      'GET /apis/example.com/v1/namespaces/ns1/widgets?limit=7&labelSelector=a%3Db',
      'GET /apis/example.com/v1/namespaces/ns1/widgets?watch=1&allowWatchBookmarks=true&resourceVersion=7&labelSelector=a%3Db',
    ]);
  });
});
