// svc-runtime served in-process on a real unix socket, driven through connectCri, running
// real processes. Every container started here is killed in afterAll (killContainersUnder).
import { chownSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { silentLogger } from '@svc/component-base';
import {
  connectCri,
  criErrorCode,
  GrpcStatus,
  startRuntimeServer,
  type CriClient,
  type CriInput,
  type ContainerConfig,
  type RuntimeServer,
} from './index.js';
import { waitFor } from '@svc/testing';
import { alive, killContainersUnder, readCriLog } from './runtime-testing.js';

const IMAGE = 'busybox';

describe('svc-runtime CRI server', () => {
  let dir: string;
  let socket: string;
  let rootDir: string;
  let logDir: string;
  let server: RuntimeServer;
  let cri: CriClient;
  let pods = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-runtime-'));
    socket = join(dir, 'cri.sock');
    rootDir = join(dir, 'root');
    logDir = join(dir, 'pods');
    server = await startRuntimeServer({ socket, rootDir, logger: silentLogger });
    cri = connectCri(`unix://${socket}`);
    await cri.image.pullImage({ image: { image: IMAGE } });
  });

  afterAll(async () => {
    cri?.close();
    await server?.close();
    killContainersUnder(rootDir);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The gRPC status code `p` rejects with (fails the test if it resolves). */
  async function codeOf(p: Promise<unknown>): Promise<{ code: number | undefined; message: string }> {
    try {
      await p;
    } catch (e) {
      return { code: criErrorCode(e), message: (e as { details?: string }).details ?? String(e) };
    }
    throw new Error('the call succeeded');
  }

  async function runPod(name = `pod-${++pods}`, labels: Record<string, string> = {}): Promise<string> {
    const { podSandboxId } = await cri.runtime.runPodSandbox({
      config: {
        metadata: { name, namespace: 'default', uid: `uid-${name}` },
        logDirectory: join(logDir, name),
        labels,
        annotations: { note: name },
      },
    });
    return podSandboxId;
  }

  async function createContainer(
    podSandboxId: string,
    name: string,
    config: CriInput<ContainerConfig>,
  ): Promise<string> {
    const { containerId } = await cri.runtime.createContainer({
      podSandboxId,
      config: { metadata: { name }, image: { image: IMAGE }, logPath: `${name}/0.log`, ...config },
    });
    return containerId;
  }

  async function runContainer(podSandboxId: string, name: string, config: CriInput<ContainerConfig>): Promise<string> {
    const containerId = await createContainer(podSandboxId, name, config);
    await cri.runtime.startContainer({ containerId });
    return containerId;
  }

  async function status(containerId: string) {
    const r = await cri.runtime.containerStatus({ containerId, verbose: true });
    return { ...r.status!, pid: (JSON.parse(r.info.info ?? '{}') as { pid: number }).pid };
  }

  const exited = (id: string) =>
    waitFor(`container ${id} to exit`, async () => {
      const s = await status(id);
      return s.state === 'CONTAINER_EXITED' && s;
    });

  it('answers Version and Status', async () => {
    expect(await cri.runtime.version({ version: 'v1' })).toEqual({
      version: '0.1.0',
      runtimeName: 'svc-runtime',
      runtimeVersion: '0.1.0',
      runtimeApiVersion: 'v1',
    });
    const st = await cri.runtime.status({});
    expect(st.status?.conditions.map((c) => [c.type, c.status])).toEqual([
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ]);
  });

  it('runs, reports, lists, stops and removes pod sandboxes', async () => {
    const id = await runPod('sandbox-a', { app: 'a' });
    const other = await runPod('sandbox-b', { app: 'b' });
    const st = await cri.runtime.podSandboxStatus({ podSandboxId: id });
    expect(st.status).toMatchObject({
      id,
      state: 'SANDBOX_READY',
      metadata: { name: 'sandbox-a', namespace: 'default', uid: 'uid-sandbox-a', attempt: 0 },
      network: { ip: '127.0.0.1', additionalIps: [] },
      labels: { app: 'a' },
      annotations: { note: 'sandbox-a' },
    });
    expect(st.status!.createdAt).toBeGreaterThan(Date.now() * 1e6 - 60e9);
    const listed = await cri.runtime.listPodSandbox({ filter: { labelSelector: { app: 'a' } } });
    expect(listed.items.map((s) => s.id)).toEqual([id]);
    expect(
      (
        await codeOf(
          cri.runtime.runPodSandbox({
            config: { metadata: { name: 'sandbox-a', namespace: 'default', uid: 'uid-sandbox-a' } },
          }),
        )
      ).code,
    ).toBe(GrpcStatus.ALREADY_EXISTS);

    await cri.runtime.stopPodSandbox({ podSandboxId: id });
    await cri.runtime.stopPodSandbox({ podSandboxId: id });
    expect((await cri.runtime.podSandboxStatus({ podSandboxId: id })).status?.state).toBe('SANDBOX_NOTREADY');
    const notReady = await cri.runtime.listPodSandbox({ filter: { state: { state: 'SANDBOX_NOTREADY' } } });
    expect(notReady.items.map((s) => s.id)).toEqual([id]);
    expect((await codeOf(createContainer(id, 'late', { command: ['true'] }))).code).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );

    await cri.runtime.removePodSandbox({ podSandboxId: id });
    await cri.runtime.removePodSandbox({ podSandboxId: id });
    expect((await codeOf(cri.runtime.podSandboxStatus({ podSandboxId: id }))).code).toBe(GrpcStatus.NOT_FOUND);
    expect((await codeOf(cri.runtime.stopPodSandbox({ podSandboxId: id }))).code).toBe(GrpcStatus.NOT_FOUND);
    expect((await cri.runtime.listPodSandbox({})).items.map((s) => s.id)).toContain(other);
  });

  it('pulls, lists, reports and removes images by name', async () => {
    const { imageRef } = await cri.image.pullImage({ image: { image: 'registry.local:5000/team/app:v1' } });
    expect(imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    const st = await cri.image.imageStatus({ image: { image: 'registry.local:5000/team/app:v1' } });
    expect(st.image).toMatchObject({ id: imageRef, repoTags: ['registry.local:5000/team/app:v1'], size: 1 });
    expect((await cri.image.imageStatus({ image: { image: imageRef } })).image?.id).toBe(imageRef);
    expect((await cri.image.listImages({})).images.map((i) => i.repoTags[0]).sort()).toEqual([
      'busybox:latest',
      'registry.local:5000/team/app:v1',
    ]);
    expect(
      (await cri.image.listImages({ filter: { image: { image: 'busybox' } } })).images.map((i) => i.repoTags[0]),
    ).toEqual(['busybox:latest']);
    await cri.image.removeImage({ image: { image: imageRef } });
    await cri.image.removeImage({ image: { image: imageRef } });
    expect((await cri.image.imageStatus({ image: { image: 'registry.local:5000/team/app:v1' } })).image).toBeNull();
    expect((await codeOf(cri.image.pullImage({ image: { image: '' } }))).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const fs = await cri.image.imageFsInfo({});
    expect(fs.imageFilesystems[0]?.fsId?.mountpoint).toBe(rootDir);
  });

  it('runs a container: CRI-format log of stdout and stderr, exit code, times, labels and annotations', async () => {
    const pod = await runPod();
    const workDir = join(dir, 'work-1');
    mkdirSync(workDir);
    const id = await runContainer(pod, 'echo', {
      command: ['sh', '-c'],
      args: ['echo "hello $GREETING"; echo oops >&2; printf "no newline"; pwd >&2; exit 3'],
      envs: [{ key: 'GREETING', value: 'world' }],
      workingDir: workDir,
      labels: { role: 'test' },
      annotations: { 'svc.io/hash': 'x1' },
    });
    const s = await exited(id);
    expect(s).toMatchObject({
      exitCode: 3,
      reason: 'Error',
      labels: { role: 'test' },
      annotations: { 'svc.io/hash': 'x1' },
      logPath: join(logDir, `pod-${pods}`, 'echo/0.log'),
    });
    expect(s.startedAt).toBeGreaterThanOrEqual(s.createdAt);
    expect(s.finishedAt).toBeGreaterThanOrEqual(s.startedAt);
    const lines = readCriLog(s.logPath);
    for (const l of lines) expect(l.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const byStream = (stream: string) => lines.filter((l) => l.stream === stream).map((l) => `${l.tag} ${l.text}`);
    expect(byStream('stdout')).toEqual(['F hello world', 'F no newline']);
    expect(byStream('stderr')).toEqual(['F oops', `F ${workDir}`]);

    const ok = await runContainer(pod, 'ok', { command: ['true'] });
    expect(await exited(ok)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    // Without a command, args are the whole command line (the image's entrypoint is empty).
    const argsOnly = await runContainer(pod, 'args-only', { args: ['sh', '-c', 'echo from args; exit 4'] });
    expect(await exited(argsOnly)).toMatchObject({ exitCode: 4 });
    expect(readCriLog((await status(argsOnly)).logPath).map((l) => l.text)).toEqual(['from args']);
    const listed = await cri.runtime.listContainers({ filter: { podSandboxId: pod, labelSelector: { role: 'test' } } });
    expect(listed.containers.map((c) => [c.id, c.state, c.metadata?.name])).toEqual([[id, 'CONTAINER_EXITED', 'echo']]);
    expect(listed.containers[0]?.imageRef).toBe((await cri.image.imageStatus({ image: { image: IMAGE } })).image?.id);
  });

  it('runs a container and its exec sessions as the user, group and supplementary groups of its security context', async () => {
    const pod = await runPod();
    const ids = `id -u; id -g; id -G`;
    const linux = {
      securityContext: { runAsUser: { value: 4321 }, runAsGroup: { value: 5432 }, supplementalGroups: [6543] },
    };
    // Images here run as svc-runtime itself: kubelet's runAsNonRoot check reads this uid.
    const image = (await cri.image.imageStatus({ image: { image: IMAGE } })).image;
    expect(image?.uid?.value).toBe(process.getuid!());
    if (process.getuid!() !== 0) {
      const id = await createContainer(pod, 'as-user', { command: ['sh', '-c', ids], linux });
      const refused = await codeOf(cri.runtime.startContainer({ containerId: id }));
      expect(refused.message).toMatch(/not root: it cannot run the container as uid 4321/);
      return;
    }
    const id = await runContainer(pod, 'as-user', { command: ['sh', '-c', `${ids}; sleep 30`], linux });
    await waitFor(
      'the container to print its ids',
      () => readCriLog(join(logDir, `pod-${pods}`, 'as-user/0.log')).length >= 3,
    );
    expect(readCriLog(join(logDir, `pod-${pods}`, 'as-user/0.log')).map((l) => l.text)).toEqual([
      '4321',
      '5432',
      '5432 6543',
    ]);
    const exec = await cri.runtime.execSync({ containerId: id, cmd: ['sh', '-c', ids] });
    expect(exec.stdout.toString()).toBe('4321\n5432\n5432 6543\n');
    // A non-root user has none of root's capabilities (CapEff), in the container and in exec.
    const caps = await cri.runtime.execSync({ containerId: id, cmd: ['grep', 'CapEff', '/proc/self/status'] });
    expect(caps.stdout.toString()).toMatch(/^CapEff:\s+0+$/m);
    const missing = await cri.runtime.execSync({ containerId: id, cmd: ['no-such-command-xyz'] });
    expect({ code: missing.exitCode, stderr: missing.stderr.toString() }).toEqual({
      code: 127,
      stderr: 'exec: "no-such-command-xyz": executable file not found in $PATH\n',
    });

    // With a volume: mounted as root in the container's namespace, then the command runs as the user.
    const source = join(dir, 'user-volume');
    mkdirSync(source);
    writeFileSync(join(source, 'key'), 'value\n', { mode: 0o640 });
    chownSync(join(source, 'key'), 0, 6543);
    const target = join('/tmp', `svc-runtime-user-${process.pid}`, 'config');
    try {
      const mounted = await runContainer(pod, 'as-user-mounted', {
        command: ['sleep', '30'],
        mounts: [{ containerPath: target, hostPath: source, readonly: true }],
        linux: { securityContext: { runAsUser: { value: 4321 }, supplementalGroups: [6543] } },
      });
      const read = await cri.runtime.execSync({
        containerId: mounted,
        cmd: ['sh', '-c', `id -u; id -g; cat ${target}/key`],
      });
      // No runAsGroup and a uid not in /etc/passwd: the primary group is 0, as containerd makes it.
      expect(read.stdout.toString()).toBe('4321\n0\nvalue\n');
      const write = await cri.runtime.execSync({ containerId: mounted, cmd: ['touch', '/root/svc-runtime-user-test'] });
      expect(write.exitCode).not.toBe(0);
      expect(existsSync('/root/svc-runtime-user-test')).toBe(false);
    } finally {
      rmSync(dirname(target), { recursive: true, force: true });
    }
  });

  it('answers StartContainer only once the container volumes are mounted: an exec right after it finds them', async () => {
    if (process.getuid!() !== 0) return; // mounts need root; the refusal is the test above
    const pod = await runPod();
    const source = join(dir, 'start-volume');
    mkdirSync(source);
    writeFileSync(join(source, 'key'), 'mounted\n');
    const target = join('/tmp', `svc-runtime-start-${process.pid}`, 'data');
    try {
      const reads: string[] = [];
      for (let i = 0; i < 10; i++) {
        const id = await runContainer(pod, `mounted-${i}`, {
          command: ['sleep', '30'],
          // Many mounts make the mount script take a while: the last one is made last.
          mounts: Array.from({ length: 20 }, (_, m) => ({
            containerPath: m === 19 ? target : `${target}-${m}`,
            hostPath: source,
            readonly: true,
          })),
          tty: i % 2 === 1,
        });
        const read = await cri.runtime.execSync({ containerId: id, cmd: ['cat', `${target}/key`] });
        reads.push(`${read.exitCode} ${read.stdout.toString().trim()}${read.stderr.toString().trim()}`);
        await cri.runtime.stopContainer({ containerId: id, timeout: 0 });
      }
      expect(reads).toEqual(Array.from({ length: 10 }, () => '0 mounted'));

      // A volume over the directory that holds svc-runtime's own (and so the container's
      // directory, where the mount script tells the shim it is done) changes nothing.
      const over = await runContainer(pod, 'over-root', {
        command: ['sleep', '30'],
        mounts: [{ containerPath: dir, hostPath: source, readonly: true }],
      });
      const read = await cri.runtime.execSync({ containerId: over, cmd: ['cat', `${dir}/key`] });
      expect({ code: read.exitCode, out: read.stdout.toString() }).toEqual({ code: 0, out: 'mounted\n' });
      expect((await status(over)).state).toBe('CONTAINER_RUNNING');
      await cri.runtime.stopContainer({ containerId: over, timeout: 0 });
    } finally {
      rmSync(dirname(target), { recursive: true, force: true });
    }
  });

  it('splits lines longer than 16 KiB into P entries ending with an F', async () => {
    const pod = await runPod();
    const id = await runContainer(pod, 'long', { command: ['sh', '-c', 'head -c 40000 /dev/zero | tr "\\0" a; echo'] });
    const s = await exited(id);
    const lines = readCriLog(s.logPath);
    expect(lines.map((l) => [l.tag, l.text.length])).toEqual([
      ['P', 16384],
      ['P', 16384],
      ['F', 40000 - 2 * 16384],
    ]);
  });

  it('StopContainer SIGTERMs, then SIGKILLs a process that ignores TERM once the timeout has passed', async () => {
    const pod = await runPod();
    const stubborn = await runContainer(pod, 'stubborn', {
      command: ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.1; done'],
    });
    await waitFor('stubborn to be ready', () => readCriLog(join(logDir, `pod-${pods}`, 'stubborn/0.log')).length > 0);
    const t0 = Date.now();
    await cri.runtime.stopContainer({ containerId: stubborn, timeout: 2 });
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(3500);
    expect(await status(stubborn)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137 });

    const polite = await runContainer(pod, 'polite', { command: ['sleep', '30'] });
    const t1 = Date.now();
    await cri.runtime.stopContainer({ containerId: polite, timeout: 10 });
    expect(Date.now() - t1).toBeLessThan(2000);
    expect(await status(polite)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 143 });
    await cri.runtime.stopContainer({ containerId: polite, timeout: 10 });
  });

  it('ExecSync answers output and exit code in the container env and dir, and honours its timeout', async () => {
    const pod = await runPod();
    const workDir = join(dir, 'work-2');
    mkdirSync(workDir);
    const id = await runContainer(pod, 'target', {
      command: ['sleep', '30'],
      envs: [{ key: 'FOO', value: 'bar' }],
      workingDir: workDir,
    });
    const r = await cri.runtime.execSync({
      containerId: id,
      cmd: ['sh', '-c', 'echo "$FOO $(pwd)"; echo err >&2; exit 4'],
    });
    expect({ stdout: r.stdout.toString(), stderr: r.stderr.toString(), exitCode: r.exitCode }).toEqual({
      stdout: `bar ${workDir}\n`,
      stderr: 'err\n',
      exitCode: 4,
    });

    const missing = await cri.runtime.execSync({ containerId: id, cmd: ['no-such-command-xyz'] });
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr.toString()).toMatch(/no-such-command-xyz/);

    const t0 = Date.now();
    const slow = await codeOf(cri.runtime.execSync({ containerId: id, cmd: ['sleep', '10'], timeout: 1 }));
    expect(slow.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(slow.message).toMatch(/timed out after 1s/);
    expect(Date.now() - t0).toBeLessThan(3000);

    expect((await codeOf(cri.runtime.execSync({ containerId: id, cmd: [] }))).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    await cri.runtime.stopContainer({ containerId: id, timeout: 0 });
    expect((await codeOf(cri.runtime.execSync({ containerId: id, cmd: ['true'] }))).code).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
  });

  it('answers bad requests with gRPC status codes, not crashes', async () => {
    const pod = await runPod();
    const noCommand = await codeOf(createContainer(pod, 'web', {}));
    expect(noCommand.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(noCommand.message).toMatch(/^container web has no command/);
    expect(
      (await codeOf(createContainer(pod, 'x', { command: ['true'], image: { image: 'never-pulled' } }))).code,
    ).toBe(GrpcStatus.NOT_FOUND);
    expect((await codeOf(createContainer('no-such-sandbox', 'x', { command: ['true'] }))).code).toBe(
      GrpcStatus.NOT_FOUND,
    );
    expect(
      (
        await codeOf(
          cri.runtime.createContainer({ podSandboxId: pod, config: { image: { image: IMAGE }, command: ['true'] } }),
        )
      ).code,
    ).toBe(GrpcStatus.INVALID_ARGUMENT);
    const badDir = await codeOf(createContainer(pod, 'x', { command: ['true'], workingDir: join(dir, 'missing') }));
    expect(badDir).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: expect.stringMatching(/working directory .* does not exist/),
    });
    expect((await codeOf(cri.runtime.runPodSandbox({ config: {} }))).code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(
      (await codeOf(cri.runtime.runPodSandbox({ config: { metadata: { name: 'p' } }, runtimeHandler: 'kata' }))).code,
    ).toBe(GrpcStatus.INVALID_ARGUMENT);

    for (const call of [
      cri.runtime.startContainer({ containerId: 'nope' }),
      cri.runtime.stopContainer({ containerId: 'nope', timeout: 1 }),
      cri.runtime.containerStatus({ containerId: 'nope' }),
      cri.runtime.execSync({ containerId: 'nope', cmd: ['true'] }),
      cri.runtime.reopenContainerLog({ containerId: 'nope' }),
    ]) {
      expect((await codeOf(call)).code).toBe(GrpcStatus.NOT_FOUND);
    }
    await cri.runtime.removeContainer({ containerId: 'nope' });

    const once = await runContainer(pod, 'once', { command: ['true'] });
    expect((await codeOf(cri.runtime.startContainer({ containerId: once }))).code).toBe(GrpcStatus.FAILED_PRECONDITION);
    await cri.runtime.removeContainer({ containerId: once });
    expect((await codeOf(cri.runtime.containerStatus({ containerId: once }))).code).toBe(GrpcStatus.NOT_FOUND);

    const notFound = await createContainer(pod, 'typo', { command: ['no-such-binary-xyz'] });
    const start = await codeOf(cri.runtime.startContainer({ containerId: notFound }));
    expect(start.message).toMatch(/failed to start container typo .*ENOENT/);
    expect(await status(notFound)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 128, reason: 'StartError' });

    expect((await cri.runtime.version({})).runtimeName).toBe('svc-runtime');
  });

  it('StopPodSandbox kills its containers and RemovePodSandbox removes them', async () => {
    const pod = await runPod();
    const a = await runContainer(pod, 'a', { command: ['sleep', '30'] });
    const b = await runContainer(pod, 'b', { command: ['sleep', '30'] });
    const pids = [(await status(a)).pid, (await status(b)).pid];
    await cri.runtime.stopPodSandbox({ podSandboxId: pod });
    for (const id of [a, b]) expect(await status(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137 });
    for (const pid of pids) expect(alive(pid)).toBe(false);
    await cri.runtime.removePodSandbox({ podSandboxId: pod });
    expect((await cri.runtime.listContainers({ filter: { podSandboxId: pod } })).containers).toEqual([]);
  });

  it('ReopenContainerLog makes the container log to a fresh file after rotation', async () => {
    const pod = await runPod();
    const id = await runContainer(pod, 'ticker', { command: ['sh', '-c', 'while :; do echo tick; sleep 0.05; done'] });
    const { logPath } = await status(id);
    await waitFor('a first line', () => readCriLog(logPath).length > 0);
    renameSync(logPath, `${logPath}.1`);
    await cri.runtime.reopenContainerLog({ containerId: id });
    await waitFor('lines in the new file', () => readCriLog(logPath).length > 0);
    await cri.runtime.stopContainer({ containerId: id, timeout: 0 });
    expect((await codeOf(cri.runtime.reopenContainerLog({ containerId: id }))).code).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
  });

  it('a restarted server finds its containers again: running ones keep their pid and logging, ended ones show their exit code', async () => {
    const pod = await runPod();
    const ticker = await runContainer(pod, 'ticker', {
      command: ['sh', '-c', 'i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.1; done'],
    });
    const quitter = await runContainer(pod, 'quitter', { command: ['sh', '-c', 'sleep 1; exit 7'] });
    const orphan = await runContainer(pod, 'orphan', { command: ['sleep', '30'] });
    const before = await status(ticker);
    const orphanPid = (await status(orphan)).pid;
    const orphanShim = (
      JSON.parse((await cri.runtime.containerStatus({ containerId: orphan, verbose: true })).info.info!) as {
        shimPid: number;
      }
    ).shimPid;

    cri.close();
    await server.close();
    const down = connectCri(socket);
    expect((await codeOf(down.runtime.version({}))).code).toBe(GrpcStatus.UNAVAILABLE);
    down.close();
    // While no server runs: the ticker logs on, the quitter exits, the orphan loses its shim (so no exit code).
    const linesAtStop = readCriLog(before.logPath).length;
    process.kill(orphanShim, 'SIGKILL');
    process.kill(-orphanPid, 'SIGKILL');
    await waitFor('the ticker to log on', () => readCriLog(before.logPath).length > linesAtStop);
    // What the restarted server reads: the quitter's shim has recorded its exit (containers/<id>/exit.json)
    // and the orphan's shim is gone.
    await waitFor('the quitter to exit', () => existsSync(join(rootDir, 'containers', quitter, 'exit.json')));
    await waitFor("the orphan's shim to be gone", () => !alive(orphanShim));

    server = await startRuntimeServer({ socket, rootDir, logger: silentLogger });
    cri = connectCri(socket);
    const after = await status(ticker);
    expect(after).toMatchObject({ state: 'CONTAINER_RUNNING', pid: before.pid, startedAt: before.startedAt });
    expect(alive(before.pid)).toBe(true);
    const n = readCriLog(before.logPath).length;
    await waitFor('more ticks', () => readCriLog(before.logPath).length > n);
    expect(
      readCriLog(before.logPath)
        .map((l) => l.text)
        .slice(0, 3),
    ).toEqual(['tick 0', 'tick 1', 'tick 2']);
    expect(await status(quitter)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 7, reason: 'Error' });
    expect(await status(orphan)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 255 });

    await cri.runtime.stopContainer({ containerId: ticker, timeout: 5 });
    expect(await status(ticker)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 143 });
    expect(alive(before.pid)).toBe(false);
  });

  it('refuses to take over a socket another server is serving', async () => {
    await expect(startRuntimeServer({ socket, rootDir: join(dir, 'other'), logger: silentLogger })).rejects.toThrow(
      /served by another process/,
    );
    expect((await cri.runtime.version({})).runtimeName).toBe('svc-runtime');
  });
});
