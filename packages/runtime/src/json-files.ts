import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The parsed JSON of `file`, or undefined when it does not exist or is not (yet) complete JSON. */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Replaces `file` atomically (write then rename), so a reader or a crash never sees half a file. */
export function writeJson(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(value, null, 1));
  renameSync(`${file}.tmp`, file);
}

/** Now in nanoseconds since the epoch (millisecond resolution), as CRI timestamps are. */
export const nowNs = (): number => Date.now() * 1e6;
