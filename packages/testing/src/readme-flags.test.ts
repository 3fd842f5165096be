import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand, type CommandResult } from './run-command.js';

// The README's flag tables are generated from the built binaries' --help
// (scripts/flag-tables.mjs); scripts/test.sh builds before jest runs, so a flag added or
// changed without regenerating the README fails here.
const repo = join(__dirname, '..', '..', '..');
const script = join(repo, 'scripts', 'flag-tables.mjs');
const readmePath = join(repo, 'README.md');

function flagTables(args: string[]): Promise<CommandResult> {
  return runCommand(process.execPath, [script, ...args], { cwd: repo, timeoutMs: 120_000 });
}

// Each run starts the five binaries at once; on a busy 2-core machine that can take a while
// (a test makes up to two runs).
const TIMEOUT_MS = 240_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'readme-flags-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it(
  "README.md's flag tables are what the binaries' --help prints (regenerate: node scripts/flag-tables.mjs)",
  async () => {
    const result = await flagTables(['--check']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  },
  TIMEOUT_MS,
);

it(
  '--check names a stale row and exits 1; a run rewrites only the text between the markers',
  async () => {
    const readme = readFileSync(readmePath, 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `--event-ttl <duration>` |'));
    expect(row).toBeDefined();
    const prose = 'Prose outside the markers stays as it is.';
    const stale = readme.replace(`${row}\n`, '').replace('## svc-apiserver\n', `## svc-apiserver\n\n${prose}\n`);
    const copy = join(dir, 'README.md');
    writeFileSync(copy, stale);

    const check = await flagTables(['--check', '--readme', copy]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('the flag tables differ');
    expect(check.stdout).toContain(`+${row}`);
    expect(readFileSync(copy, 'utf8')).toBe(stale);

    const write = await flagTables(['--readme', copy]);
    expect(write.code).toBe(0);
    expect(readFileSync(copy, 'utf8')).toBe(readme.replace('## svc-apiserver\n', `## svc-apiserver\n\n${prose}\n`));
  },
  TIMEOUT_MS,
);

it(
  "a README without one binary's markers fails with the marker named, and a bad argument exits 2",
  async () => {
    const copy = join(dir, 'no-markers.md');
    writeFileSync(copy, readFileSync(readmePath, 'utf8').replace('<!-- flags:svc-runtime begin -->', ''));
    const missing = await flagTables(['--check', '--readme', copy]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('<!-- flags:svc-runtime begin -->');

    const bad = await flagTables(['--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: node scripts/flag-tables.mjs');
  },
  TIMEOUT_MS,
);
