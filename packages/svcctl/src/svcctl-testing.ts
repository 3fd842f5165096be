/**
 * Test helpers: svcctl run in the test's process against a real API server (started by
 * @svc/testing), and stock kubectl against the same server for comparisons.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import {
  startKubectlEnv,
  uniqueName,
  type KubectlEnv,
  type KubectlResult,
  type TestApiServerOptions,
} from '@svc/testing';
import { runSvcctl } from './main.js';
import type { Terminal } from './io.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Called with each piece of standard output as it is written (watches). */
  onOut?: (s: string) => void;
  cwd?: string;
  isTerminal?: boolean;
  /** The terminal standard input stands for (`exec -t`). */
  terminal?: Terminal;
}

/** Runs svcctl in this process with `env` (KUBECONFIG...) and captures its output. */
export async function svcctl(args: string[], o: RunOptions = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runSvcctl(args, {
    out: (s) => {
      stdout += s;
      o.onOut?.(s);
    },
    err: (s) => {
      stderr += s;
    },
    readStdin: () => Promise.resolve(o.stdin ?? ''),
    env: { PATH: process.env.PATH, ...o.env },
    isTerminal: o.isTerminal ?? false,
    signal: o.signal,
    cwd: o.cwd,
    terminal: o.terminal,
  });
  return { code, stdout, stderr };
}

export interface SvcctlEnv {
  kube: KubectlEnv;
  home: string;
  /** svcctl against the server as its admin. */
  run(args: string[], o?: RunOptions): Promise<RunResult>;
  /** Like `run`, but throws unless it exits 0. */
  ok(args: string[], o?: RunOptions): Promise<RunResult>;
  /** Stock kubectl against the same server. */
  kubectl(args: string[], o?: { stdin?: string }): Promise<KubectlResult>;
  /** Writes a YAML manifest (one document per object) and returns its path. */
  manifest(...objs: unknown[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startSvcctlEnv(o: TestApiServerOptions = {}): Promise<SvcctlEnv> {
  const kube = await startKubectlEnv(o);
  const home = await mkdtemp(join(tmpdir(), 'svcctl-home-'));
  const env = { KUBECONFIG: kube.server.svcconfigPath, HOME: home };
  const run = (args: string[], ro: RunOptions = {}): Promise<RunResult> =>
    svcctl(args, { ...ro, env: { ...env, ...ro.env } });
  return {
    kube,
    home,
    run,
    ok: async (args, ro) => {
      const r = await run(args, ro);
      if (r.code !== 0)
        throw new Error(`svcctl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r;
    },
    kubectl: (args, ko) => kube.run(args, ko),
    manifest: async (...objs) => {
      const file = join(home, `${uniqueName('manifest')}.yaml`);
      await writeFile(file, objs.map((x) => YAML.stringify(x)).join('---\n'));
      return file;
    },
    stop: async () => {
      await kube.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

const AGE = /\b(?:(\d+)m)?(\d+)s\b/g;

/** `a` and `b` are equal, but for ages in seconds that differ by at most one second. */
export function sameButTick(a: string, b: string): boolean {
  if (a === b) return true;
  // A tick may change an age's width (9s, 10s) and so the columns' padding.
  const skeleton = (s: string): string => s.replace(AGE, 'AGE').replace(/ +/g, ' ');
  if (skeleton(a) !== skeleton(b)) return false;
  const seconds = (s: string): number[] => [...s.matchAll(AGE)].map((m) => Number(m[1] ?? 0) * 60 + Number(m[2]));
  const sa = seconds(a);
  const sb = seconds(b);
  return sa.length === sb.length && sa.every((x, i) => Math.abs(x - (sb[i] ?? NaN)) <= 1);
}

/**
 * Runs the same command line through svcctl and kubectl and expects the same exit code and
 * output; ages printed by the server may tick between the two runs, so a differing pair is
 * run again (up to three times), and ages of seconds (`4s`, `2m3s`) may differ by one second
 * (the two clients start at different speeds, and under load every try straddled a tick).
 * `transform` normalises outputs first.
 */
export async function expectSameAsKubectl(
  env: SvcctlEnv,
  args: string[],
  o: { transform?: (s: string) => string; stdin?: string } = {},
): Promise<RunResult> {
  const t = o.transform ?? ((s: string) => s);
  let last: { ours: RunResult; theirs: KubectlResult } | undefined;
  for (let i = 0; i < 3; i++) {
    const [ours, theirs] = await Promise.all([
      env.run(args, { stdin: o.stdin }),
      env.kubectl(args, { stdin: o.stdin }),
    ]);
    last = { ours, theirs };
    if (
      ours.code === theirs.code &&
      sameButTick(t(ours.stdout), t(theirs.stdout)) &&
      t(ours.stderr.replace(/svcctl/g, 'kubectl')) === t(theirs.stderr)
    ) {
      return ours;
    }
  }
  const l = last as { ours: RunResult; theirs: KubectlResult };
  expect({
    args,
    code: l.ours.code,
    stdout: t(l.ours.stdout),
    stderr: t(l.ours.stderr.replace(/svcctl/g, 'kubectl')),
  }).toEqual({
    args,
    code: l.theirs.code,
    stdout: t(l.theirs.stdout),
    stderr: t(l.theirs.stderr),
  });
  return l.ours;
}
