import { closeSync, fstatSync, mkdirSync, openSync, renameSync, existsSync, writeSync, constants } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { createReadStream, createWriteStream } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from '@svc/component-base';

/** Where log lines go: written synchronously (a failed write throws), closed at shutdown. */
export interface LineWriter {
  write(text: string): void;
  close(): Promise<void>;
}

/** `--audit-log-path=-`: standard output. */
export function stdoutWriter(): LineWriter {
  return {
    write: (text) => {
      process.stdout.write(text);
    },
    close: () => Promise.resolve(),
  };
}

export interface RotationOptions {
  path: string;
  /** `--audit-log-maxsize` in megabytes; 0 means Kubernetes' log library default, 100. */
  maxSizeMb: number;
  /** `--audit-log-maxbackup`: rotated files kept; 0 keeps all. */
  maxBackups: number;
  /** `--audit-log-maxage`: days rotated files are kept, by the time in their name; 0 keeps them. */
  maxAgeDays: number;
  /** `--audit-log-compress`: gzip rotated files. */
  compress: boolean;
  log?: Logger;
  now?: () => Date;
}

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
const GZ = '.gz';

/**
 * The audit log file with the rotation Kubernetes gets from its log library (lumberjack): a
 * write that would take the file past its maximum size first renames it to
 * `<name>-<UTC time>.<ext>` (time as `2006-01-02T15-04-05.000`) and starts a new file; then, in
 * the background, rotated files beyond `maxBackups` or older than `maxAgeDays` are deleted and
 * the rest gzipped when `compress` is set. A single write larger than the maximum fails.
 */
export class RotatingFileWriter implements LineWriter {
  private fd?: number;
  private size = 0;
  private readonly max: number;
  private readonly now: () => Date;
  private mill: Promise<void> = Promise.resolve();
  private millAgain = false;
  private milling = false;

  constructor(private readonly o: RotationOptions) {
    this.max = (o.maxSizeMb > 0 ? o.maxSizeMb : DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.now = o.now ?? (() => new Date());
    mkdirSync(dirname(o.path), { recursive: true, mode: 0o700 });
    this.open();
  }

  write(text: string): void {
    const len = Buffer.byteLength(text);
    if (len > this.max) throw new Error(`write length ${len} exceeds maximum file size ${this.max}`);
    if (this.fd === undefined) this.open();
    if (this.size + len > this.max) this.rotate();
    writeSync(this.fd as number, text);
    this.size += len;
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    await this.mill;
  }

  /** Opens the file for appending (created 0600 when missing). */
  private open(): void {
    this.fd = openSync(this.o.path, constants.O_CREAT | constants.O_APPEND | constants.O_WRONLY, 0o600);
    this.size = fstatSync(this.fd).size;
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    renameSync(this.o.path, this.backupName());
    this.open();
    this.scheduleMill();
  }

  /** A rotated file's name; a later millisecond when that name is taken. */
  private backupName(): string {
    const dir = dirname(this.o.path);
    const ext = extname(this.o.path);
    const prefix = basename(this.o.path, ext);
    for (let t = this.now().getTime(); ; t++) {
      const name = join(dir, `${prefix}-${backupTime(new Date(t))}${ext}`);
      if (!existsSync(name) && !existsSync(name + GZ)) return name;
    }
  }

  private scheduleMill(): void {
    if (this.milling) {
      this.millAgain = true;
      return;
    }
    this.milling = true;
    this.mill = (async () => {
      do {
        this.millAgain = false;
        await this.millOnce().catch((e: unknown) =>
          this.o.log?.error('audit log rotation cleanup failed', { path: this.o.path, error: String(e) }),
        );
      } while (this.millAgain);
      this.milling = false;
    })();
  }

  /** Removes rotated files beyond the limits, then compresses the rest (lumberjack's mill). */
  private async millOnce(): Promise<void> {
    const { maxBackups, maxAgeDays, compress } = this.o;
    if (maxBackups === 0 && maxAgeDays === 0 && !compress) return;
    let files = await this.rotatedFiles();
    const remove: RotatedFile[] = [];
    if (maxBackups > 0 && maxBackups < files.length) {
      const kept = new Set<string>();
      const remaining: RotatedFile[] = [];
      for (const f of files) {
        kept.add(f.name.endsWith(GZ) ? f.name.slice(0, -GZ.length) : f.name);
        (kept.size > maxBackups ? remove : remaining).push(f);
      }
      files = remaining;
    }
    if (maxAgeDays > 0) {
      const cutoff = this.now().getTime() - maxAgeDays * 24 * 3600_000;
      const remaining: RotatedFile[] = [];
      for (const f of files) (f.time < cutoff ? remove : remaining).push(f);
      files = remaining;
    }
    const dir = dirname(this.o.path);
    for (const f of remove) await rm(join(dir, f.name), { force: true });
    if (!compress) return;
    for (const f of files) {
      if (f.name.endsWith(GZ)) continue;
      const src = join(dir, f.name);
      await pipeline(createReadStream(src), createGzip(), createWriteStream(src + GZ, { mode: 0o600 }));
      await rm(src, { force: true });
    }
  }

  /** The rotated files of this log, newest first. */
  private async rotatedFiles(): Promise<RotatedFile[]> {
    const ext = extname(this.o.path);
    const prefix = `${basename(this.o.path, ext)}-`;
    const out: RotatedFile[] = [];
    for (const name of await readdir(dirname(this.o.path))) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      const stamp = rest.endsWith(ext + GZ)
        ? rest.slice(0, rest.length - ext.length - GZ.length)
        : rest.endsWith(ext)
          ? rest.slice(0, rest.length - ext.length)
          : undefined;
      const time = stamp === undefined ? NaN : parseBackupTime(stamp);
      if (!Number.isNaN(time)) out.push({ name, time });
    }
    return out.sort((a, b) => b.time - a.time);
  }
}

interface RotatedFile {
  name: string;
  time: number;
}

/** `2006-01-02T15-04-05.000` in UTC. */
function backupTime(d: Date): string {
  return d.toISOString().slice(0, 23).replace(/:/g, '-');
}

function parseBackupTime(s: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(s);
  if (!m) return NaN;
  return Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
}
