import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCriLine, readCriLog, type ReadLogOptions } from './container-logs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svclet-logs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const LOG =
  [
    '2024-01-01T00:00:01.000000001Z stdout F first line',
    '2024-01-01T00:00:02.000000000Z stderr F second line',
    'not a cri line at all',
    '2024-01-01T00:00:03.000000000Z stdout P part one, ',
    '2024-01-01T00:00:03.500000000Z stdout P:x part two, ',
    '2024-01-01T00:00:04.000000000Z stdout F part three',
    '2024-01-01T00:00:05.000000000Z stdout F',
    '2024-01-01T00:00:06.000000000Z stdout F last line',
  ].join('\n') + '\n';

async function read(path: string, o: ReadLogOptions = {}): Promise<string> {
  let out = '';
  for await (const chunk of readCriLog(path, o)) out += chunk.toString();
  return out;
}

describe('CRI log files', () => {
  it('parses lines and refuses other formats', () => {
    expect(parseCriLine(Buffer.from('2024-01-01T00:00:01Z stdout F hello world'))).toMatchObject({
      timestamp: '2024-01-01T00:00:01Z',
      partial: false,
    });
    expect(parseCriLine(Buffer.from('2024-01-01T00:00:01Z stdout F hello world'))?.text.toString()).toBe('hello world');
    expect(parseCriLine(Buffer.from('2024-01-01T00:00:01Z stdin F x'))).toBeUndefined();
    expect(parseCriLine(Buffer.from('yesterday stdout F x'))).toBeUndefined();
    expect(parseCriLine(Buffer.from('2024-01-01T00:00:01Z stdout X x'))).toBeUndefined();
  });

  it('returns the text of each line; partial lines run on into the next; other lines are skipped', async () => {
    const f = join(dir, '0.log');
    writeFileSync(f, LOG);
    expect(await read(f)).toBe('first line\nsecond line\npart one, part two, part three\n\nlast line\n');
  });

  it('tailLines counts file lines from the end; timestamps prefix each output line; sinceTime skips older lines', async () => {
    const f = join(dir, '0.log');
    writeFileSync(f, LOG);
    expect(await read(f, { tailLines: 2 })).toBe('\nlast line\n');
    expect(await read(f, { tailLines: 0 })).toBe('');
    expect(await read(f, { tailLines: 100 })).toBe(await read(f));
    expect(await read(f, { tailLines: 1, timestamps: true })).toBe('2024-01-01T00:00:06.000000000Z last line\n');
    expect(await read(f, { sinceTime: Date.parse('2024-01-01T00:00:03Z'), timestamps: true })).toBe(
      '2024-01-01T00:00:03.000000000Z part one, part two, part three\n2024-01-01T00:00:05.000000000Z \n2024-01-01T00:00:06.000000000Z last line\n',
    );
  });

  it('writes an unfinished last line when not following', async () => {
    const f = join(dir, '0.log');
    writeFileSync(f, '2024-01-01T00:00:01Z stdout F one\n2024-01-01T00:00:02Z stdout F tw');
    expect(await read(f)).toBe('one\ntw\n');
  });

  it('follows appended lines and a rotated file until the container stops', async () => {
    const f = join(dir, '0.log');
    writeFileSync(f, '2024-01-01T00:00:01Z stdout F one\n');
    let running = true;
    const chunks: string[] = [];
    const done = (async () => {
      for await (const c of readCriLog(f, { follow: true, running: () => running, pollMs: 10 }))
        chunks.push(c.toString());
    })();
    const until = async (text: string): Promise<void> => {
      const deadline = Date.now() + 5000;
      while (!chunks.join('').includes(text)) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${JSON.stringify(text)} in ${JSON.stringify(chunks.join(''))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await until('one\n');
    appendFileSync(f, '2024-01-01T00:00:02Z stdout F tw');
    await new Promise((r) => setTimeout(r, 50));
    expect(chunks.join('')).toBe('one\n');
    appendFileSync(f, 'o\n');
    await until('two\n');
    // Rotation: the runtime renames the file and starts a new one at the same path.
    appendFileSync(f, '2024-01-01T00:00:03Z stdout F three\n');
    renameSync(f, `${f}.20240101-000003`);
    writeFileSync(f, '2024-01-01T00:00:04Z stdout F four\n');
    await until('four\n');
    running = false;
    appendFileSync(f, '2024-01-01T00:00:05Z stdout F five\n');
    await done;
    expect(chunks.join('')).toBe('one\ntwo\nthree\nfour\nfive\n');
  });

  it('stops following when the signal fires', async () => {
    const f = join(dir, '0.log');
    writeFileSync(f, '2024-01-01T00:00:01Z stdout F one\n');
    const stop = new AbortController();
    const out: string[] = [];
    const done = (async () => {
      for await (const c of readCriLog(f, { follow: true, signal: stop.signal, pollMs: 10 })) out.push(c.toString());
    })();
    // Following: the whole file was read, the reader now waits for more.
    const deadline = Date.now() + 5000;
    while (out.length === 0) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the first line');
      await new Promise((r) => setTimeout(r, 10));
    }
    stop.abort();
    await done;
    expect(out).toEqual(['one\n']);
  });
});
