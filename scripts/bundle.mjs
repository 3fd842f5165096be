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
// to their own modules at run time — @svc/runtime (the CRI .proto and the container shim) —
// and native addons. etcd3 is bundled with its descriptor (`etcd3Descriptor`). The svclet
// imports only `@svc/runtime/client` (the CRI client: gRPC and the .proto, loaded from
// node_modules); spawn → --help 0.74 s unbundled, 0.40 s bundled (cluster.sh starts it beside
// the controller manager and the scheduler).
//
// svcctl and svc-apiserver are bundled differently (see `bundleCodeCached`): one CommonJS script
// each, dist/bundle/<bin>.main.cjs, which the binary dist/bundle/<bin>.cjs (the loader,
// packages/component-base/src/code-cache-loader.ts) compiles with a V8 code cache; this script
// makes the cache by running the binary once: `svcctl get` against a socket that hangs up, and
// svc-apiserver started on a real etcd, asked a few requests and stopped (without an etcd on
// PATH, as in the image's build, the first run that exits makes it instead).

import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** package directory → its binaries bundled (each dist/bin/<name>.js → dist/bundle/<name>.mjs). */
const BINARIES = {
  'controller-manager': ['svc-controller-manager'],
  scheduler: ['svc-scheduler'],
  // cluster.sh runs svcadm four times before a node is up (init pki, cluster-info, token create,
  // join): 0.5 s each unbundled, 0.2 s bundled.
  svcadm: ['svcadm', 'svc-lb'],
  svclet: ['svclet'],
};

/**
 * package directory → its binary bundled as a code-cached CommonJS script (dist/bundle/<name>.cjs)
 * and the run that makes its cache:
 * svcctl is short-lived and run often; svc-apiserver's restart compiled ~6.5 MB of JavaScript
 * (~190 ms of a restart that has 0.8 s).
 */
const CODE_CACHED = {
  svcctl: { bin: 'svcctl', train: trainSvcctl, v8Flags: async () => [] },
  apiserver: { bin: 'svc-apiserver', train: trainApiServer, v8Flags: apiServerV8Flags },
};

/**
 * The V8 flags svc-apiserver runs with (its heap growing factor, packages/apiserver/src/bin/
 * heap-growing.ts). The loader sets them before it compiles the main bundle: V8 accepts a code
 * cache only under the flags it was made with, and the cache is made at the end of a run.
 */
async function apiServerV8Flags() {
  const url = pathToFileURL(join(ROOT, 'packages', 'apiserver', 'dist', 'bin', 'heap-growing.js'));
  const { heapGrowingFlag } = await import(url.href);
  return [heapGrowingFlag([])];
}

const EXTERNAL = ['@svc/runtime', '@lydell/node-pty', '*.node'];

/**
 * esbuild plugin: etcd3 in a bundle. etcd3 parses its `.proto` files next to its own modules
 * when imported (`loadSync` of proto/rpc.proto: ~45 ms of svc-apiserver's start, and the files
 * are not beside a bundle); in the bundle it builds the same package definition from the
 * descriptor (`fromJSON`, ~18 ms), parsed here with the options etcd3 gives. Bundled, its gRPC
 * stack is not resolved and loaded module by module either (~165 ms unbundled in all).
 */
const etcd3Descriptor = {
  name: 'etcd3-descriptor',
  setup(b) {
    b.onLoad({ filter: /[\\/]etcd3[\\/]lib[\\/]connection-pool\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const call = '(0, proto_loader_1.loadSync)(`${__dirname}/../proto/rpc.proto`, {';
      if (!source.includes(call)) throw new Error(`${args.path}: etcd3 no longer loads proto/rpc.proto as expected`);
      const fromEtcd3 = createRequire(args.path);
      const protobuf = createRequire(fromEtcd3.resolve('@grpc/proto-loader'))('protobufjs');
      const root = new protobuf.Root().loadSync(join(dirname(args.path), '..', 'proto', 'rpc.proto'), {
        keepCase: true,
      });
      const json = JSON.stringify(root.toJSON());
      return { loader: 'js', contents: source.replace(call, `(0, proto_loader_1.fromJSON)(${json}, {`) };
    });
  },
};

// CommonJS dependencies inside an ES module bundle call `require` for Node's built-ins.
const BANNER =
  "import { createRequire as __svcCreateRequire } from 'node:module';\nconst require = __svcCreateRequire(import.meta.url);";

// In a CommonJS bundle: `import.meta.url` is this file's URL (`url` is loaded by Node's own start).
// The bundle is strict, as the ES modules it is made of are (and as an ES module bundle is,
// dependencies included): esbuild's own "use strict" comes after the banner, where it is no
// longer a directive.
const CJS_BANNER = "'use strict';\nvar __svcImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";

export function bundlePath(pkg, bin) {
  return join(ROOT, 'packages', pkg, 'dist', 'bundle', pkg in CODE_CACHED ? `${bin}.cjs` : `${bin}.mjs`);
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
    plugins: [etcd3Descriptor],
  });
}

