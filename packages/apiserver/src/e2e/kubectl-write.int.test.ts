// Stock kubectl (on PATH) on the write path against svc-apiserver and a real etcd: client-side
// apply, the move to server-side apply, field-manager conflicts and --force-conflicts,
// --dry-run=server, --validate, Table columns of `get -o wide`, and strategic merge patches.
//
// The server runs with `--naming=kubernetes`: kubectl then finds its own OpenAPI extension names
// (server-side field validation and apply need them) and its own last-applied annotation.
import { Etcd3 } from 'etcd3';
import {
  startKubectlEnv,
  type KubectlEnv,
  type KubectlResult,
  type TestApiServer,
  uniqueName,
  type Json,
  createDefaultServiceAccount,
} from '@svc/testing';
import { coreKey, readStored, type StoredObject } from '../endpoints/stored-testing.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

let env: KubectlEnv;
let t: TestApiServer;
let etcd: Etcd3;
let ns: string;

const run = (args: string[], stdin?: string): Promise<KubectlResult> => env.run(args, { stdin });
const k = (args: string[], stdin?: string): Promise<KubectlResult> => env.ok(args, { stdin });

/** Runs kubectl and requires exit code 0. */

function stored(resource: string, name: string): Promise<StoredObject | undefined> {
  return readStored(etcd, coreKey(t.storePrefix, resource, { namespace: ns, name }));
}

function managers(obj: Json): string[] {
  return ((obj.metadata?.managedFields ?? []) as Json[])
    .map((e) => `${e.manager as string}/${e.operation as string}`)
    .sort();
}

// Data keys are chosen so YAML 1.1 (kubectl's parser) reads them as strings.
const cm = (name: string, data: Record<string, string>): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});
const pod = (name: string, containers: Json[]): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { containers },
});

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  t = env.server;
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = uniqueName('kwrite');
  const res = await t.client.post('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(res.status).toBe(201);
  await createDefaultServiceAccount(t.client, ns);
});

afterAll(async () => {
  etcd?.close();
  await env?.stop();
});

it('apply -f twice (client side), then apply --server-side: no conflict, ownership moves to kubectl', async () => {
  const name = uniqueName('csa');
  const first = await k(['apply', '-f', await env.manifest(cm(name, { alpha: '1', beta: '1' }))]);
  expect(first.stdout.trim()).toBe(`configmap/${name} created`);
  const second = await k(['apply', '-f', await env.manifest(cm(name, { alpha: '2', beta: '1', gamma: '1' }))]);
  expect(second.stdout.trim()).toBe(`configmap/${name} configured`);
  const unchanged = await k(['apply', '-f', await env.manifest(cm(name, { alpha: '2', beta: '1', gamma: '1' }))]);
  expect(unchanged.stdout.trim()).toBe(`configmap/${name} unchanged`);

  const csa = (await stored('configmaps', name))?.value ?? {};
  expect(csa.data).toEqual({ alpha: '2', beta: '1', gamma: '1' });
  expect(JSON.parse(csa.metadata.annotations[LAST_APPLIED] as string)).toMatchObject({
    data: { alpha: '2', beta: '1', gamma: '1' },
  });
  expect(managers(csa)).toEqual(['kubectl-client-side-apply/Update']);

  const ssa = await k(['apply', '--server-side', '-f', await env.manifest(cm(name, { alpha: '3', beta: '1' }))]);
  expect(ssa.stdout.trim()).toBe(`configmap/${name} serverside-applied`);
  expect(ssa.stderr).not.toMatch(/conflict/i);
  const after = (await stored('configmaps', name))?.value ?? {};
  expect(after.data).toMatchObject({ alpha: '3', beta: '1' });
  const kubectlEntry = (after.metadata.managedFields as Json[]).find(
    (e) => e.manager === 'kubectl' && e.operation === 'Apply',
  );
  expect(kubectlEntry?.fieldsV1?.['f:data']).toEqual({ 'f:alpha': {}, 'f:beta': {} });
});

it('two managers conflict; --force-conflicts takes the field over', async () => {
  const name = uniqueName('managers');
  expect(
    (
      await k(['apply', '--server-side', '--field-manager=alice', '-f', await env.manifest(cm(name, { alpha: '1' }))])
    ).stdout.trim(),
  ).toBe(`configmap/${name} serverside-applied`);
  const bobFile = await env.manifest(cm(name, { alpha: '2' }));
  const before = await stored('configmaps', name);
  const conflict = await run(['apply', '--server-side', '--field-manager=bob', '-f', bobFile]);
  expect(conflict.code).not.toBe(0);
  expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "alice": .data.alpha');
  expect((await stored('configmaps', name))?.modRevision).toBe(before?.modRevision);

  const forced = await k(['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', bobFile]);
  expect(forced.stdout.trim()).toBe(`configmap/${name} serverside-applied`);
  const after = (await stored('configmaps', name))?.value ?? {};
  expect(after.data).toEqual({ alpha: '2' });
  expect(managers(after)).toEqual(['bob/Apply']);
});

