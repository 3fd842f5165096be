import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import type { Logger } from '@svc/component-base';
import { CriError, failedPrecondition, invalidArgument, notFound } from './cri-proto.js';
import {
  createMountPoints,
  enterMountsArgv,
  findsExecutable,
  invalidMount,
  mountedArgv,
  mountNamespaceUnavailable,
} from './container-mounts.js';
import { asUserArgv, containerUser, userUnavailable, type ContainerUser } from './container-user.js';
import { execSync, killGroup } from './exec-sync.js';
import { nowNs, readJson, writeJson } from './json-files.js';
import type { ImageStore } from './image-store.js';
import { attachToOutput } from './streaming/attach.js';
import { execRequest, type CommandRequest } from './streaming/command-streams.js';
import type { StreamServer } from './streaming/stream-server.js';
import type {
  AttachRequest,
  ExecRequest,
  PortForwardRequest,
  StreamingResponse,
  Container,
  ContainerFilter,
  ContainerMetadata,
  ContainerState,
  ContainerStatus,
  ContainerStatusRequest,
  ContainerStatusResponse,
  CreateContainerRequest,
  CreateContainerResponse,
  Empty,
  ExecSyncRequest,
  ExecSyncResponse,
  ImageSpec,
  Labels,
  ListContainersRequest,
  ListContainersResponse,
  ListPodSandboxRequest,
  ListPodSandboxResponse,
  Mount,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxMetadata,
  PodSandboxState,
  PodSandboxStatus,
  PodSandboxStatusRequest,
  PodSandboxStatusResponse,
  RemoveContainerRequest,
  RemovePodSandboxRequest,
  ReopenContainerLogRequest,
  RunPodSandboxRequest,
  RunPodSandboxResponse,
  StartContainerRequest,
  StatusRequest,
  StatusResponse,
  StopContainerRequest,
  StopPodSandboxRequest,
  VersionRequest,
  VersionResponse,
} from './cri-types.js';

/** Written in a container's directory by its mount script once its mounts are made (the shim waits for it). */
const MOUNTED_FILE = 'mounted';
/** The per-container shim (plain JS, shipped beside proto/); see its header for the contract. */
export const SHIM_PATH = fileURLToPath(new URL('../shim/container-shim.mjs', import.meta.url));

export const RUNTIME_NAME = 'svc-runtime';
export const RUNTIME_VERSION = '0.1.0';
export const CRI_API_VERSION = 'v1';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const SHIM_REPORT_MS = 10_000;
const KILL_WAIT_MS = 10_000;
const POLL_MS = 50;
const HAVE_PROC = existsSync('/proc/self/cmdline');

/** A sandbox is only a record: its containers share the node's network, so its IP is the node's. */
interface SandboxRecord {
  id: string;
  metadata: PodSandboxMetadata;
  config: PodSandboxConfig;
  runtimeHandler: string;
  state: PodSandboxState;
  createdAt: number;
  ip: string;
}

interface ContainerExit {
  exitCode: number;
  finishedAt: number;
  reason: string;
  message: string;
}

interface ContainerRecord {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  imageRef: string;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  /** Full host path of the CRI log, '' for none. */
  logPath: string;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** The user its processes run as (`linux.securityContext`); undefined: svc-runtime's own. */
  user?: ContainerUser;
  /** The container's own stdin kept open (fed by attach through its shim), closed after the first attach with `stdinOnce`; `tty` runs it on a terminal. */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  /** Set once started: the main process (leader of its own process group) and its shim. */
  pid?: number;
  shimPid?: number;
  startedAt?: number;
  /** Set once the container is known to have ended (or failed to start); final. */
  exit?: ContainerExit;
}

/** What the shim writes (times are decimal nanosecond strings). */
interface ShimStarted {
  pid: number;
  shimPid: number;
  startedAt: string;
}
interface ShimExit {
  exitCode: number;
  signal: string | null;
  finishedAt: string;
}
type ShimReport = { pid: number; shimPid: number; startedAt: string } | { error: string };

