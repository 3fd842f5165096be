import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { RotatingFileWriter } from './log-file.js';

const MB = 1024 * 1024;
/** 100 KiB a line: the eleventh write passes 1 MB. */
const line = (i: number): string => `${String(i).padStart(8, '0')}${'x'.repeat(100 * 1024 - 9)}\n`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A clock that moves one second per call (each rotation gets its own name). */
function clock(start = Date.UTC(2024, 0, 2, 3, 4, 5, 678)): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

describe('RotatingFileWriter', () => {
  it('creates the file 0600 (and its directory) and appends to an existing one', async () => {
    const path = join(dir, 'sub', 'audit.log');
    const w = new RotatingFileWriter({ path, maxSizeMb: 1, maxBackups: 0, maxAgeDays: 0, compress: false });
    w.write('a\n');
    await w.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const again = new RotatingFileWriter({ path, maxSizeMb: 1, maxBackups: 0, maxAgeDays: 0, compress: false });
    again.write('b\n');
    await again.close();
    expect(await readFile(path, 'utf8')).toBe('a\nb\n');
  });

  it('rotates before a write would pass the maximum size, to <name>-<UTC time>.<ext>', async () => {
    const path = join(dir, 'audit.log');
    const w = new RotatingFileWriter({
      path,
      maxSizeMb: 1,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
      now: clock(),
    });
    for (let i = 0; i < 25; i++) w.write(line(i));
    await w.close();
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(['audit-2024-01-02T03-04-06.678.log', 'audit-2024-01-02T03-04-07.678.log', 'audit.log']);
    for (const f of files) expect((await stat(join(dir, f))).size).toBeLessThanOrEqual(MB);
    const all = (
      await Promise.all(
        files
          .slice(0, 2)
          .concat('audit.log')
          .map((f) => readFile(join(dir, f), 'utf8')),
      )
    ).join('');
    expect(
      all
        .split('\n')
        .filter(Boolean)
        .map((l) => Number(l.slice(0, 8))),
    ).toEqual([...Array(25).keys()]);
  });

  it('keeps maxBackups rotated files, newest first', async () => {
    const path = join(dir, 'audit.log');
    const w = new RotatingFileWriter({
      path,
      maxSizeMb: 1,
      maxBackups: 2,
      maxAgeDays: 0,
      compress: false,
      now: clock(),
    });
    for (let i = 0; i < 50; i++) w.write(line(i));
    await w.close();
    const files = (await readdir(dir)).sort();
    expect(files).toHaveLength(3);
    expect(files[0]).toBe('audit-2024-01-02T03-04-08.678.log');
    expect(files[1]).toBe('audit-2024-01-02T03-04-09.678.log');
  });

  it('deletes rotated files older than maxAge days (by the time in their name), leaving other files alone', async () => {
    const path = join(dir, 'audit.log');
    await writeFile(join(dir, 'audit-2020-01-01T00-00-00.000.log'), 'old\n');
    await writeFile(join(dir, 'audit-notatime.log'), 'keep\n');
    await writeFile(join(dir, 'other.txt'), 'keep\n');
    const now = Date.UTC(2024, 0, 10);
    const w = new RotatingFileWriter({
      path,
      maxSizeMb: 1,
      maxBackups: 0,
      maxAgeDays: 3,
      compress: false,
      now: clock(now),
    });
    for (let i = 0; i < 11; i++) w.write(line(i));
    await w.close();
    expect((await readdir(dir)).sort()).toEqual([
      'audit-2024-01-10T00-00-01.000.log',
      'audit-notatime.log',
      'audit.log',
      'other.txt',
    ]);
  });

  it('gzips rotated files when compress is set', async () => {
    const path = join(dir, 'audit.log');
    const w = new RotatingFileWriter({
      path,
      maxSizeMb: 1,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: true,
      now: clock(),
    });
    for (let i = 0; i < 11; i++) w.write(line(i));
    await w.close();
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(['audit-2024-01-02T03-04-06.678.log.gz', 'audit.log']);
    const text = gunzipSync(await readFile(join(dir, files[0] ?? ''))).toString('utf8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(10);
  });

  it('refuses a single write larger than the maximum', async () => {
    const w = new RotatingFileWriter({
      path: join(dir, 'a.log'),
      maxSizeMb: 1,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
    });
    expect(() => w.write('x'.repeat(MB + 1))).toThrow(`write length ${MB + 1} exceeds maximum file size ${MB}`);
    await w.close();
  });
});