it('--dry-run=server runs on the server and changes nothing (create, apply, patch, delete)', async () => {
  const name = uniqueName('dry');
  const file = await env.manifest(cm(name, { alpha: '1' }));
  expect((await k(['create', '--dry-run=server', '-f', file])).stdout.trim()).toBe(
    `configmap/${name} created (server dry run)`,
  );
  expect((await k(['apply', '--server-side', '--dry-run=server', '-f', file])).stdout.trim()).toBe(
    `configmap/${name} serverside-applied (server dry run)`,
  );
  expect(await stored('configmaps', name)).toBeUndefined();

  expect((await k(['create', '-f', file])).stdout.trim()).toBe(`configmap/${name} created`);
  const before = await stored('configmaps', name);
  const patched = await k([
    'patch',
    'configmap',
    name,
    '-n',
    ns,
    '--dry-run=server',
    '-p',
    '{"data":{"alpha":"2"}}',
    '-o',
    'json',
  ]);
  expect(JSON.parse(patched.stdout).data).toEqual({ alpha: '2' });
  expect((await k(['delete', 'configmap', name, '-n', ns, '--dry-run=server'])).stdout.trim()).toBe(
    `configmap "${name}" deleted (server dry run)`,
  );
  expect(await stored('configmaps', name)).toEqual(before);
});

it('--validate=strict refuses an unknown field; --validate=warn warns and drops it', async () => {
  const name = uniqueName('validate');
  const body = { ...pod(name, [{ name: 'app', image: 'example/app:1' }]) };
  body.spec.foo = 'bar';
  const file = await env.manifest(body);
  const strict = await run(['create', '--validate=strict', '-f', file]);
  expect(strict.code).not.toBe(0);
  expect(strict.stderr).toContain('unknown field "spec.foo"');
  expect(await stored('pods', name)).toBeUndefined();

  const ssa = await run(['apply', '--server-side', '--validate=strict', '-f', file]);
  expect(ssa.code).not.toBe(0);
  expect(ssa.stderr).toContain('unknown field "spec.foo"');
  expect(await stored('pods', name)).toBeUndefined();

  const warn = await k(['create', '--validate=warn', '-f', file]);
  expect(warn.stdout.trim()).toBe(`pod/${name} created`);
  expect(warn.stderr).toContain('Warning: unknown field "spec.foo"');
  expect((await stored('pods', name))?.value.spec.foo).toBeUndefined();
});

it('get -o wide shows the pod Table columns', async () => {
  const name = uniqueName('wide');
  await k([
    'create',
    '-f',
    await env.manifest(
      pod(name, [
        { name: 'app', image: 'example/app:1' },
        { name: 'side', image: 'example/side:1' },
      ]),
    ),
  ]);
  const r = await k(['get', 'pods', name, '-n', ns, '-o', 'wide']);
  const [header, row, ...rest] = r.stdout.trimEnd().split('\n');
  expect(rest).toEqual([]);
  expect(header?.trim().split(/\s{2,}/)).toEqual([
    'NAME',
    'READY',
    'STATUS',
    'RESTARTS',
    'AGE',
    'IP',
    'NODE',
    'NOMINATED NODE',
    'READINESS GATES',
  ]);
  const cells = row?.trim().split(/\s+/) ?? [];
  expect(cells[0]).toBe(name);
  expect(cells[1]).toBe('0/2');
  expect(cells[2]).toBe('Pending');
  expect(cells[3]).toBe('0');
  expect(cells[4]).toMatch(/^\d+s$/);
  expect(cells.slice(5)).toEqual(['<none>', '<none>', '<none>', '<none>']);

  // Without -o wide the priority-1 columns are left out.
  const narrow = await k(['get', 'pods', name, '-n', ns]);
  expect(
    narrow.stdout
      .split('\n')[0]
      ?.trim()
      .split(/\s{2,}/),
  ).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
});

it('patch --type strategic merges containers by name', async () => {
  const name = uniqueName('smp');
  await k([
    'create',
    '-f',
    await env.manifest(
      pod(name, [
        { name: 'app', image: 'example/app:1' },
        { name: 'side', image: 'example/side:1' },
      ]),
    ),
  ]);
  const r = await k([
    'patch',
    'pod',
    name,
    '-n',
    ns,
    '--type',
    'strategic',
    '-p',
    '{"spec":{"containers":[{"name":"side","image":"example/side:2"}]}}',
  ]);
  expect(r.stdout.trim()).toBe(`pod/${name} patched`);
  const after = (await stored('pods', name))?.value ?? {};
  expect((after.spec.containers as Json[]).map((c) => `${c.name as string}=${c.image as string}`)).toEqual([
    'app=example/app:1',
    'side=example/side:2',
  ]);
  const e = (after.metadata.managedFields as Json[]).find((x) => x.manager === 'kubectl-patch');
  expect(e).toMatchObject({ operation: 'Update', apiVersion: 'v1' });
  expect(e?.fieldsV1?.['f:spec']?.['f:containers']?.['k:{"name":"side"}']).toEqual({ 'f:image': {} });

  // `$patch: delete` of a container is merged, then refused by pod update validation (422).
  const del = await run([
    'patch',
    'pod',
    name,
    '-n',
    ns,
    '--type',
    'strategic',
    '-p',
    '{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}',
  ]);
  expect(del.code).not.toBe(0);
  expect(del.stderr).toMatch(/Forbidden|forbidden/);
  expect(((await stored('pods', name))?.value.spec.containers as Json[]).length).toBe(2);
});
