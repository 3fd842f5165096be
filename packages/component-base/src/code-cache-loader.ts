#!/usr/bin/env node
// The loader of a code-cached binary (dist/bundle/<bin>.cjs of svcctl and svc-apiserver,
// bundled by scripts/bundle.mjs): compiles the binary's main bundle (dist/bundle/<bin>.main.cjs,
// one CommonJS script) with V8's code cache and calls its `main` with the arguments.
//
// Why: Node 20 has no module compile cache (`module.enableCompileCache` is Node 22). Compiling
// svcctl's ~1.1 MB of JavaScript was about a fifth of its start-up, and svc-apiserver's ~6.5 MB
// ~190 ms of a restart. The cache is the code V8 compiled during one whole run (scripts/
// bundle.mjs runs one when it builds: a `get` for svcctl, a start, a few requests and a stop
// for svc-apiserver), so the start path's functions are deserialized instead of parsed and
// compiled.
//
// The cache file's name carries the main bundle's content hash and the Node version and
// architecture, so a rebuilt bundle or another Node never reads an old cache. V8 checks the
// rest (its version, its flags, the source's length, the data's checksum) and rejects a cache
// that does not fit (`cachedDataRejected`): the script is then compiled from source as usual,
// and a new cache is written from this run when the process exits (to a temporary file renamed
// into place, so concurrent runs never read half a file). Any failure to read or write the
// cache is silent: the cache only ever makes start-up faster.
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';

/** Set by scripts/bundle.mjs (esbuild `define`); see `MainBundle`. */
declare const SVC_MAIN_BUNDLE: MainBundle;

/** The main bundle next to this loader. */
interface MainBundle {
  /** Its file name. */
  file: string;
  /** sha256 of its content, hex (the first 16 digits name the cache). */
  hash: string;
  /** `latin1` when the file is ASCII (read as one-byte text, ~4x faster than decoding UTF-8), else `utf8`. */
  encoding: 'latin1' | 'utf8';
  /** V8 flags the binary runs with, set before compiling (a code cache is only accepted under the flags it was made with). */
  v8Flags: string[];
}

/** What a main bundle exports (its entry, the package's src/bin/bundle-main.ts). */
interface MainExports {
  /** Runs the binary with its command-line arguments. */
  main(argv: string[]): void;
}

/* eslint-disable max-params -- the five parameters of Node's CommonJS module wrapper, in its order */
type CommonJsWrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;
/* eslint-enable max-params */

/** Where the code cache of `main` (in `dir`) is for this Node. */
function codeCachePath(dir: string, main: MainBundle): string {
  return join(dir, `${main.file}.${main.hash.slice(0, 16)}.${process.version}-${process.arch}.v8cache`);
}

function readCache(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function writeCache(path: string, data: Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
  }
}

/** Sets each flag, except one that node was started with (`node --flag=… <bin>`: the user's value stays). */
function setV8Flags(flags: readonly string[]): void {
  const nameOf = (f: string): string => (f.split('=')[0] ?? '').replace(/_/g, '-');
  const given = new Set(process.execArgv.map(nameOf));
  for (const f of flags) if (!given.has(nameOf(f))) setFlagsFromString(f);
}

/** Compiles and runs the main bundle as Node's CommonJS loader would, with the code cache. */
function loadMain(main: MainBundle): MainExports {
  const dir = dirname(fileURLToPath(import.meta.url));
  const file = join(dir, main.file);
  const cachePath = codeCachePath(dir, main);
  setV8Flags(main.v8Flags);
  const cachedData = readCache(cachePath);
  const source = readFileSync(file, main.encoding);
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // createCachedData() at exit holds every function this run compiled, not only the top level.
    process.once('exit', () => writeCache(cachePath, script.createCachedData()));
  }
  const wrapper = script.runInThisContext() as CommonJsWrapper;
  const module = { exports: {} };
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dir);
  return module.exports as MainExports;
}

loadMain(SVC_MAIN_BUNDLE).main(process.argv.slice(2));
