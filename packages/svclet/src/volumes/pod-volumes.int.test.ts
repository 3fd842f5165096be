// Pod volumes end to end on one node: a real API server, a PodManager and svc-runtime (as root,
// containers with mounts run in mount namespaces of their own). configMap, secret, projected
// (service-account token checked by TokenReview), downwardAPI, emptyDir (also tmpfs) and
// hostPath volumes, subPath, readOnly, updates seen in the files, FailedMount, and nothing left
// on the host's mount table or disk after the pods are gone.
import { lstat, mkdtemp, readFile, readlink, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { criLabel, group, naming, serviceAccountMountPath, type ApiObject, type Event, type Pod } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { containerOf, shPod, waitForPod, withPodEnv } from '../pods/pods-testing.js';

const env = withPodEnv();
const RESYNC_MS = 300;
let hostDir: string;

const configMaps = (): ResourceClient =>
  new ResourceClient(env.testApi, { group: '', version: 'v1', resource: 'configmaps' }).namespace('default');
const secrets = (): ResourceClient =>
  new ResourceClient(env.testApi, { group: '', version: 'v1', resource: 'secrets' }).namespace('default');

beforeAll(async () => {
  hostDir = await mkdtemp(join(tmpdir(), 'svclet-hostpath-'));
  await env.startManager({ volumeResyncPeriodMs: RESYNC_MS });
  await configMaps().create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app' },
    data: { key: 'value-1', 'other.conf': 'a=1\n' },
  } as ApiObject);
  await secrets().create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds' },
    data: { password: Buffer.from('s3cret').toString('base64') },
  } as ApiObject);
}, 60_000);

afterAll(async () => {
  if (hostDir) await rm(hostDir, { recursive: true, force: true });
});

/** The running container `container` of pod `uid`, by the svclet's CRI labels. */
async function containerId(uid: string, container = 'c'): Promise<string> {
  return waitFor(`running container ${container} of ${uid}`, async () => {
    const { containers } = await env.cri.runtime.listContainers({
      filter: {
        labelSelector: { [criLabel('pod.uid')]: uid, [criLabel('container.name')]: container },
        state: { state: 'CONTAINER_RUNNING' },
      },
    });
    return containers[0]?.id;
  });
}

/** Runs `cmd` in the container (the runtime's ExecSync, as exec and probes do). */
async function execIn(
  uid: string,
  cmd: string[],
  container = 'c',
): Promise<{ out: string; err: string; code: number }> {
  const r = await env.cri.runtime.execSync({ containerId: await containerId(uid, container), cmd, timeout: 10 });
  return { out: Buffer.from(r.stdout).toString(), err: Buffer.from(r.stderr).toString(), code: r.exitCode };
}

async function running(name: string): Promise<Pod> {
  return waitForPod(env, name, { what: 'Running', cond: (p) => p.status?.phase === 'Running' });
}

async function createRunning(pod: Pod): Promise<Pod> {
  await env.pods().create(pod);
  return running(pod.metadata.name ?? '');
}

async function events(name: string, what: string, want: (e: Event) => boolean): Promise<Event> {
  const client = new ResourceClient<Event>(env.testApi, { group: '', version: 'v1', resource: 'events' }).namespace(
    'default',
  );
  return waitFor(`events of ${name}: ${what}`, async () =>
    (await client.list({ fieldSelector: `involvedObject.name=${name}` })).items.find(want),
  );
}

function volumesDir(uid: string): string {
  return join(env.dir, 'root', 'pods', uid, 'volumes');
}

async function mountTable(): Promise<string> {
  return readFile('/proc/self/mountinfo', 'utf8');
}