// Built-ins a short-lived binary rarely needs but its modules import at their top: commander
// requires child_process for executable sub-commands (svcctl has none), the REST client for
// credential plugins, the manifest reader fs/promises (which loads readline). Loading
// child_process alone costs ~4 ms (it brings net, stream and dgram). In the code-cached bundle
// each is a module whose properties load the built-in on first use.
const LAZY_BUILTINS = ['child_process', 'fs/promises'];

/** esbuild plugin: `node:<name>`/`<name>` of LAZY_BUILTINS → a stand-in loading it on first property read. */
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|').replace('/', '\\/')})$`);
    b.onResolve({ filter }, (args) =>
      args.namespace === 'lazy-builtin'
        ? { path: args.path, external: true }
        : { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const keys = Object.keys(await import(`node:${args.path}`)).filter((k) => k !== 'default');
      return {
        loader: 'js',
        contents: [
          `let real;`,
          `const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));`,
          `for (const k of ${JSON.stringify(keys)})`,
          `  Object.defineProperty(exports, k, { enumerable: true, get: () => load()[k] });`,
        ].join('\n'),
      };
    });
  },
};

/**
 * Rewrites every non-ASCII character of the bundle at `file` as a `\uXXXX` escape and returns the
 * bundle. esbuild's `charset: 'ascii'` escapes strings and identifiers but leaves comments and
 * regular expression literals as written (`µs` in a duration pattern, `×` in a comment), and one
 * such character makes the whole script a two-byte string that the loader must decode as UTF-8:
 * for svc-apiserver's 6.5 MB, ~90 ms of every start against ~45 ms read as Latin-1 (29 November,
 * 2 cores). The escape means the same character in a regular expression, a string or an
 * identifier, and in a comment it changes only the comment. After a backslash it would not (`\µ`
 * would become an escaped backslash): the build fails there instead.
 */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  const escaped = text.replace(/[^\x00-\x7f]/g, (c, at) => {
    if (text[at - 1] === '\\') throw new Error(`${file}: a non-ASCII character after a backslash at ${at}`);
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  if (escaped !== text) writeFileSync(file, escaped);
  return Buffer.from(escaped, 'latin1');
}

/**
 * `bin`'s main bundle (dist/bin/bundle-main.js → dist/bundle/<bin>.main.cjs: CommonJS, no code
 * splitting, lazy `import()`s become lazily run module bodies) and its loader (component-base's
 * dist/code-cache-loader.js → dist/bundle/<bin>.cjs, told the main bundle's name, hash and
 * encoding), then the code cache from one run. All of it is made in a new directory that then
 * replaces dist/bundle (old caches and chunks go; a binary started meanwhile finds a whole bundle).
 */
async function bundleCodeCached(pkg, { bin, train, v8Flags }) {
  const dist = join(ROOT, 'packages', pkg, 'dist');
  const outdir = join(dist, `bundle-${process.pid}.tmp`);
  rmSync(outdir, { recursive: true, force: true });
  const common = {
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    define: { 'import.meta.url': '__svcImportMetaUrl' },
    banner: { js: CJS_BANNER },
    charset: 'ascii',
    logLevel: 'warning',
    legalComments: 'none',
    plugins: [lazyBuiltins, etcd3Descriptor],
  };
  const mainFile = `${bin}.main.cjs`;
  const { metafile } = await build({
    ...common,
    entryPoints: [join(dist, 'bin', 'bundle-main.js')],
    outfile: join(outdir, mainFile),
    metafile: true,
  });
  const main = asciiOnly(join(outdir, mainFile));
  // The loader compiles the main bundle with vm.Script, which has no loader for import().
  const dynamic = Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.kind === 'dynamic-import'));
  if (dynamic.length > 0)
    throw new Error(`${mainFile}: import() left in the bundle: ${dynamic.map((i) => i.path).join(', ')}`);
  const meta = {
    file: mainFile,
    hash: createHash('sha256').update(main).digest('hex'),
    encoding: 'latin1', // asciiOnly made it ASCII
    v8Flags: await v8Flags(),
  };
  await build({
    ...common,
    entryPoints: [join(ROOT, 'packages', 'component-base', 'dist', 'code-cache-loader.js')],
    outfile: join(outdir, `${bin}.cjs`),
    define: { ...common.define, SVC_MAIN_BUNDLE: JSON.stringify(meta) },
  });
  // Where the binary was before (a checkout's node_modules/.bin shim points here until the next
  // `pnpm install` rewrites it).
  writeFileSync(
    join(outdir, `${bin}.mjs`),
    `#!/usr/bin/env node\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./${bin}.cjs');\n`,
    { mode: 0o755 },
  );
  await train(join(outdir, `${bin}.cjs`));
  if (!readdirSync(outdir).some((f) => f.endsWith('.v8cache')))
    console.warn(`${bin}: no code cache was written (it is made on the first run instead)`);
  rmSync(join(dist, 'bundle'), { recursive: true, force: true });
  renameSync(outdir, join(dist, 'bundle'));
}