export interface ProcessRuntimeOptions {
  rootDir: string;
  /** Reported as every sandbox's IP. */
  podIp: string;
  logger: Logger;
  /** Where Exec and PortForward streams are served; without it they fail UNAVAILABLE. */
  streams?: StreamServer;
}

function pick(r: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }) {
  return { stdin: r.stdin, stdout: r.stdout, stderr: r.stderr, tty: r.tty };
}

/**
 * The CRI RuntimeService over local processes. State lives under `rootDir` as JSON
 * (`sandboxes/<id>.json`, `containers/<id>/container.json`) and is reloaded by a new
 * instance; each started container runs under its own detached shim, which owns its log
 * and records its exit, so containers neither stop nor lose output when svc-runtime stops.
 * A container's state is derived on every read from what its shim wrote (started.json,
 * exit.json) and whether the shim is alive: RUNNING until exit.json appears; a shim gone
 * without exit.json means EXITED with exit code 255 (unknown).
 *
 * Requests arrive decoded with defaults (see cri-types.ts). Errors are `CriError`s with
 * the gRPC code the CRI's users expect: NOT_FOUND for unknown ids (except on the
 * idempotent Remove* calls, which succeed), INVALID_ARGUMENT for bad configs,
 * FAILED_PRECONDITION for a call the current state forbids.
 */
export class ProcessRuntime {
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly starting = new Set<string>();
  private readonly execs = new Set<ChildProcess>();
  private readonly rootDir: string;
  private readonly podIp: string;
  private readonly logger: Logger;
  private readonly streamServer?: StreamServer;

  constructor(
    private readonly images: ImageStore,
    opts: ProcessRuntimeOptions,
  ) {
    this.rootDir = opts.rootDir;
    this.podIp = opts.podIp;
    this.logger = opts.logger;
    this.streamServer = opts.streams;
    this.load();
  }

  /** Kills ExecSync commands in flight; containers keep running. */
  close(): void {
    for (const child of this.execs) killGroup(child, 'SIGKILL');
  }

  async version(_req: VersionRequest): Promise<VersionResponse> {
    return {
      version: RUNTIME_VERSION,
      runtimeName: RUNTIME_NAME,
      runtimeVersion: RUNTIME_VERSION,
      runtimeApiVersion: CRI_API_VERSION,
    };
  }

  async status(req: StatusRequest): Promise<StatusResponse> {
    const conditions = ['RuntimeReady', 'NetworkReady'].map((type) => ({
      type,
      status: true,
      reason: '',
      message: '',
    }));
    const info: Labels = req.verbose
      ? { config: JSON.stringify({ rootDir: this.rootDir, podIp: this.podIp, runtimeName: RUNTIME_NAME }) }
      : {};
    return { status: { conditions }, info };
  }

  // --- sandboxes ---

  async runPodSandbox(req: RunPodSandboxRequest): Promise<RunPodSandboxResponse> {
    const config = req.config;
    const m = config?.metadata;
    if (!config || !m?.name) throw invalidArgument('pod sandbox config with metadata.name is required');
    if (req.runtimeHandler)
      throw invalidArgument(
        `runtime handler ${JSON.stringify(req.runtimeHandler)} is not supported: svc-runtime has only the default handler ("")`,
      );
    for (const s of this.sandboxes.values()) {
      const o = s.metadata;
      if (o.name === m.name && o.namespace === m.namespace && o.uid === m.uid && o.attempt === m.attempt) {
        throw new CriError(
          status.ALREADY_EXISTS,
          `pod sandbox ${m.namespace}/${m.name} (uid ${m.uid}, attempt ${m.attempt}) already exists as ${s.id}`,
        );
      }
    }
    const s: SandboxRecord = {
      id: newId(),
      metadata: m,
      config,
      runtimeHandler: '',
      state: 'SANDBOX_READY',
      createdAt: nowNs(),
      ip: this.podIp,
    };
    this.sandboxes.set(s.id, s);
    this.saveSandbox(s);
    this.logger.v(2).info('pod sandbox ready', { podSandboxId: s.id, pod: `${m.namespace}/${m.name}` });
    return { podSandboxId: s.id };
  }

