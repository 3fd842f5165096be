// `node scripts/bundle.mjs`: after `tsc -b`, bundles each long-running binary and svcctl from
// its compiled JavaScript into packages/<pkg>/dist/bundle/<binary>.mjs (with esbuild), which
// is what the packages' `bin` entries, cluster.sh and the image run.
//
// Why: Node 20 has no module compile cache, and resolving and reading ~1,200 modules cost
// svc-apiserver ~0.5 s of its start-up (spawn → --help: 1.0 s unbundled, 0.5 s bundled) and
// svcctl ~30 ms of its first request. A bundle is one file per binary plus chunks for the
// imports a binary makes lazily (`import()` stays lazy: code splitting).
//
// Left out of the bundles (loaded from node_modules as before): packages that read files next
// to their own modules at run time — etcd3 (its .proto files), @svc/runtime (the CRI .proto
// and the container shim) — and native addons. The svclet is not bundled: most of its start
// is @svc/runtime and the gRPC stack (0.74 s unbundled, 0.76 s bundled without the runtime). `--check` only reports whether every bundle is
// newer than the compiled files it came from.

import { build } from 'esbuild';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** package directory → its binaries bundled (each dist/bin/<name>.js → dist/bundle/<name>.mjs). */
const BINARIES = {
  apiserver: ['svc-apiserver'],
  'controller-manager': ['svc-controller-manager'],
  scheduler: ['svc-scheduler'],
  svcctl: ['svcctl'],
};

const EXTERNAL = ['etcd3', '@svc/runtime', '@lydell/node-pty', '*.node'];

// CommonJS dependencies inside an ES module bundle call `require` for Node's built-ins.
const BANNER =
  "import { createRequire as __svcCreateRequire } from 'node:module';\nconst require = __svcCreateRequire(import.meta.url);";

export function bundlePath(pkg, bin) {
  return join(ROOT, 'packages', pkg, 'dist', 'bundle', `${bin}.mjs`);
}

async function bundle(pkg, bins) {
  await build({
    entryPoints: Object.fromEntries(bins.map((b) => [b, join(ROOT, 'packages', pkg, 'dist', 'bin', `${b}.js`)])),
    outdir: join(ROOT, 'packages', pkg, 'dist', 'bundle'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    banner: { js: BANNER },
    logLevel: 'warning',
    legalComments: 'none',
  });
}

/** The newest .js file under `dir` (bundles excluded), as a modification time. */
function newestJs(dir) {
  let newest = 0;
  let entries = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'bundle') newest = Math.max(newest, newestJs(p));
    } else if (e.name.endsWith('.js')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** True when every bundle of `pkg` is newer than all compiled code (any package's: a bundle holds its dependencies). */
function fresh(pkg, bins, compiled) {
  return bins.every((b) => {
    try {
      return statSync(bundlePath(pkg, b)).mtimeMs > compiled;
    } catch {
      return false;
    }
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  const compiled = Math.max(
    ...readdirSync(join(ROOT, 'packages')).map((p) => newestJs(join(ROOT, 'packages', p, 'dist'))),
  );
  const todo = Object.entries(BINARIES).filter(
    ([pkg, bins]) => process.argv.includes('--force') || !fresh(pkg, bins, compiled),
  );
  await Promise.all(todo.map(([pkg, bins]) => bundle(pkg, bins)));
  const names = todo.flatMap(([, bins]) => bins);
  console.log(
    names.length > 0
      ? `bundled ${names.join(', ')} in ${(performance.now() - t0).toFixed(0)} ms`
      : `bundles up to date (${(performance.now() - t0).toFixed(0)} ms)`,
  );
}
