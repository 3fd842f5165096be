// `pnpm bench [filter...] [--strict]`: runs every bench/*.bench.mjs (or those whose name
// contains one of the filters) one after another, prints each result as
// `name: <figure> (ceiling <figure>, ratio <x>)`, and ends with a summary table.
//
// Each bench module's default export is `async ({ log }) => Result[]` (see lib.mjs `result`);
// it starts what it needs (etcd, servers) and stops it again, also on failure. The exit code
// is 1 when a benchmark could not run, or with --strict when a target was missed.
//
// The benchmarks use the built packages: build first with
//   ./node_modules/.bin/tsc -b packages/*/tsconfig.json

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BenchSetupError, ROOT, checkBuilt, fmtNum, fmtTarget, formatResult, machineLine } from './lib.mjs';

const args = process.argv.slice(2);
const strict = args.includes('--strict');
const filters = args.filter((a) => !a.startsWith('--'));

const dir = join(ROOT, 'bench');
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort();
const selected = filters.length === 0 ? all : all.filter((f) => filters.some((x) => f.includes(x)));
if (selected.length === 0) {
  console.error(
    `bench: nothing matches ${filters.join(', ')}; available: ${all.map((f) => f.replace(/\.bench\.mjs$/, '')).join(', ')}`,
  );
  process.exit(2);
}

try {
  checkBuilt();
} catch (e) {
  console.error(`bench: ${e.message}`);
  process.exit(1);
}

console.log(`bench: ${selected.length} benchmark file(s); ${machineLine()}`);
const t0 = performance.now();
const rows = [];
let failed = 0;
for (const file of selected) {
  const bench = file.replace(/\.bench\.mjs$/, '');
  console.log(`\n== ${bench}`);
  const started = performance.now();
  try {
    const mod = await import(pathToFileURL(join(dir, file)).href);
    if (typeof mod.default !== 'function') throw new BenchSetupError(`${file} has no default export function`);
    const results = await mod.default({ log: (s) => console.log(s) });
    for (const r of results) {
      console.log(formatResult(r));
      rows.push({ bench, ...r });
    }
    console.log(`(${bench}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    console.error(`${bench}: FAILED: ${e instanceof BenchSetupError ? e.message : (e?.stack ?? e)}`);
    rows.push({ bench, name: '(failed to run)', failed: true });
  }
}

// Summary.
const table = [['bench', 'measure', 'figure', 'ceiling', 'ratio', 'target', '']];
for (const r of rows) {
  if (r.failed) {
    table.push([r.bench, r.name, '-', '-', '-', '-', 'FAILED']);
    continue;
  }
  table.push([
    r.bench,
    r.short ?? r.name,
    fmtNum(r.value, r.unit),
    fmtNum(r.ceiling, r.unit),
    r.ratio.toFixed(2),
    fmtTarget(r.target),
    r.target ? (r.pass ? 'ok' : 'MISSED') : '',
  ]);
}
const widths = table[0].map((_, c) => Math.max(...table.map((row) => [...row[c]].length)));
const line = (row) =>
  row
    .map((cell, c) => cell.padEnd(widths[c]))
    .join('  ')
    .trimEnd();
console.log(`\nSummary (${((performance.now() - t0) / 1000).toFixed(1)} s; ${machineLine()})`);
console.log(line(table[0]));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of table.slice(1)) console.log(line(row));

const missed = rows.filter((r) => r.target && r.pass === false).length;
// Exit now: a bench that failed part-way may leave handles behind (a probe loop retrying a
// cluster its clean-up already stopped), which would keep the process, and the shared lock
// it runs under, alive after the summary.
process.exit(failed > 0 || (strict && missed > 0) ? 1 : 0);