  /** Kills the sandbox's running containers at once (the caller stopped them gracefully first, if it wanted). */
  async stopPodSandbox(req: StopPodSandboxRequest): Promise<Empty> {
    const s = this.sandbox(req.podSandboxId);
    await Promise.all(this.containersOf(s.id).map((c) => this.stopContainer({ containerId: c.id, timeout: 0 })));
    if (s.state !== 'SANDBOX_NOTREADY') {
      s.state = 'SANDBOX_NOTREADY';
      this.saveSandbox(s);
    }
    return {};
  }

  async removePodSandbox(req: RemovePodSandboxRequest): Promise<Empty> {
    const s = this.sandboxes.get(req.podSandboxId);
    if (!s) return {};
    await Promise.all(this.containersOf(s.id).map((c) => this.removeContainer({ containerId: c.id })));
    this.sandboxes.delete(s.id);
    rmSync(this.sandboxFile(s.id), { force: true });
    return {};
  }

  async podSandboxStatus(req: PodSandboxStatusRequest): Promise<PodSandboxStatusResponse> {
    const s = this.sandbox(req.podSandboxId);
    const status: PodSandboxStatus = {
      ...this.toPodSandbox(s),
      network: { ip: s.ip, additionalIps: [] },
    };
    const info: Labels = req.verbose
      ? { info: JSON.stringify({ config: s.config, logDirectory: s.config.logDirectory }) }
      : {};
    return { status, info, containersStatuses: [], timestamp: nowNs() };
  }

  async listPodSandbox(req: ListPodSandboxRequest): Promise<ListPodSandboxResponse> {
    const items = [...this.sandboxes.values()]
      .map((s) => this.toPodSandbox(s))
      .filter((s) => matchesSandbox(s, req.filter));
    return { items: items.sort((a, b) => a.createdAt - b.createdAt) };
  }

  // --- containers ---

  async createContainer(req: CreateContainerRequest): Promise<CreateContainerResponse> {
    const s = this.sandbox(req.podSandboxId);
    if (s.state !== 'SANDBOX_READY') throw failedPrecondition(`pod sandbox ${s.id} is not ready`);
    const config = req.config;
    const m = config?.metadata;
    if (!config || !m?.name) throw invalidArgument('container config with metadata.name is required');
    for (const c of this.containersOf(s.id)) {
      if (c.metadata.name === m.name && c.metadata.attempt === m.attempt) {
        throw new CriError(
          status.ALREADY_EXISTS,
          `container ${m.name} (attempt ${m.attempt}) already exists in pod sandbox ${s.id} as ${c.id}`,
        );
      }
    }
    const imageName = config.image?.image ?? '';
    if (!imageName) throw invalidArgument(`container ${m.name}: image is required`);
    const image = this.images.find(imageName);
    if (!image) throw notFound(`image ${JSON.stringify(imageName)} (pull it first)`);
    // Kubernetes' entrypoint rule: command replaces the image's entrypoint and args follow it.
    // Images here are names only, with an empty entrypoint (as busybox's): args alone are the
    // command line (`kubectl run x --image=busybox -- sleep 60`), and one of the two is required.
    if (config.command.length === 0 && config.args.length === 0) {
      throw invalidArgument(
        `container ${m.name} has no command: image ${JSON.stringify(imageName)} has no entrypoint in svc-runtime, so the container must set command or args`,
      );
    }
    if (config.workingDir && !(isAbsolute(config.workingDir) && isDirectory(config.workingDir))) {
      throw invalidArgument(
        `container ${m.name}: working directory ${JSON.stringify(config.workingDir)} does not exist (svc-runtime runs containers on the host and does not create it)`,
      );
    }
    for (const mount of config.mounts) {
      const bad = invalidMount(mount);
      if (bad) throw invalidArgument(`container ${m.name}: ${bad}`);
    }
    let user: ContainerUser | undefined;
    try {
      user = containerUser(config.linux?.securityContext);
    } catch (e) {
      throw invalidArgument(`container ${m.name}: ${(e as Error).message}`);
    }
    const id = newId();
    const dir = this.containerDir(id);
    // Without a working directory a container runs in a scratch directory of its own.
    const cwd = config.workingDir || join(dir, 'work');
    mkdirSync(cwd, { recursive: true });
    const env: Record<string, string> = {
      PATH: process.env.PATH || DEFAULT_PATH,
      HOSTNAME: s.config.hostname || s.metadata.name,
    };
    for (const { key, value } of config.envs) if (key) env[key] = value;
    const c: ContainerRecord = {
      id,
      podSandboxId: s.id,
      metadata: m,
      image: { ...emptyImageSpec(), ...config.image, image: imageName },
      imageRef: image.id,
      createdAt: nowNs(),
      labels: config.labels,
      annotations: config.annotations,
      mounts: config.mounts,
      logPath: s.config.logDirectory && config.logPath ? join(s.config.logDirectory, config.logPath) : '',
      argv: [...config.command, ...config.args],
      env,
      cwd,
      user,
      stdin: config.stdin,
      stdinOnce: config.stdinOnce,
      tty: config.tty,
    };
    this.containers.set(id, c);
    this.saveContainer(c);
    this.logger.v(2).info('container created', { containerId: id, name: m.name, podSandboxId: s.id });
    return { containerId: id };
  }

