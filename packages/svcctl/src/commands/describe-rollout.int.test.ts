import { expectSameAsKubectl, startSvcctlEnv, type RunResult, type SvcctlEnv } from '../svcctl-testing.js';

const template = (image: string): Record<string, unknown> => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'nginx', image }] },
});

describe.each([['kubernetes'], ['svc']])('svcctl describe, rollout (--naming=%s)', (naming) => {
  let env: SvcctlEnv;
  const prefix = naming === 'kubernetes' ? 'kubernetes.io' : 'svc.io';

  /** A deployment at `image` with ReplicaSets for revisions 1 (nginx:1.26) and 2 (its image), as the controller leaves them. */
  async function deploymentWithHistory(name: string, image = 'nginx:1.27'): Promise<void> {
    await env.ok([
      'create',
      '-f',
      await env.manifest({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, annotations: { [`deployment.${prefix}/revision`]: '2' } },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template(image) },
      }),
    ]);
    const uid = (await env.ok(['get', 'deploy', name, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const rs = (revision: number, img: string, hash: string): Record<string, unknown> => {
      const t = template(img) as { metadata: { labels: Record<string, string> } };
      t.metadata.labels['pod-template-hash'] = hash;
      return {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${name}-${hash}`,
          labels: t.metadata.labels,
          annotations: {
            [`deployment.${prefix}/revision`]: String(revision),
            ...(revision === 2 ? { [`${prefix}/change-cause`]: 'svcctl set image' } : {}),
          },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'Deployment', name, uid, controller: true, blockOwnerDeletion: true },
          ],
        },
        spec: {
          replicas: revision === 2 ? 2 : 0,
          selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } },
          template: t,
        },
      };
    };
    await env.ok(['create', '-f', await env.manifest(rs(1, 'nginx:1.26', 'aaa111'), rs(2, image, 'bbb222'))]);
  }

  beforeAll(async () => {
    env = await startSvcctlEnv({ args: naming === 'kubernetes' ? ['--naming=kubernetes'] : [] });
    // No controller manager runs here: the default service account is made by hand.
    await env.ok(['create', 'serviceaccount', 'default']);
    await env.ok([
      'create',
      '-f',
      await env.manifest(
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: 'node-1', labels: { zone: 'a' } },
          spec: { podCIDR: '10.0.1.0/24', taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web-1', labels: { app: 'web' }, annotations: { note: 'hello' } },
          spec: {
            nodeName: 'node-1',
            containers: [
              {
                name: 'nginx',
                image: 'nginx:1.27',
                ports: [{ containerPort: 80 }],
                env: [
                  { name: 'A', value: '1' },
                  { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                ],
                resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
                readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 5 },
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
            volumes: [{ name: 'data', emptyDir: {} }],
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'ext' },
          spec: { type: 'ExternalName', externalName: 'example.com' },
        },
      ),
    ]);
    const podUid = (await env.ok(['get', 'pod', 'web-1', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    await env.ok([
      'create',
      '-f',
      await env.manifest({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'web-1.scheduled' },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'default', uid: podUid },
        reason: 'Scheduled',
        message: 'Successfully assigned default/web-1 to node-1',
        type: 'Normal',
        source: { component: 'default-scheduler' },
        count: 1,
        firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      }),
    ]);
    await deploymentWithHistory('web');
  });
  afterAll(() => env.stop());

  const same = (args: string[]): Promise<RunResult> => expectSameAsKubectl(env, args);
  /** Where kubectl spells Kubernetes' names (Leases, deployment annotations) it cannot serve our naming. */
  const sameUnderKubernetes = (args: string[]): Promise<RunResult> =>
    naming === 'kubernetes' ? same(args) : env.ok(args);

  it('describes pods, nodes, deployments and services as kubectl does', async () => {
    const pod = await same(['describe', 'pod', 'web-1']);
    expect(pod.stdout).toMatch(/^Name: +web-1\nNamespace: +default\n/);
    expect(pod.stdout).toMatch(/Events:\n +Type +Reason +Age +From +Message\n/);
    expect(pod.stdout).toContain('Successfully assigned default/web-1 to node-1');
    await same(['describe', 'pods']);
    await same(['describe', 'pods', '-l', 'app=web']);
    await same(['describe', 'pod', 'web']);
    await same(['describe', 'pod/web-1', '--show-events=false']);
    const node = await sameUnderKubernetes(['describe', 'node', 'node-1']);
    expect(node.stdout).toMatch(/\nTaints: +dedicated=db:NoSchedule\n/);
    expect(node.stdout).toContain(
      `Failed to get lease: leases.coordination.${naming === 'kubernetes' ? 'k8s' : 'svc'}.io "node-1" not found`,
    );
    await sameUnderKubernetes(['describe', 'nodes']);
    const deploy = await same(['describe', 'deployment', 'web']);
    expect(deploy.stdout).toMatch(/\nNewReplicaSet: +web-bbb222 \(0\/2 replicas created\)\n/);
    await same(['describe', 'svc', 'web']);
    // Under our naming kubectl finds no endpoints of the API server's service; svcctl does.
    const services = await sameUnderKubernetes(['describe', 'services']);
    expect(services.stdout).toMatch(/\nEndpoints: +192\.0\.2\.2:\d+\n/);
  });

  it('describes other kinds field by field', async () => {
    await same(['describe', 'events']);
    await same(['describe', 'replicasets']);
  });

  it('reports what it cannot describe as kubectl does', async () => {
    expect((await same(['describe', 'pod', 'missing'])).code).toBe(1);
    expect((await same(['describe', 'no-such-type'])).code).toBe(1);
    expect((await same(['describe', 'pods', '-n', 'empty'])).stderr).toBe('No resources found in empty namespace.\n');
    const none = await env.run(['describe']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('You must specify the type of resource to describe');
  });

  it('rollout status and history read the deployment and its ReplicaSets', async () => {
    // The controller's status, written by hand.
    await env.ok([
      'patch',
      'deploy',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { observedGeneration: 1, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
      }),
    ]);
    const waiting = await same(['rollout', 'status', 'deploy/web', '--watch=false']);
    expect(waiting.stdout).toBe(
      'Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...\n',
    );
    await env.ok([
      'patch',
      'deploy',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 } }),
    ]);
    expect((await same(['rollout', 'status', 'deployment', 'web'])).stdout).toBe(
      'deployment "web" successfully rolled out\n',
    );
    const history = await sameUnderKubernetes(['rollout', 'history', 'deploy/web']);
    expect(history.stdout).toBe(
      'deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         svcctl set image\n\n',
    );
    const one = await sameUnderKubernetes(['rollout', 'history', 'deploy/web', '--revision=1']);
    expect(one.stdout).toContain('nginx:1.26');
    expect((await env.run(['rollout', 'history', 'deploy/web', '--revision=7'])).code).toBe(1);
    if (naming === 'kubernetes') await same(['rollout', 'history', 'deploy/web', '--revision=7']);
    expect((await same(['rollout', 'status', 'svc/web'])).code).toBe(1);
    expect((await same(['rollout', 'status', 'deploy/missing'])).code).toBe(1);
  });

  /** undo, restart, pause and resume run by `cli` on its own deployment `name`: each step's output and the result. */
  async function rolloutStory(cli: 'svcctl' | 'kubectl', name: string): Promise<string[]> {
    await deploymentWithHistory(name);
    const run = async (args: string[]): Promise<string> => {
      const r: RunResult = cli === 'svcctl' ? await env.run(args) : await env.kubectl(args);
      return `${r.code}\n${r.stdout}${r.stderr.replace(/svcctl/g, 'kubectl')}`;
    };
    const image = async (): Promise<string> =>
      (await env.ok(['get', 'deploy', name, '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.spec.paused}']))
        .stdout;
    const out: string[] = [];
    out.push(await run(['rollout', 'undo', `deploy/${name}`, '--dry-run=server']));
    out.push(await image());
    out.push(await run(['rollout', 'undo', `deploy/${name}`]));
    out.push(await image());
    out.push(await run(['rollout', 'undo', `deploy/${name}`, '--to-revision=1']));
    out.push(await run(['rollout', 'undo', `deploy/${name}`, '--to-revision=9']));
    out.push(await run(['rollout', 'pause', `deploy/${name}`]));
    out.push(await image());
    out.push(await run(['rollout', 'pause', `deploy/${name}`]));
    out.push(await run(['rollout', 'undo', `deploy/${name}`, '--to-revision=2']));
    out.push(await run(['rollout', 'restart', `deploy/${name}`]));
    out.push(await run(['rollout', 'resume', `deploy/${name}`]));
    out.push(await run(['rollout', 'resume', `deploy/${name}`]));
    out.push(await image());
    out.push(await run(['rollout', 'restart', `deploy/${name}`]));
    const restartedAt = (await env.ok(['get', 'deploy', name, '-o', 'jsonpath={.spec.template.metadata.annotations}']))
      .stdout;
    out.push(restartedAt.replace(/"\d{4}-\d\d-\d\dT[^"]+"/, '"<time>"'));
    out.push(await run(['rollout', 'pause', 'svc/web']));
    return out.map((x) => x.replaceAll(name, 'D'));
  }

  it('rollout undo, restart, pause and resume change the deployment as kubectl does', async () => {
    const story = await rolloutStory('svcctl', 'rs-ours');
    const cli = naming === 'kubernetes' ? 'kubectl.kubernetes.io' : 'svcctl.svc.io';
    expect(story).toEqual([
      '0\ndeployment.apps/D rolled back (server dry run)\n',
      'nginx:1.27 ',
      '0\ndeployment.apps/D rolled back\n',
      'nginx:1.26 ',
      '0\ndeployment.apps/D skipped rollback (current template already matches revision 1)\n',
      '1\nerror: unable to find specified revision 9 in history\n',
      '0\ndeployment.apps/D paused\n',
      'nginx:1.26 true',
      '1\nerror: deployments.apps "D" is already paused\n',
      expect.stringMatching(
        /^1\nerror: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again\n$/,
      ),
      '1\nerror: deployments.apps "D" can\'t restart paused deployment (run rollout resume first)\n',
      '0\ndeployment.apps/D resumed\n',
      '1\nerror: deployments.apps "D" is not paused\n',
      'nginx:1.26 ',
      '0\ndeployment.apps/D restarted\n',
      `{"${cli}/restartedAt":"<time>"}`,
      '1\nerror: services "web" pausing is not supported\n',
    ]);
    if (naming === 'kubernetes') expect(await rolloutStory('kubectl', 'rs-theirs')).toEqual(story);
  });
});