/**
 * Runs `<binary> get namespaces` once, against a TCP server that closes every connection (the
 * TLS handshake fails, exit 1): the start path (commands, svcconfig YAML, REST client, TLS
 * connect, error printing) is compiled, and the loader writes the code cache when it exits.
 */
async function trainSvcctl(binary) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
  const server = createServer((s) => s.destroy());
  try {
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    const config = join(dir, 'config');
    writeFileSync(
      config,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: c\n  cluster:\n    server: https://127.0.0.1:${server.address().port}\n    insecure-skip-tls-verify: true`,
        'users:\n- name: u\n  user:\n    token: t',
        'contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: default',
        'current-context: c',
        '',
      ].join('\n'),
    );
    await new Promise((ok, fail) => {
      const child = spawn(process.execPath, [binary, 'get', 'namespaces', '--request-timeout=10s'], {
        stdio: 'ignore',
        timeout: 60_000,
        env: { ...process.env, SVCCONFIG: config, HOME: dir },
      });
      child.once('error', fail);
      child.once('exit', ok);
    });
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts `binary` (svc-apiserver) on a real etcd (started by @svc/testing, `etcd` from PATH),
 * waits for /readyz, asks what clients ask first (discovery, a list, a create, a get, a watch
 * from the cache, a delete) and stops it with SIGTERM: the start path, the request chain and
 * the storage are compiled, and the loader writes the code cache when the server exits.
 * Without etcd the cache is made by the first run that exits.
 */
async function trainApiServer(binary) {
  const { startEtcd } = await import(join(ROOT, 'packages', 'testing', 'dist', 'etcd.js'));
  const { freePorts } = await import(join(ROOT, 'packages', 'testing', 'dist', 'free-port.js'));
  let etcd;
  try {
    etcd = await startEtcd();
  } catch (e) {
    console.warn(
      `svc-apiserver: no code cache made at build (${e.message.split('\n')[0]}); the first run that exits makes it`,
    );
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bundle-apiserver-'));
  let child;
  try {
    const [port] = await freePorts(1);
    const token = createHash('sha256').update(dir).digest('hex').slice(0, 32);
    writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin-uid,"system:masters"\n`);
    child = spawn(
      process.execPath,
      [
        binary,
        '--store-servers',
        etcd.endpoints.join(','),
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        String(port),
        '--cert-dir',
        join(dir, 'pki'),
        '--token-auth-file',
        join(dir, 'tokens.csv'),
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise((ok) => child.once('exit', ok));
    const ask = (method, path, body) => askServer(port, token, method, path, body);
    const deadline = Date.now() + 60_000;
    while ((await ask('GET', '/readyz').catch(() => 0)) !== 200) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('svc-apiserver did not become ready');
      await new Promise((ok) => setTimeout(ok, 50));
    }
    const cms = '/api/v1/namespaces/default/configmaps';
    for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/api/v1/namespaces']) await ask('GET', path);
    await ask('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'train' }, data: { a: '1' } });
    await ask('GET', `${cms}/train`);
    await ask('GET', `${cms}?resourceVersion=0`);
    await ask('GET', `${cms}?watch=1&resourceVersion=0&timeoutSeconds=1`);
    await ask('DELETE', `${cms}/train`);
    child.kill('SIGTERM');
    await exited;
  } catch (e) {
    child?.kill('SIGKILL');
    console.warn(`svc-apiserver: no code cache made at build (${e.message}); the first run that exits makes it`);
  } finally {
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One HTTPS request to the server being trained (its certificate is not checked); resolves its status. */
function askServer(port, token, method, path, body) {
  return new Promise((ok, fail) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        rejectUnauthorized: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.once('end', () => ok(res.statusCode));
      },
    );
    req.once('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
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
  // The newest compiled code, or this script when it changed since (a new bundler rebundles).
  const compiled = Math.max(
    statSync(fileURLToPath(import.meta.url)).mtimeMs,
    ...readdirSync(join(ROOT, 'packages')).map((p) => newestJs(join(ROOT, 'packages', p, 'dist'))),
  );
  const force = process.argv.includes('--force');
  const todo = Object.entries(BINARIES).filter(([pkg, bins]) => force || !fresh(pkg, bins, compiled));
  const todoCached = Object.entries(CODE_CACHED).filter(([pkg, { bin }]) => force || !fresh(pkg, [bin], compiled));
  await Promise.all([
    ...todo.map(([pkg, bins]) => bundle(pkg, bins)),
    ...todoCached.map(([pkg, cached]) => bundleCodeCached(pkg, cached)),
  ]);
  const names = [...todo.flatMap(([, bins]) => bins), ...todoCached.map(([, { bin }]) => bin)];
  console.log(
    names.length > 0
      ? `bundled ${names.join(', ')} in ${(performance.now() - t0).toFixed(0)} ms`
      : `bundles up to date (${(performance.now() - t0).toFixed(0)} ms)`,
  );
}