  async startContainer(req: StartContainerRequest): Promise<Empty> {
    const c = this.container(req.containerId);
    const state = this.refresh(c);
    if (state !== 'CONTAINER_CREATED' || this.starting.has(c.id))
      throw failedPrecondition(`container ${c.id} is ${stateWord(state)}, not created`);
    const name = c.metadata.name;
    if (!isDirectory(c.cwd)) {
      this.startFailed(c, `working directory ${JSON.stringify(c.cwd)} does not exist`);
    }
    this.starting.add(c.id);
    try {
      const dir = this.containerDir(c.id);
      const { argv, readyFile } = this.startArgv(c, dir);
      writeJson(join(dir, 'process.json'), {
        argv,
        readyFile,
        env: c.env,
        cwd: c.cwd,
        logPath: c.logPath || null,
        stdin: c.stdin === true,
        stdinOnce: c.stdinOnce === true,
        tty: c.tty === true,
      });
      const report = await spawnShim(dir);
      if ('error' in report) this.startFailed(c, report.error);
      c.pid = report.pid;
      c.shimPid = report.shimPid;
      c.startedAt = Number(report.startedAt);
      this.saveContainer(c);
      this.logger.v(2).info('container started', { containerId: c.id, name, pid: c.pid });
      return {};
    } finally {
      this.starting.delete(c.id);
    }
  }

  /**
   * The command line the shim starts: as the container's user (see container-user.ts), in a
   * mount namespace of its own when it has mounts (see container-mounts.ts), whose script writes
   * a line into `readyFile` (in the container's directory `dir`) once they are made; null
   * without mounts. Without mounts, a command that cannot be found is started as it is, so that
   * the shim reports it.
   */
  private startArgv(c: ContainerRecord, dir: string): { argv: string[]; readyFile: string | null } {
    const userWhy = c.user && userUnavailable(c.user);
    if (userWhy) this.startFailed(c, userWhy);
    if (c.mounts.length === 0) {
      const found = findsExecutable({ root: '', argv: c.argv, cwd: c.cwd, env: c.env });
      return { argv: found ? asUserArgv(c.user, c.argv) : c.argv, readyFile: null };
    }
    const why = mountNamespaceUnavailable();
    if (why) this.startFailed(c, why);
    try {
      createMountPoints(c.mounts);
    } catch (e) {
      this.startFailed(c, `cannot create a mount point: ${(e as Error).message}`);
    }
    const readyFile = join(dir, MOUNTED_FILE);
    return {
      argv: mountedArgv({ mounts: c.mounts, argv: asUserArgv(c.user, c.argv), cwd: c.cwd, readyFile }),
      readyFile,
    };
  }

