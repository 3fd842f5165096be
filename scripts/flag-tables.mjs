#!/usr/bin/env node
// The README's flag tables, generated from each binary's own `--help` (build first: `pnpm run build`).
//
//   node scripts/flag-tables.mjs            rewrite README.md between the flag markers
//   node scripts/flag-tables.mjs --check    exit 1 with a diff when README.md is stale
//   --readme <path>                         another file than README.md (tests)
//
// Only the text between `<!-- flags:<binary> begin -->` and `<!-- flags:<binary> end -->` is
// replaced; the file is read fresh each run, so edits elsewhere in it are kept.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The binaries with a flag table in the README, in the README's order. */
export const BINARIES = [
  { name: 'svc-apiserver', bin: 'packages/apiserver/dist/bin/svc-apiserver.js' },
  { name: 'svc-controller-manager', bin: 'packages/controller-manager/dist/bin/svc-controller-manager.js' },
  { name: 'svc-scheduler', bin: 'packages/scheduler/dist/bin/svc-scheduler.js' },
  { name: 'svclet', bin: 'packages/svclet/dist/bin/svclet.js' },
  { name: 'svc-runtime', bin: 'packages/runtime/dist/bin/svc-runtime.js' },
];

const OPTION_LINE = /^ {2}(-\S.*?)(?: {2,}(\S.*))?$/;
const CONTINUATION = /^ {3,}(\S.*)$/;
const SECTION = /^(\S.*):$/;
// What commander appends to a description, in its order: ` (choices: ..., default: ..., preset: ..., env: ...)`.
const EXTRA_KEYS = ['choices', 'default', 'preset', 'env'];

