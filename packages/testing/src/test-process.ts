import { spawn, type ChildProcess } from 'node:child_process';

/** A process started by a test: its combined stdout/stderr so far and its exit. */
export interface TestProcess {
  name: string;
  child: ChildProcess;
  log: { text: string };
  exited: Promise<number | null>;
}

/**
 * Starts `cmd args` (`node` means this Node binary) in this process's environment, collecting
 * its output in `log.text`. The caller kills it (tests do in afterAll).
 */
export function spawnProcess(name: string, cmd: string, args: string[]): TestProcess {
  const child = spawn(cmd === 'node' ? process.execPath : cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  const log = { text: '' };
  child.stdout?.on('data', (d: Buffer) => {
    log.text += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    log.text += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { name, child, log, exited };
}