  /**
   * An exec's command line: as the container's user, entering the container's mount namespace
   * when it has one. A command that cannot be found there is started as it is, so that its
   * start reports it as kubelet's runtimes do (`exec: "x": executable file not found in $PATH`).
   */
  private execArgv(c: ContainerRecord, cmd: string[]): string[] {
    const pid = c.mounts.length > 0 ? c.pid : undefined;
    if (pid === undefined && !c.user) return cmd;
    const root = pid === undefined ? '' : `/proc/${pid}/root`;
    if (!findsExecutable({ root, argv: cmd, cwd: c.cwd, env: c.env })) return cmd;
    const argv = asUserArgv(c.user, cmd);
    return pid === undefined ? argv : enterMountsArgv({ pid, argv, cwd: c.cwd });
  }

  /** SIGTERM to the container's process group, SIGKILL after `timeout` seconds (at once for 0); returns once it has exited. */
  async stopContainer(req: StopContainerRequest): Promise<Empty> {
    const c = this.container(req.containerId);
    if (this.refresh(c) !== 'CONTAINER_RUNNING' || c.pid === undefined) return {};
    if (req.timeout > 0) {
      killGroup(c.pid, 'SIGTERM');
      if (await this.waitExited(c, req.timeout * 1000)) return {};
    }
    killGroup(c.pid, 'SIGKILL');
    if (!(await this.waitExited(c, KILL_WAIT_MS)))
      throw new CriError(status.UNKNOWN, `container ${c.id} did not exit ${KILL_WAIT_MS / 1000}s after SIGKILL`);
    return {};
  }

  /** Kills the container if it runs, then forgets it; its log file stays (the caller owns the log directory). */
  async removeContainer(req: RemoveContainerRequest): Promise<Empty> {
    const c = this.containers.get(req.containerId);
    if (!c) return {};
    await this.stopContainer({ containerId: c.id, timeout: 0 });
    this.containers.delete(c.id);
    rmSync(this.containerDir(c.id), { recursive: true, force: true });
    return {};
  }

  async listContainers(req: ListContainersRequest): Promise<ListContainersResponse> {
    const containers = [...this.containers.values()]
      .map((c) => this.toContainer(c))
      .filter((c) => matchesContainer(c, req.filter));
    return { containers: containers.sort((a, b) => a.createdAt - b.createdAt) };
  }

  async containerStatus(req: ContainerStatusRequest): Promise<ContainerStatusResponse> {
    const c = this.container(req.containerId);
    const state = this.refresh(c);
    const status: ContainerStatus = {
      id: c.id,
      metadata: c.metadata,
      state,
      createdAt: c.createdAt,
      startedAt: c.startedAt ?? 0,
      finishedAt: c.exit?.finishedAt ?? 0,
      exitCode: c.exit?.exitCode ?? 0,
      image: c.image,
      imageRef: c.imageRef,
      reason: c.exit?.reason ?? '',
      message: c.exit?.message ?? '',
      labels: c.labels,
      annotations: c.annotations,
      mounts: c.mounts,
      logPath: c.logPath,
      imageId: c.imageRef,
    };
    const info: Labels = req.verbose
      ? {
          info: JSON.stringify({
            pid: c.pid ?? 0,
            shimPid: c.shimPid ?? 0,
            podSandboxId: c.podSandboxId,
            argv: c.argv,
            cwd: c.cwd,
            env: c.env,
          }),
        }
      : {};
    return { status, info };
  }