/** Runs `<bin> --help` and resolves with its standard output. */
export function helpText(binary) {
  const path = join(root, binary.bin);
  if (!existsSync(path)) return Promise.reject(new Error(`${binary.bin} is missing: build first (pnpm run build)`));
  return new Promise((resolve, reject) => {
    // A wide terminal, so commander does not wrap (continuation lines are joined anyway).
    const env = { ...process.env, COLUMNS: '1000', NO_COLOR: '1' };
    execFile(process.execPath, [path, '--help'], { encoding: 'utf8', env, timeout: 60_000 }, (err, stdout) => {
      if (err) reject(new Error(`${binary.name} --help failed: ${err.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * The options of a commander help text, grouped by section (`Options:` and any section a
 * binary adds), in the binary's order: `{ title, options: [{ flags, description, defaultValue, choices }] }`.
 */
export function parseHelp(text) {
  const sections = [];
  let section;
  let option;
  for (const line of text.split('\n')) {
    const heading = SECTION.exec(line);
    if (heading && !line.startsWith('Usage:')) {
      section = { title: heading[1], options: [] };
      sections.push(section);
      option = undefined;
      continue;
    }
    if (!section) continue;
    const opt = OPTION_LINE.exec(line);
    if (opt) {
      option = { flags: opt[1].trim(), text: opt[2] ?? '' };
      section.options.push(option);
      continue;
    }
    const more = CONTINUATION.exec(line);
    if (more && option) option.text = option.text ? `${option.text} ${more[1]}` : more[1];
    else option = undefined;
  }
  return sections
    .map((s) => ({ title: s.title, options: s.options.map(splitExtra).filter((o) => !isHelpFlag(o)) }))
    .filter((s) => s.options.length > 0);
}

function isHelpFlag(option) {
  return option.flags === '-h, --help';
}

/** Splits commander's trailing `(choices: ..., default: ...)` off a description. */
function splitExtra({ flags, text }) {
  let description = text;
  let extra = '';
  if (text.endsWith(')')) {
    for (const key of EXTRA_KEYS) {
      const at = text.lastIndexOf(` (${key}: `);
      if (at >= 0) {
        description = text.slice(0, at);
        extra = text.slice(at + 2, -1);
        break;
      }
    }
  }
  const parts = {};
  // Each part starts with `key: `; a value never contains `, <key>: ` (choices are quoted).
  const keys = new RegExp(`(?:^|, )(${EXTRA_KEYS.join('|')}): `, 'g');
  const found = [...extra.matchAll(keys)];
  found.forEach((m, i) => {
    const end = i + 1 < found.length ? found[i + 1].index : extra.length;
    parts[m[1]] = extra.slice(m.index + m[0].length, end);
  });
  return { flags, description: description.trim(), defaultValue: parts.default, choices: parts.choices };
}

/** A commander default as the table shows it: quoted strings as code, an empty list or string as nothing. */
function renderDefault(value) {
  if (value === undefined) return '';
  const text = value.trim();
  if (text === '' || text === '[]' || text === '""') return '';
  if (/^"(?:[^"\\]|\\.)*"$/.test(text)) return code(JSON.parse(text));
  if (text.includes('"')) return escapeCell(text.replace(/"((?:[^"\\]|\\.)*)"/g, (_, s) => code(JSON.parse(`"${s}"`))));
  return code(text);
}

function renderFlags(flags) {
  return flags
    .split(', ')
    .map((f) => code(f))
    .join(', ');
}

function renderMeaning(option) {
  let meaning = escapeCell(option.description);
  if (option.choices) {
    const choices = option.choices.match(/"(?:[^"\\]|\\.)*"/g) ?? [option.choices];
    const list = choices.map((c) => code(c.startsWith('"') ? JSON.parse(c) : c)).join(', ');
    meaning = `${meaning}${meaning ? ' ' : ''}One of ${list}.`;
  }
  return meaning;
}

function code(text) {
  const s = String(text).replace(/\|/g, '\\|');
  return s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``;
}

/** Plain Markdown text in a table cell: pipes escaped, `<` and `*` kept literal. */
function escapeCell(text) {
  return text
    .replace(/\\(?![|`])/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/\*/g, '\\*');
}

/** The Markdown between one binary's markers. */
export function renderTables(binary, sections) {
  const out = [
    `<!-- generated by node scripts/flag-tables.mjs from ${binary.name} --help: change the help text, then regenerate -->`,
  ];
  sections.forEach((section, i) => {
    if (i > 0) out.push('', `**${escapeCell(section.title)}:**`);
    out.push('', '| Flag | Default | Meaning |', '|---|---|---|');
    for (const option of section.options) {
      out.push(`| ${renderFlags(option.flags)} | ${renderDefault(option.defaultValue)} | ${renderMeaning(option)} |`);
    }
  });
  // A blank line before the end marker, so no Markdown reader takes it for a table row.
  out.push('', '');
  return out.join('\n');
}

function markers(name) {
  return { begin: `<!-- flags:${name} begin -->`, end: `<!-- flags:${name} end -->` };
}

/** README text with every binary's table replaced; throws when a binary's markers are missing. */
export function updateReadme(readme, tables) {
  let text = readme;
  for (const [name, table] of tables) {
    const { begin, end } = markers(name);
    const from = text.indexOf(begin);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README has no ${begin} ... ${end} markers`);
    text = `${text.slice(0, from + begin.length)}\n${table}${text.slice(to)}`;
  }
  return text;
}

/** A short diff of two texts: the changed lines of each changed block, `-` old and `+` new. */
export function describeChanges(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const inNew = new Set(b.slice(start, endB));
  const inOld = new Set(a.slice(start, endA));
  const lines = [`@@ line ${start + 1} @@`];
  for (const line of a.slice(start, endA)) if (!inNew.has(line)) lines.push(`-${line}`);
  for (const line of b.slice(start, endB)) if (!inOld.has(line)) lines.push(`+${line}`);
  return lines.join('\n');
}

async function main(argv) {
  const check = argv.includes('--check');
  const at = argv.indexOf('--readme');
  const readmePath = at >= 0 ? argv[at + 1] : join(root, 'README.md');
  const unknown = argv.filter((a, i) => a !== '--check' && a !== '--readme' && !(at >= 0 && i === at + 1));
  if (unknown.length > 0 || (at >= 0 && !readmePath)) {
    process.stderr.write(`usage: node scripts/flag-tables.mjs [--check] [--readme <path>]\n`);
    return 2;
  }
  // The binaries start in parallel: each --help loads its whole package.
  const helps = await Promise.all(BINARIES.map((binary) => helpText(binary)));
  const tables = BINARIES.map((binary, i) => [binary.name, renderTables(binary, parseHelp(helps[i]))]);
  const before = readFileSync(readmePath, 'utf8');
  const after = updateReadme(before, tables);
  const name = relative(process.cwd(), readmePath) || readmePath;
  if (before === after) {
    if (!check) process.stdout.write(`${name}: flag tables up to date\n`);
    return 0;
  }
  if (check) {
    process.stdout.write(
      `${name}: the flag tables differ from the binaries' --help; regenerate them (after pnpm run build) with node scripts/flag-tables.mjs\n` +
        `${describeChanges(before, after)}\n`,
    );
    return 1;
  }
  writeFileSync(readmePath, after);
  process.stdout.write(`${name}: flag tables rewritten\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`flag-tables: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
