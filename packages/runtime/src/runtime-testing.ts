// Test helpers for svc-runtime (not built into dist).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** SIGKILLs every container process group and shim recorded under `rootDir` (test cleanup). */
export function killContainersUnder(rootDir: string): void {
  let ids: string[];
  try {
    ids = readdirSync(join(rootDir, 'containers'));
  } catch {
    return;
  }
  for (const id of ids) {
    try {
      const s = JSON.parse(readFileSync(join(rootDir, 'containers', id, 'started.json'), 'utf8')) as {
        pid: number;
        shimPid: number;
      };
      for (const pid of [-s.pid, s.shimPid]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    } catch {
      // never started
    }
  }
}

export interface CriLogLine {
  time: string;
  stream: string;
  tag: string;
  text: string;
}

/** The entries of a CRI-format log file (none if it does not exist). */
export function readCriLog(file: string): CriLogLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(l);
      if (!m) throw new Error(`not a CRI log line: ${JSON.stringify(l)}`);
      return { time: m[1]!, stream: m[2]!, tag: m[3]!, text: m[4]! };
    });
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