  /** A one-time URL of the streaming server running `cmd` in the container's environment and working directory. */
  async exec(req: ExecRequest): Promise<StreamingResponse> {
    const c = this.container(req.containerId);
    if (this.refresh(c) !== 'CONTAINER_RUNNING') throw failedPrecondition(`container ${c.id} is not running`);
    if (req.cmd.length === 0 || !req.cmd[0]) throw invalidArgument('exec: cmd is required');
    if (!req.stdin && !req.stdout && !req.stderr) throw invalidArgument('one of stdin, stdout, or stderr must be set');
    const request = execRequest({
      argv: this.execArgv(c, req.cmd),
      command: req.cmd,
      cwd: c.cwd,
      env: c.env,
      ...pick(req),
    });
    return { url: this.streams().register({ kind: 'exec', request }) };
  }

  /**
   * A one-time URL of the streaming server attached to the container: its output read from its
   * log (which its shim owns), its stdin (a container with `stdin`) written into the shim's
   * FIFO, its terminal's size (a container with `tty`) into another. As kubelet does, the
   * container's own `tty` decides, not the request's; stdin sent to a container without one is dropped.
   */
  async attach(req: AttachRequest): Promise<StreamingResponse> {
    const c = this.container(req.containerId);
    if (this.refresh(c) !== 'CONTAINER_RUNNING') throw failedPrecondition(`container ${c.id} is not running`);
    if (!req.stdin && !req.stdout && !req.stderr) throw invalidArgument('one of stdin, stdout, or stderr must be set');
    if (!c.logPath) throw failedPrecondition(`container ${c.id} has no log to attach to`);
    const logPath = c.logPath;
    const running = (): boolean => this.refresh(c) === 'CONTAINER_RUNNING';
    const request: CommandRequest = {
      ...pick(req),
      start: (io) =>
        attachToOutput({
          ...io,
          tty: req.tty,
          logPath,
          running,
          stdinPath: req.stdin && c.stdin ? join(this.containerDir(c.id), 'stdin') : undefined,
          resizePath: c.tty ? join(this.containerDir(c.id), 'resize') : undefined,
        }),
    };
    return { url: this.streams().register({ kind: 'attach', request }) };
  }

  /** A one-time URL of the streaming server forwarding to the sandbox's ports (on its localhost: see port-forward.ts). */
  async portForward(req: PortForwardRequest): Promise<StreamingResponse> {
    const s = this.sandbox(req.podSandboxId);
    if (s.state !== 'SANDBOX_READY') throw failedPrecondition(`pod sandbox ${s.id} is not ready`);
    return {
      url: this.streams().register({
        kind: 'portforward',
        target: { sandboxId: s.id, ports: req.port },
      }),
    };
  }

  private streams(): StreamServer {
    if (!this.streamServer) throw new CriError(status.UNAVAILABLE, 'the streaming server is not running');
    return this.streamServer;
  }

  async execSync(req: ExecSyncRequest): Promise<ExecSyncResponse> {
    const c = this.container(req.containerId);
    if (this.refresh(c) !== 'CONTAINER_RUNNING') throw failedPrecondition(`container ${c.id} is not running`);
    if (req.cmd.length === 0 || !req.cmd[0]) throw invalidArgument('exec: cmd is required');
    return execSync({
      argv: this.execArgv(c, req.cmd),
      command: req.cmd,
      cwd: c.cwd,
      env: c.env,
      timeout: req.timeout,
      running: this.execs,
    });
  }

  /** Asks the shim to reopen the log file (after rotation). */
  async reopenContainerLog(req: ReopenContainerLogRequest): Promise<Empty> {
    const c = this.container(req.containerId);
    if (this.refresh(c) !== 'CONTAINER_RUNNING' || c.shimPid === undefined)
      throw failedPrecondition(`container ${c.id} is not running`);
    try {
      process.kill(c.shimPid, 'SIGUSR1');
    } catch (e) {
      throw new CriError(status.UNKNOWN, `cannot signal the shim of container ${c.id}: ${(e as Error).message}`);
    }
    return {};
  }

  // --- state ---

