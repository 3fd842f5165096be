// Stock kubectl (on PATH) on apps/v1 workloads: `create deployment`, `get deploy,rs` with the
// printer columns, `scale` through the autoscaling/v1 Scale subresource (found by discovery),
// and the errors kubectl shows for bad input.
import { startKubectlEnv, type KubectlEnv, uniqueName, expectCode } from '@svc/testing';

let env: KubectlEnv;
let ns: string;

beforeAll(async () => {
  env = await startKubectlEnv();
  ns = uniqueName('kapps');
  expectCode(
    await env.server.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    201,
  );
});

afterAll(async () => {
  await env?.stop();
});

const deploymentPath = (name: string): string => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

it('create deployment, get deploy,rs, scale deployment', async () => {
  const name = uniqueName('web');
  const created = await env.ok(['-n', ns, 'create', 'deployment', name, '--image=busybox', '--replicas=2']);
  expect(created.stdout.trim()).toBe(`deployment.apps/${name} created`);
  const d = expectCode(await env.server.client.get(deploymentPath(name)), 200);
  expect(d.spec).toMatchObject({
    replicas: 2,
    selector: { matchLabels: { app: name } },
    strategy: { type: 'RollingUpdate' },
    revisionHistoryLimit: 10,
  });

  const rsName = uniqueName('rs');
  const rs = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: rsName },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: rsName } },
      template: { metadata: { labels: { app: rsName } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
  await env.ok(['-n', ns, 'apply', '-f', await env.manifest(rs)]);

  const got = await env.ok(['-n', ns, 'get', 'deploy,rs']);
  const lines = got.stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  expect(lines[0]).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
  expect(lines[1]?.slice(0, 4)).toEqual([`deployment.apps/${name}`, '0/2', '0', '0']);
  const rsHeader = lines.findIndex((l) => l[0] === 'NAME' && l[1] === 'DESIRED');
  expect(lines[rsHeader]).toEqual(['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE']);
  expect(lines[rsHeader + 1]?.slice(0, 4)).toEqual([`replicaset.apps/${rsName}`, '3', '0', '0']);

  const wide = await env.ok(['-n', ns, 'get', 'deployment', name, '-o', 'wide', '--no-headers']);
  expect(wide.stdout.trim().split(/\s+/).slice(-3)).toEqual(['busybox', 'busybox', `app=${name}`]);

  const scaled = await env.ok(['-n', ns, 'scale', 'deployment', name, '--replicas=5']);
  expect(scaled.stdout.trim()).toBe(`deployment.apps/${name} scaled`);
  const after = expectCode(await env.server.client.get(deploymentPath(name)), 200);
  expect(after.spec.replicas).toBe(5);
  expect(after.metadata.generation).toBe(2);

  await env.ok(['-n', ns, 'scale', `rs/${rsName}`, '--replicas=1', '--current-replicas=3']);
  expect((await env.ok(['-n', ns, 'get', 'rs', rsName, '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('1');
});

it('bad input: negative replicas, a wrong --current-replicas, a missing deployment', async () => {
  const name = uniqueName('bad');
  await env.ok(['-n', ns, 'create', 'deployment', name, '--image=busybox']);
  const negative = await env.run(['-n', ns, 'scale', 'deployment', name, '--replicas=-1']);
  expect(negative.code).not.toBe(0);
  const stale = await env.run(['-n', ns, 'scale', 'deployment', name, '--replicas=3', '--current-replicas=7']);
  expect(stale.code).not.toBe(0);
  expect(stale.stderr).toMatch(/expected 7|Expected replicas to be 7/i);
  const missing = await env.run(['-n', ns, 'scale', 'deployment', 'nope', '--replicas=3']);
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toMatch(/deployments\.apps "nope" not found/);
  const noImage = await env.run(['-n', ns, 'create', 'deployment', uniqueName('noimage'), '--image=']);
  expect(noImage.code).not.toBe(0);
  expect(expectCode(await env.server.client.get(deploymentPath(name)), 200).spec.replicas).toBe(1);
});