describe('configMap volumes', () => {
  it('a pod reads its ConfigMap at /etc/config, laid out by the atomic writer, and sees an edit of the ConfigMap in the file', async () => {
    const pod = await createRunning(
      shPod('cm', env.nodeName, {
        script: 'exec sleep 600',
        spec: { volumes: [{ name: 'config', configMap: { name: 'app' } }] },
        container: { volumeMounts: [{ name: 'config', mountPath: '/etc/config' }] },
      }),
    );
    const uid = pod.metadata.uid ?? '';
    expect(await execIn(uid, ['cat', '/etc/config/key'])).toEqual({ out: 'value-1', err: '', code: 0 });
    expect((await execIn(uid, ['ls', '/etc/config'])).out.split('\n').filter(Boolean)).toEqual(['key', 'other.conf']);
    // Kubernetes' layout: <root>/pods/<uid>/volumes/<prefix>~configmap/<name>, files through ..data.
    const dir = join(volumesDir(uid), `${naming().labelPrefix}~configmap`, 'config');
    expect(await readlink(join(dir, 'key'))).toBe('..data/key');
    const data = await readlink(join(dir, '..data'));
    expect(data).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]+$/);
    expect((await stat(join(dir, 'key'))).mode & 0o777).toBe(0o644);
    // The host does not see the mount.
    expect(await mountTable()).not.toContain(' /etc/config ');

    const cm = (await configMaps().get('app')) as ApiObject & { data: Record<string, string> };
    await configMaps().update({ ...cm, data: { ...cm.data, key: 'value-2' } } as ApiObject);
    await waitFor(
      'the edit in the mounted file',
      async () => (await execIn(uid, ['cat', '/etc/config/key'])).out === 'value-2' || undefined,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(await readlink(join(dir, '..data'))).not.toBe(data);
    // The old data directory is gone: one timestamped directory at a time.
    expect((await readdir(dir)).filter((n) => /^\.\.\d/.test(n))).toHaveLength(1);
  });

  it('items pick keys and paths, mode sets a file mode; subPath mounts one file; readOnly mounts refuse writes', async () => {
    const pod = await createRunning(
      shPod('cm-items', env.nodeName, {
        script: 'exec sleep 600',
        spec: {
          volumes: [
            {
              name: 'config',
              configMap: { name: 'app', items: [{ key: 'other.conf', path: 'conf/app.conf', mode: 0o600 }] },
            },
            { name: 'whole', configMap: { name: 'app' } },
            { name: 'scratch', emptyDir: {} },
          ],
        },
        container: {
          volumeMounts: [
            { name: 'config', mountPath: '/etc/items' },
            { name: 'whole', mountPath: '/etc/single.conf', subPath: 'other.conf' },
            { name: 'scratch', mountPath: '/srv/scratch', readOnly: true },
            { name: 'scratch', mountPath: '/srv/sub', subPath: 'part' },
          ],
        },
      }),
    );
    const uid = pod.metadata.uid ?? '';
    expect((await execIn(uid, ['ls', '/etc/items'])).out.trim()).toBe('conf');
    expect((await execIn(uid, ['cat', '/etc/items/conf/app.conf'])).out).toBe('a=1\n');
    expect((await execIn(uid, ['stat', '-L', '-c', '%a', '/etc/items/conf/app.conf'])).out.trim()).toBe('600');
    expect((await execIn(uid, ['cat', '/etc/single.conf'])).out).toBe('a=1\n');
    const refused = await execIn(uid, ['sh', '-c', 'echo x > /srv/scratch/f']);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('Read-only file system');
    // A configMap volume is read-only in the container even without readOnly, as in Kubernetes.
    expect((await execIn(uid, ['sh', '-c', 'echo x > /etc/items/new'])).err).toContain('Read-only file system');
    // subPath of a writable volume: made as a directory in the volume.
    expect((await execIn(uid, ['sh', '-c', 'echo in-sub > /srv/sub/f && echo ok'])).out).toBe('ok\n');
    const sub = join(volumesDir(uid), `${naming().labelPrefix}~empty-dir`, 'scratch', 'part', 'f');
    expect(await readFile(sub, 'utf8')).toBe('in-sub\n');
  });

  it('a missing ConfigMap keeps the pod Pending (ContainerCreating) with a FailedMount event; it starts once the ConfigMap exists; optional ones may be missing', async () => {
    await env.pods().create(
      shPod('cm-missing', env.nodeName, {
        script: 'exec sleep 600',
        spec: {
          volumes: [
            { name: 'config', configMap: { name: 'later' } },
            { name: 'maybe', configMap: { name: 'never', optional: true } },
          ],
        },
        container: {
          volumeMounts: [
            { name: 'config', mountPath: '/etc/later' },
            { name: 'maybe', mountPath: '/etc/maybe' },
          ],
        },
      }),
    );
    const e = await events('cm-missing', 'FailedMount', (x) => x.reason === 'FailedMount');
    expect(e).toMatchObject({
      type: 'Warning',
      message: 'MountVolume.SetUp failed for volume "config" : configmap "later" not found',
      source: { component: naming().nodeAgentName },
    });
    const p = await waitForPod(env, 'cm-missing', {
      what: 'Pending, waiting ContainerCreating',
      cond: (x) => containerOf(x)?.state?.waiting?.reason === 'ContainerCreating',
    });
    expect(p.status?.phase).toBe('Pending');
    await configMaps().create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'later' },
      data: { k: 'late' },
    } as ApiObject);
    const started = await running('cm-missing');
    expect((await execIn(started.metadata.uid ?? '', ['cat', '/etc/later/k'])).out).toBe('late');
    expect((await execIn(started.metadata.uid ?? '', ['ls', '/etc/maybe'])).out).toBe('');
  });

  it('a volume type this node cannot serve (persistentVolumeClaim) gets FailedMount and the pod stays Pending', async () => {
    await env.pods().create(
      shPod('pvc', env.nodeName, {
        script: 'exec sleep 600',
        spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'claim' } }] },
        container: { volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      }),
    );
    const e = await events('pvc', 'FailedMount', (x) => x.reason === 'FailedMount');
    expect(e.message).toMatch(
      /^MountVolume.SetUp failed for volume "data" : volume type persistentVolumeClaim is not supported/,
    );
    const p = await waitForPod(env, 'pvc', {
      what: 'waiting ContainerCreating',
      cond: (x) => containerOf(x)?.state?.waiting?.reason === 'ContainerCreating',
    });
    expect(p.status?.phase).toBe('Pending');
  });
});