  private load(): void {
    for (const f of listDir(join(this.rootDir, 'sandboxes'))) {
      const s = f.endsWith('.json') ? readJson<SandboxRecord>(join(this.rootDir, 'sandboxes', f)) : undefined;
      if (s?.id) this.sandboxes.set(s.id, s);
    }
    for (const id of listDir(join(this.rootDir, 'containers'))) {
      const c = readJson<ContainerRecord>(join(this.containerDir(id), 'container.json'));
      if (c?.id === id) this.containers.set(id, c);
      else this.logger.warn('ignoring a container directory without a record', { dir: this.containerDir(id) });
    }
    const running = [...this.containers.values()].filter((c) => this.refresh(c) === 'CONTAINER_RUNNING').length;
    this.logger.info('state loaded', {
      rootDir: this.rootDir,
      sandboxes: this.sandboxes.size,
      containers: this.containers.size,
      running,
    });
  }

  /** The container's current state, recording an observed end in its record. */
  private refresh(c: ContainerRecord): ContainerState {
    if (c.exit) return 'CONTAINER_EXITED';
    const dir = this.containerDir(c.id);
    if (c.pid === undefined) {
      // svc-runtime may have stopped between starting the shim and recording its report.
      const started = this.starting.has(c.id) ? undefined : readJson<ShimStarted>(join(dir, 'started.json'));
      if (!started) return 'CONTAINER_CREATED';
      c.pid = started.pid;
      c.shimPid = started.shimPid;
      c.startedAt = Number(started.startedAt);
      this.saveContainer(c);
    }
    const recorded = (): ContainerExit | undefined => {
      const e = readJson<ShimExit>(join(dir, 'exit.json'));
      return (
        e && {
          exitCode: e.exitCode,
          finishedAt: Number(e.finishedAt),
          reason: e.exitCode === 0 ? 'Completed' : 'Error',
          message: '',
        }
      );
    };
    let exit = recorded();
    if (!exit) {
      if (this.shimAlive(c)) return 'CONTAINER_RUNNING';
      exit = recorded() ?? {
        exitCode: 255,
        finishedAt: nowNs(),
        reason: 'Error',
        message: 'the container ended without its shim recording an exit code',
      };
    }
    c.exit = exit;
    this.saveContainer(c);
    return 'CONTAINER_EXITED';
  }

  /** Whether the shim still runs; on Linux its command line must name this container (pids get reused). */
  private shimAlive(c: ContainerRecord): boolean {
    if (!c.shimPid) return false;
    if (HAVE_PROC) {
      try {
        return readFileSync(`/proc/${c.shimPid}/cmdline`, 'utf8').includes(this.containerDir(c.id));
      } catch {
        return false;
      }
    }
    try {
      process.kill(c.shimPid, 0);
      return true;
    } catch {
      return false;
    }
  }

  private async waitExited(c: ContainerRecord, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.refresh(c) !== 'CONTAINER_RUNNING') return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(1, deadline - Date.now()))));
    }
  }

  private startFailed(c: ContainerRecord, why: string): never {
    c.exit = { exitCode: 128, finishedAt: nowNs(), reason: 'StartError', message: why };
    this.saveContainer(c);
    throw new CriError(status.UNKNOWN, `failed to start container ${c.metadata.name} (${c.id}): ${why}`);
  }

  private sandbox(id: string): SandboxRecord {
    const s = this.sandboxes.get(id);
    if (!s) throw notFound(`pod sandbox ${JSON.stringify(id)}`);
    return s;
  }

  private container(id: string): ContainerRecord {
    const c = this.containers.get(id);
    if (!c) throw notFound(`container ${JSON.stringify(id)}`);
    return c;
  }

  private containersOf(sandboxId: string): ContainerRecord[] {
    return [...this.containers.values()].filter((c) => c.podSandboxId === sandboxId);
  }

  private sandboxFile(id: string): string {
    return join(this.rootDir, 'sandboxes', `${id}.json`);
  }

  private containerDir(id: string): string {
    return join(this.rootDir, 'containers', id);
  }

  private saveSandbox(s: SandboxRecord): void {
    writeJson(this.sandboxFile(s.id), s);
  }

  /** Writes the record unless the container was removed meanwhile. */
  private saveContainer(c: ContainerRecord): void {
    if (this.containers.get(c.id) === c) writeJson(join(this.containerDir(c.id), 'container.json'), c);
  }

  private toPodSandbox(s: SandboxRecord): PodSandbox {
    return {
      id: s.id,
      metadata: s.metadata,
      state: s.state,
      createdAt: s.createdAt,
      labels: s.config.labels,
      annotations: s.config.annotations,
      runtimeHandler: s.runtimeHandler,
    };
  }

  private toContainer(c: ContainerRecord): Container {
    return {
      id: c.id,
      podSandboxId: c.podSandboxId,
      metadata: c.metadata,
      image: c.image,
      imageRef: c.imageRef,
      state: this.refresh(c),
      createdAt: c.createdAt,
      labels: c.labels,
      annotations: c.annotations,
      imageId: c.imageRef,
    };
  }
}

