// Stock kubectl's rollout commands against deployment-controller under `--naming=kubernetes`:
// kubectl reads revisions from the literal `deployment.kubernetes.io/revision` annotation, so
// `rollout history` and `rollout undo` only work when the controller writes that spelling.
// (Under the default naming every ReplicaSet looks like revision 0 to kubectl, and `undo`
// either skips or rolls back to an arbitrary ReplicaSet.)
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import {
  deployments,
  kubectlIn,
  pods,
  replicaSetsOf,
  waitForRollout,
  watchPods,
  createNamespace,
} from './workload-testing.js';

const env = withControllerManager(['--controllers=replicaset,deployment', '--naming=kubernetes'], {
  serverArgs: ['--naming=kubernetes'],
});

const images = async (ns: string): Promise<string[]> =>
  (await pods(env.api, ns).list()).items.map((p) => p.spec.containers[0]?.image ?? '').sort();

it('rollout status, history and undo (to the previous and to a given revision)', async () => {
  const ns = await createNamespace(env.api, 'undo');
  const k = await kubectlIn(env.server.svcconfigPath);
  const w = await watchPods(env.api, ns, { kubelet: true });
  try {
    await k.ok(['-n', ns, 'create', 'deployment', 'web', '--image=busybox:1', '--replicas=2']);
    expect((await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s'])).stdout).toMatch(
      /deployment "web" successfully rolled out/,
    );
    await k.ok(['-n', ns, 'set', 'image', 'deployment/web', 'busybox=busybox:2']);
    await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s']);
    const d = await deployments(env.api, ns).get('web');
    expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('2');

    const history = await k.ok(['-n', ns, 'rollout', 'history', 'deployment/web']);
    expect(
      history.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/)[0]),
    ).toEqual(['REVISION', '1', '2']);

    const start = Date.now();
    const undo = await k.ok(['-n', ns, 'rollout', 'undo', 'deployment/web']);
    expect(undo.stdout.trim()).toBe('deployment.apps/web rolled back');
    await waitForRollout(env.api, ns, { name: 'web', generation: 3 });
    const ms = Date.now() - start;
    await waitFor(
      'only busybox:1 pods',
      async () => JSON.stringify(await images(ns)) === JSON.stringify(['busybox:1', 'busybox:1']),
    );
    // The first ReplicaSet is reused: it becomes revision 3 and remembers revision 1.
    const rss = await replicaSetsOf(env.api, ns, d);
    expect(
      rss.map((rs) => [
        rs.metadata.annotations?.['deployment.kubernetes.io/revision'],
        rs.metadata.annotations?.['deployment.kubernetes.io/revision-history'],
        rs.spec.replicas,
      ]),
    ).toEqual([
      ['2', undefined, 0],
      ['3', '1', 2],
    ]);
    expect(
      (await deployments(env.api, ns).get('web')).metadata.annotations?.['deployment.kubernetes.io/revision'],
    ).toBe('3');

    await k.ok(['-n', ns, 'rollout', 'undo', 'deployment/web', '--to-revision=2']);
    await waitForRollout(env.api, ns, { name: 'web', generation: 4 });
    await waitFor(
      'only busybox:2 pods',
      async () => JSON.stringify(await images(ns)) === JSON.stringify(['busybox:2', 'busybox:2']),
    );
    expect((await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s'])).stdout).toMatch(
      /successfully rolled out/,
    );
    process.stdout.write(`deployment-controller: rollout undo of 2 pods completed in ${ms} ms\n`);
  } finally {
    await w.stop();
    await k.stop();
  }
});

it('rollout pause / resume', async () => {
  const ns = await createNamespace(env.api, 'pause');
  const k = await kubectlIn(env.server.svcconfigPath);
  const w = await watchPods(env.api, ns, { kubelet: true });
  try {
    await k.ok(['-n', ns, 'create', 'deployment', 'web', '--image=busybox:1', '--replicas=2']);
    await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s']);
    await k.ok(['-n', ns, 'rollout', 'pause', 'deployment/web']);
    await k.ok(['-n', ns, 'set', 'image', 'deployment/web', 'busybox=busybox:2']);
    await waitFor('the paused generation observed', async () => {
      const got = await deployments(env.api, ns).get('web');
      return got.status?.observedGeneration === got.metadata.generation;
    });
    expect(await images(ns)).toEqual(['busybox:1', 'busybox:1']);
    await k.ok(['-n', ns, 'rollout', 'resume', 'deployment/web']);
    await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s']);
    await waitFor(
      'only busybox:2 pods',
      async () => JSON.stringify(await images(ns)) === JSON.stringify(['busybox:2', 'busybox:2']),
    );
  } finally {
    await w.stop();
    await k.stop();
  }
});
