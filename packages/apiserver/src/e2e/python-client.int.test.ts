// The official Kubernetes Python client (Debian's python3-kubernetes 22.6.0, installed by
// scripts/lib/ensure-tools.sh for /usr/bin/python3), unchanged, against svc-apiserver with
// --naming=kubernetes and a real etcd: it loads the harness's svcconfig as a kubeconfig, creates a
// namespace, watches ConfigMaps with watch.Watch().stream (the client sends `watch=True`), lists
// them in chunks with limit and _continue, and creates, patches and deletes with dry_run='All'.
// The scenarios are python-client.py, next to this file; each prints what it saw as JSON.
import { join } from 'node:path';
import { runCommand, startTestApiServer, uniqueName, type TestApiServer } from '@svc/testing';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, 'python-client.py');

let t: TestApiServer;
const ns = uniqueName('py');

interface WatchEventSeen {
  type: string;
  class: string;
  name: string;
  data: Record<string, string> | null;
  resourceVersion: string;
}

interface ClientError {
  error?: { status: number; reason: string; body: unknown };
}

/** Runs one scenario of python-client.py; rejects on a Python failure or an ApiException. */
async function scenario<T>(name: string): Promise<T> {
  const r = await runCommand(PYTHON, [SCRIPT, t.svcconfigPath, ns, name], {
    timeoutMs: 60_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (r.code !== 0) throw new Error(`python-client.py ${name} exited ${r.code}\n${r.stderr}`);
  const out = JSON.parse(r.stdout) as T & ClientError;
  if (out.error) throw new Error(`python-client.py ${name}: ApiException ${JSON.stringify(out.error)}`);
  return out;
}

beforeAll(async () => {
  t = await startTestApiServer({ args: ['--naming=kubernetes'] });
  // The namespace every other scenario uses, created by the client itself.
  const made = await scenario<{ created: string; phase: string; uid: string }>('namespace');
  expect(made).toMatchObject({ created: ns, phase: 'Active' });
});

afterAll(async () => {
  await t?.stop();
});

it('watch.Watch().stream(list_namespaced_config_map) sees ADDED, MODIFIED and DELETED as V1ConfigMap', async () => {
  const out = await scenario<{ events: WatchEventSeen[]; listResourceVersion: string; writerFailures: unknown[] }>(
    'watch',
  );
  expect(out.writerFailures).toEqual([]);
  expect(out.events.map((e) => [e.type, e.class, e.name, e.data])).toEqual([
    ['ADDED', 'V1ConfigMap', 'watched', { step: '1' }],
    ['MODIFIED', 'V1ConfigMap', 'watched', { step: '2' }],
    ['DELETED', 'V1ConfigMap', 'watched', { step: '2' }],
  ]);
  const rvs = out.events.map((e) => BigInt(e.resourceVersion));
  expect(rvs[0]! > BigInt(out.listResourceVersion)).toBe(true);
  expect(rvs[1]! > rvs[0]! && rvs[2]! > rvs[1]!).toBe(true);
});

it('a chunked list (limit=3, _continue) returns every ConfigMap once, in order, with remainingItemCount when there is no selector', async () => {
  interface Page {
    names: string[];
    continue: string | null;
    remainingItemCount: number | null;
    resourceVersion: string;
  }
  const out = await scenario<{
    pages: Page[];
    whole: string[];
    selectedRemaining: number | null;
    selectedContinue: boolean;
  }>('chunked-list');
  const names = Array.from({ length: 7 }, (_, i) => `page-${i}`);
  expect(out.whole).toEqual(names);
  expect(out.pages.map((p) => p.names)).toEqual([names.slice(0, 3), names.slice(3, 6), names.slice(6)]);
  expect(out.pages.map((p) => p.remainingItemCount)).toEqual([4, 1, null]);
  expect(out.pages[0]!.continue).toBeTruthy();
  expect(out.pages[2]!.continue).toBeNull();
  // Every page is read at the first page's revision.
  expect(new Set(out.pages.map((p) => p.resourceVersion)).size).toBe(1);
  // With a selector the page still continues, but Kubernetes does not count what is left.
  expect(out.selectedContinue).toBe(true);
  expect(out.selectedRemaining).toBeNull();
});

it("dry_run='All' answers create, patch and delete as if done and stores nothing", async () => {
  const out = await scenario<{
    created: { name: string; uid: string | null; data: Record<string, string> };
    readAfterCreate: number | string;
    patched: Record<string, string>;
    kept: Record<string, string>;
  }>('dry-run');
  expect(out.created).toMatchObject({ name: 'dry', data: { a: '1' } });
  expect(out.created.uid).toBeTruthy();
  expect(out.readAfterCreate).toBe(404);
  expect(out.patched).toEqual({ a: '2' });
  expect(out.kept).toEqual({ a: '1' });
  // Nothing of the dry-run create reached etcd either.
  const stored = (await t.client.get(`/api/v1/namespaces/${ns}/configmaps/dry`)).status;
  expect(stored).toBe(404);
});