/**
 * Starts `node container-shim.mjs <dir>` in its own session and waits for its one-line
 * report. The shim is then left alone: svc-runtime may exit and the container runs on.
 */
function spawnShim(dir: string): Promise<ShimReport> {
  return new Promise((resolve) => {
    const log = openSync(join(dir, 'shim.log'), 'a');
    const child = spawn(process.execPath, [SHIM_PATH, dir], {
      detached: true,
      stdio: ['ignore', 'pipe', log],
      env: { PATH: process.env.PATH ?? DEFAULT_PATH },
    });
    closeSync(log);
    let done = false;
    let text = '';
    const finish = (r: ShimReport): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.unref();
      resolve(r);
    };
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      const started = readJson<ShimStarted>(join(dir, 'started.json'));
      if (started) killGroup(started.pid, 'SIGKILL');
      finish({ error: `the shim did not report within ${SHIM_REPORT_MS / 1000}s; see ${join(dir, 'shim.log')}` });
    }, SHIM_REPORT_MS);
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      try {
        const r = JSON.parse(text.slice(0, nl)) as { pid?: number; startedAt?: string; error?: string };
        finish(
          r.error !== undefined || r.pid === undefined
            ? { error: r.error ?? 'no pid' }
            : { pid: r.pid, shimPid: child.pid ?? 0, startedAt: r.startedAt ?? '0' },
        );
      } catch {
        finish({ error: `unreadable shim report ${JSON.stringify(text.slice(0, nl))}` });
      }
    });
    child.on('error', (e) => finish({ error: `cannot run the shim: ${e.message}` }));
    child.on('close', (code) =>
      finish({ error: `the shim exited (${code}) before the container started; see ${join(dir, 'shim.log')}` }),
    );
  });
}

function newId(): string {
  return randomBytes(32).toString('hex');
}

function emptyImageSpec(): ImageSpec {
  return { image: '', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function stateWord(state: ContainerState): string {
  return state.replace('CONTAINER_', '').toLowerCase();
}

function labelsMatch(labels: Labels, selector: Labels): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** CRI filters: all given fields ANDed; ids match exactly or by prefix (as crictl's short ids). */
export function matchesSandbox(s: PodSandbox, f: PodSandboxFilter | null | undefined): boolean {
  if (!f) return true;
  return (
    (!f.id || s.id.startsWith(f.id)) &&
    (!f.state || s.state === f.state.state) &&
    labelsMatch(s.labels, f.labelSelector ?? {})
  );
}

export function matchesContainer(c: Container, f: ContainerFilter | null | undefined): boolean {
  if (!f) return true;
  return (
    (!f.id || c.id.startsWith(f.id)) &&
    (!f.podSandboxId || c.podSandboxId.startsWith(f.podSandboxId)) &&
    (!f.state || c.state === f.state.state) &&
    labelsMatch(c.labels, f.labelSelector ?? {})
  );
}
