// The svc-runtime binary as a process: --help, flag errors (exit 2, one line), serving on
// --socket, SIGTERM → exit 0 with containers left running, and a restart over a stale socket
// (after SIGKILL) that finds them again.
// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-runtime.js.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connectCri, type CriClient } from '../index.js';
import { waitFor } from '@svc/testing';
import { alive, killContainersUnder } from '../runtime-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-runtime.js');

interface Run {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

describe('svc-runtime binary', () => {
  let dir: string;
  const runs: Run[] = [];
  const clients: CriClient[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-runtime-bin-'));
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const r of runs) r.child.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
    killContainersUnder(join(dir, 'root'));
    rmSync(dir, { recursive: true, force: true });
  });

  function start(args: string[]): Run {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    child.stdout?.on('data', (d: Buffer) => {
      out.stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out.stderr += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const run = { child, out, exited };
    runs.push(run);
    return run;
  }

  it('prints help and exits 0', async () => {
    const r = start(['--help']);
    expect(await r.exited).toBe(0);
    expect(r.out.stdout).toMatch(/Usage: svc-runtime/);
    expect(r.out.stdout).toMatch(/--socket <path>/);
    expect(r.out.stdout).toMatch(/--root-dir <dir>/);
  });

  it.each([
    [['--nope'], /^Error: unknown option '--nope'\n$/],
    [['--pod-ip', 'x'], /^Error: --pod-ip: "x" is not an IP address\n$/],
  ])('exits 2 with one line for %j', async (args, stderr) => {
    const r = start(args);
    expect(await r.exited).toBe(2);
    expect(r.out.stderr).toMatch(stderr);
  });

  it('serves the CRI, and leaves containers running across SIGTERM, SIGKILL and a restart over the stale socket', async () => {
    const socket = join(dir, 'run', 'cri.sock');
    const args = [
      '--socket',
      socket,
      '--root-dir',
      join(dir, 'root'),
      '--pod-ip',
      '10.1.2.3',
      '--logging-format',
      'json',
    ];
    const connect = (): CriClient => {
      const c = connectCri(`unix://${socket}`);
      clients.push(c);
      return c;
    };
    const serving = (r: Run, c: CriClient) =>
      waitFor('svc-runtime to serve', async () => {
        if (r.child.exitCode !== null) throw new Error(`svc-runtime exited: ${r.out.stderr}`);
        return c.runtime.version({}).then(
          (v) => v,
          () => undefined,
        );
      });

    const first = start(args);
    const cri = connect();
    expect((await serving(first, cri)).runtimeName).toBe('svc-runtime');
    await cri.image.pullImage({ image: { image: 'busybox' } });
    const { podSandboxId } = await cri.runtime.runPodSandbox({
      config: { metadata: { name: 'p', namespace: 'default', uid: 'u' }, logDirectory: join(dir, 'pods') },
    });
    expect((await cri.runtime.podSandboxStatus({ podSandboxId })).status?.network?.ip).toBe('10.1.2.3');
    const { containerId } = await cri.runtime.createContainer({
      podSandboxId,
      config: { metadata: { name: 'sleeper' }, image: { image: 'busybox' }, command: ['sleep', '60'] },
    });
    await cri.runtime.startContainer({ containerId });
    const pidOf = async (c: CriClient) =>
      (JSON.parse((await c.runtime.containerStatus({ containerId, verbose: true })).info.info!) as { pid: number }).pid;
    const pid = await pidOf(cri);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.out.stderr).toMatch(/"msg":"shutting down; containers keep running"/);
    expect(existsSync(socket)).toBe(false);
    expect(alive(pid)).toBe(true);

    const second = start(args);
    const cri2 = connect();
    await serving(second, cri2);
    second.child.kill('SIGKILL');
    await second.exited;
    expect(existsSync(socket)).toBe(true);

    const third = start(args);
    const cri3 = connect();
    await serving(third, cri3);
    expect((await cri3.runtime.containerStatus({ containerId })).status?.state).toBe('CONTAINER_RUNNING');
    expect(await pidOf(cri3)).toBe(pid);
    await cri3.runtime.removePodSandbox({ podSandboxId });
    expect(alive(pid)).toBe(false);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  });
});