describe('secret, projected, downwardAPI, emptyDir and hostPath volumes', () => {
  it('a secret volume with defaultMode', async () => {
    const pod = await createRunning(
      shPod('secret', env.nodeName, {
        script: 'exec sleep 600',
        spec: { volumes: [{ name: 'creds', secret: { secretName: 'creds', defaultMode: 0o400 } }] },
        container: { volumeMounts: [{ name: 'creds', mountPath: '/etc/creds' }] },
      }),
    );
    const uid = pod.metadata.uid ?? '';
    expect((await execIn(uid, ['cat', '/etc/creds/password'])).out).toBe('s3cret');
    expect((await execIn(uid, ['stat', '-L', '-c', '%a', '/etc/creds/password'])).out.trim()).toBe('400');
  });

  it('the service-account volume: a token the API server accepts (TokenReview), the CA and the namespace; a projected token with an audience', async () => {
    const pod = await createRunning(
      shPod('sa', env.nodeName, {
        script: 'exec sleep 600',
        spec: {
          volumes: [
            {
              name: 'vault',
              projected: {
                sources: [
                  { serviceAccountToken: { audience: 'vault', expirationSeconds: 600, path: 'vault-token' } },
                  { secret: { name: 'creds', items: [{ key: 'password', path: 'pw' }] } },
                ],
              },
            },
          ],
        },
        container: { volumeMounts: [{ name: 'vault', mountPath: '/var/run/vault' }] },
      }),
    );
    const uid = pod.metadata.uid ?? '';
    const path = serviceAccountMountPath();
    const token = (await execIn(uid, ['cat', `${path}/token`])).out;
    expect((await execIn(uid, ['cat', `${path}/namespace`])).out).toBe('default');
    expect((await execIn(uid, ['cat', `${path}/ca.crt`])).out).toBe(env.server.server.caPem);
    const review = async (t: string, audiences?: string[]): Promise<Record<string, unknown>> => {
      const r = await env.testApi.request('POST', `/apis/${group('authentication')}/v1/tokenreviews`, {
        body: {
          apiVersion: `${group('authentication')}/v1`,
          kind: 'TokenReview',
          spec: { token: t, ...(audiences ? { audiences } : {}) },
        },
      });
      return r.json<{ status: Record<string, unknown> }>().status;
    };
    expect(await review(token)).toMatchObject({
      authenticated: true,
      user: { username: 'system:serviceaccount:default:default' },
    });
    const vault = (await execIn(uid, ['cat', '/var/run/vault/vault-token'])).out;
    expect(await review(vault, ['vault'])).toMatchObject({ authenticated: true, audiences: ['vault'] });
    expect(await review(vault)).toMatchObject({ authenticated: false });
    expect((await execIn(uid, ['cat', '/var/run/vault/pw'])).out).toBe('s3cret');
  });

  it('downwardAPI labels, name and a CPU limit; a label change reaches the file', async () => {
    const pod = await createRunning({
      ...shPod('downward', env.nodeName, {
        script: 'exec sleep 600',
        spec: {
          volumes: [
            {
              name: 'info',
              downwardAPI: {
                items: [
                  { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                  { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
                  { path: 'cpu', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '1m' } },
                ],
              },
            },
          ],
        },
        container: {
          resources: { limits: { cpu: '250m' } },
          volumeMounts: [{ name: 'info', mountPath: '/etc/podinfo' }],
        },
      }),
      metadata: { name: 'downward', labels: { app: 'web', tier: 'front' } },
    });
    const uid = pod.metadata.uid ?? '';
    expect((await execIn(uid, ['cat', '/etc/podinfo/labels'])).out).toBe('app="web"\ntier="front"');
    expect((await execIn(uid, ['cat', '/etc/podinfo/name'])).out).toBe('downward');
    expect((await execIn(uid, ['cat', '/etc/podinfo/cpu'])).out).toBe('250');
    await env.pods().patch('downward', { metadata: { labels: { tier: 'back' } } }, { type: 'merge' });
    await waitFor(
      'the new label in the file',
      async () => (await execIn(uid, ['cat', '/etc/podinfo/labels'])).out === 'app="web"\ntier="back"' || undefined,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  });

  it("a container running as another user: its emptyDir is writable (0777 whatever the umask) and its projected token is its own (0600); with fsGroup, the secret (defaultMode 0400) and the token are the group's and readable, the emptyDir set-group-ID", async () => {
    const volumes = {
      volumes: [
        { name: 'creds', secret: { secretName: 'creds', defaultMode: 0o400 } },
        { name: 'scratch', emptyDir: {} },
        { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault' } }] } },
      ],
    };
    const container = {
      volumeMounts: [
        { name: 'creds', mountPath: '/etc/creds' },
        { name: 'scratch', mountPath: '/scratch' },
        { name: 'token', mountPath: '/var/run/token' },
      ],
    };
    const plain = await createRunning(
      shPod('as-user', env.nodeName, {
        script: 'exec sleep 600',
        spec: { ...volumes, securityContext: { runAsUser: 1234 } },
        container,
      }),
    );
    const plainUid = plain.metadata.uid ?? '';
    expect((await execIn(plainUid, ['sh', '-c', 'echo hi > /scratch/f && cat /scratch/f'])).out).toBe('hi\n');
    expect((await execIn(plainUid, ['stat', '-c', '%a', '/scratch'])).out.trim()).toBe('777');
    // Without fsGroup the secret stays root's, mode 0400: the user cannot read it, as in Kubernetes.
    expect((await execIn(plainUid, ['cat', '/etc/creds/password'])).code).not.toBe(0);
    // Every container runs as 1234 (kubelet's FsUser): the token is that user's, mode 0600.
    expect((await execIn(plainUid, ['stat', '-L', '-c', '%a %u', '/var/run/token/token'])).out.trim()).toBe('600 1234');
    expect((await execIn(plainUid, ['cat', '/var/run/token/token'])).out).toMatch(/^eyJ/);

    const grouped = await createRunning(
      shPod('as-group', env.nodeName, {
        script: 'exec sleep 600',
        spec: { ...volumes, securityContext: { runAsUser: 1234, fsGroup: 3456 } },
        container,
      }),
    );
    const uid = grouped.metadata.uid ?? '';
    expect((await execIn(uid, ['id', '-G'])).out.trim().split(' ')).toContain('3456');
    expect((await execIn(uid, ['cat', '/etc/creds/password'])).out).toBe('s3cret');
    expect((await execIn(uid, ['stat', '-L', '-c', '%a %g', '/etc/creds/password'])).out.trim()).toBe('440 3456');
    expect((await execIn(uid, ['stat', '-c', '%a %g', '/scratch'])).out.trim()).toBe('2777 3456');
    // 0600 for the token, then the group's read bit from fsGroup: 0640.
    expect((await execIn(uid, ['stat', '-L', '-c', '%a %u %g', '/var/run/token/token'])).out.trim()).toBe(
      '640 1234 3456',
    );
    // A file made in the emptyDir inherits the group.
    expect((await execIn(uid, ['sh', '-c', 'touch /scratch/new && stat -c %g /scratch/new'])).out.trim()).toBe('3456');
  });

  it('an emptyDir shared by two containers, a memory-backed one (tmpfs), a hostPath; nothing left on the host mount table or disk after deletion', async () => {
    const pod = await createRunning({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'shared' },
      spec: {
        nodeName: env.nodeName,
        volumes: [
          { name: 'share', emptyDir: {} },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
          { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
        ],
        containers: [
          {
            name: 'writer',
            image: 'busybox',
            command: ['sh', '-c', 'echo from-writer > /share/note; echo to-host > /host/out; exec sleep 600'],
            volumeMounts: [
              { name: 'share', mountPath: '/share' },
              { name: 'host', mountPath: '/host' },
            ],
          },
          {
            name: 'reader',
            image: 'busybox',
            command: ['sh', '-c', 'exec sleep 600'],
            volumeMounts: [
              { name: 'share', mountPath: '/share' },
              { name: 'mem', mountPath: '/mem' },
            ],
          },
        ],
      },
    });
    const uid = pod.metadata.uid ?? '';
    await waitFor(
      'the writer wrote',
      async () => (await execIn(uid, ['cat', '/share/note'], 'reader')).out || undefined,
    );
    expect((await execIn(uid, ['cat', '/share/note'], 'reader')).out).toBe('from-writer\n');
    expect(await readFile(join(hostDir, 'out'), 'utf8')).toBe('to-host\n');
    const memDir = join(volumesDir(uid), `${naming().labelPrefix}~empty-dir`, 'mem');
    expect(await mountTable()).toContain(` ${memDir} `);
    expect((await execIn(uid, ['sh', '-c', 'grep " /mem " /proc/self/mountinfo'], 'reader')).out).toContain('tmpfs');

    // A hostPath whose type does not match: FailedMount.
    await env.pods().create(
      shPod('bad-host', env.nodeName, {
        script: 'exec sleep 600',
        spec: { volumes: [{ name: 'h', hostPath: { path: join(hostDir, 'out'), type: 'Directory' } }] },
      }),
    );
    expect((await events('bad-host', 'FailedMount', (x) => x.reason === 'FailedMount')).message).toBe(
      `MountVolume.SetUp failed for volume "h" : hostPath type check failed: ${join(hostDir, 'out')} is not a directory`,
    );

    for (const name of [
      'shared',
      'cm',
      'cm-items',
      'cm-missing',
      'pvc',
      'secret',
      'sa',
      'downward',
      'bad-host',
      'as-user',
      'as-group',
    ])
      await env
        .pods()
        .delete(name, { gracePeriodSeconds: 0 })
        .catch(() => undefined);
    await waitFor(
      'every pod directory removed',
      async () => ((await readdir(join(env.dir, 'root', 'pods')).catch(() => [])).length === 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    expect(await mountTable()).not.toContain(env.dir);
    expect(await lstat(join(hostDir, 'out'))).toBeTruthy();
  });
});
