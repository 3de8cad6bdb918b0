// Builds the npm package into pkg/: one shell per page, whatever mix of entries a page imports.
//
//   pkg/core.js     the shell (ES module): the wasm inside (the ladder, the machine, the options' rules,
//                   which every transport shares), the JavaScript half
//   pkg/index.js    the main entry (EventSource): a line over core.js
//   pkg/fetch.js    the fetch entry: core.js, and the fetch transport's JavaScript (registered when it runs)
//   pkg/websocket.js  the websocket entry: core.js, and ManagedWebSocket
//   pkg/testing.js  the testing entry: a virtual clock for core.js's clients, and a scripted server
//   pkg/*.cjs       the same in CommonJS (core.cjs shared the same way)
//   pkg/managed-eventsource.global.js   a classic <script src>, self-contained: defines `managedEventSource`
//   pkg/workerd/*.js, pkg/shell.wasm    the same entries for runtimes that compile no WebAssembly at run
//                   time (Cloudflare Workers: the `workerd` export condition), the shell's module precompiled
//
// Steps: cargo builds the crate for wasm32 with the `small` and `fetch` features (no_std, lol_alloc,
// a trap on panic); wasm-bindgen writes the glue; scripts/glue.mjs cuts from the glue what the package never
// calls, and scripts/wasm-names.mjs shortens the import and export names in the wasm and the glue together;
// wasm-opt -Oz (the npm binaryen: Debian's is too old) shrinks the wasm, and the glue's functions for imports
// it removed are dropped; the wasm is inlined as hex, which the shell decodes with the engine's own
// `Uint8Array.fromHex` on first use (a loop where that is missing). Rollup splits the entries from the
// shell (every room of src/web/ goes in core.js but those only one entry imports), and esbuild and terser
// minify each file. Every edit of wasm-bindgen's output is checked: a wasm-bindgen that writes something
// else fails the build with a message naming the step (tests/node/glue.test.mjs holds each step to a fixture).
//
// It also builds pkg-demo/: the crate with the `demo` feature (the storm simulator in wasm), which only the
// demo pages load.
//
//   node scripts/build.mjs               build
//   node scripts/build.mjs --if-missing  build only when pkg/ is older than the sources
//   node scripts/build.mjs --no-demo     skip pkg-demo/

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build as esbuild } from 'esbuild';
import { minify } from 'terser';
import { minifyNames } from './wasm-names.mjs';
import { diet, pruneImports } from './glue.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'pkg');
const workRoot = join(root, 'target', 'pkg-build');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const say = (msg) => console.log(`[build] ${msg}`);
const gz = (buf) => gzipSync(buf, { level: 9 }).length;

function newest(path) {
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  let t = 0;
  for (const entry of readdirSync(path)) t = Math.max(t, newest(join(path, entry)));
  return t;
}

function upToDate() {
  const entry = join(pkg, 'index.js');
  if (!existsSync(entry) || !existsSync(join(root, 'pkg-demo', 'demo.js'))) return false;
  const inputs = ['src', 'Cargo.toml', 'Cargo.lock', 'scripts/build.mjs', 'scripts/wasm-names.mjs', 'scripts/glue.mjs', 'README.md'];
  return statSync(entry).mtimeMs >= Math.max(...inputs.map((p) => newest(join(root, p))));
}

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`[build] failed: ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

/** The features current rustc emits for wasm32-unknown-unknown, which wasm-opt must accept. */
const FEATURES = ['bulk-memory', 'mutable-globals', 'nontrapping-float-to-int', 'sign-ext', 'reference-types', 'multivalue'];

/** wasm-opt -Oz in place. */
function optimize(wasm, extra = []) {
  const before = statSync(wasm).size;
  run(bin('wasm-opt'), ['-Oz', ...extra, ...FEATURES.map((f) => `--enable-${f}`), '--strip-debug', '--strip-producers', wasm, '-o', wasm]);
  say(`wasm-opt -Oz ${relative(root, wasm)}: ${before} -> ${statSync(wasm).size} bytes`);
}

/**
 * esbuild bundles and minifies; terser then compresses the result again (three passes, none of its unsafe
 * transforms), which takes about 0.3 kB more off a page's gzip.
 */
async function bundle(entry, out, format, args = []) {
  run(bin('esbuild'), [entry, '--bundle', '--minify', '--target=es2022', '--log-level=warning', '--legal-comments=none', '--sourcemap=external', `--format=${format}`, `--outfile=${out}`, ...args]);
  const map = JSON.parse(readFileSync(`${out}.map`, 'utf8'));
  const small = await minify(readFileSync(out, 'utf8'), { ecma: 2020, module: format === 'esm', compress: { passes: 3 }, sourceMap: { asObject: true } });
  await writeWithMap(out, small.code, [small.map, map]);
}

/** Where buildCheck leaves the option check's module, for each flavour's entry. */
const checkPath = join(workRoot, 'check.wasm');

/**
 * The option check (src/check.rs): the crate built with the `check` feature instead of the shell, the
 * module a first constructor runs. At opt-level 3, where the one export inlines what it calls and the
 * errors' strings, which it never returns, mostly go: 2.3 kB against 3.5 at the crate's "z".
 */
function buildCheck() {
  say('cargo rustc --release --target wasm32-unknown-unknown --features small,check (opt-level 3, a 64 KiB stack)');
  // A 64 KiB stack rather than rustc's 1 MiB: the check needs a few hundred bytes of it, and each instance
  // reserves its whole memory (17 pages before, 2 now), which a page that makes many (a test that imports
  // fresh copies of the package) runs out of. Given to the last crate only, so no dependency rebuilds.
  run('cargo', ['rustc', '--release', '--target', 'wasm32-unknown-unknown', '--lib', '--crate-type', 'cdylib', '--features', 'small,check', '--', '-C', 'link-arg=-zstack-size=65536'], { CARGO_PROFILE_RELEASE_OPT_LEVEL: '3' });
  mkdirSync(workRoot, { recursive: true });
  copyFileSync(join(root, 'target', 'wasm32-unknown-unknown', 'release', 'managed_eventsource.wasm'), checkPath);
  optimize(checkPath, ['--converge', '--strip-target-features', '--low-memory-unused']);
  const names = WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(checkPath))).map((e) => e.name);
  if (!['check', 'memory', 'numbers', 'units'].every((n) => names.includes(n))) {
    console.error(`[build] failed: the option check's module exports ${names.join(', ')}, not check, memory, numbers and units`);
    process.exit(1);
  }
}

/** What every entry of the package exports from the JavaScript half's top room. */
const API = 'ManagedEventSource, createManagedStream, prepare';

/**
 * The entries: each a few lines over the one shell (core.js), naming what it adds. The fetch entry
 * registers its transport into the shell's table of transports (api.js's `addTransport`), which every
 * entry's class then has: a page that imports it anywhere has one ManagedEventSource that takes both. The
 * share entry registers sharing across tabs (`addSharing`) the same way.
 */
const ENTRIES = {
  index: () => `export { ${API} } from './core.js';\n`,
  fetch: (s) => `import { addTransport } from '${s}/api.js';
import { awaitingEventSource, fetchTransport } from '${s}/fetch.js';
export { ${API} } from './core.js';
addTransport('fetch', fetchTransport);
addTransport('eventsource', awaitingEventSource);
`,
  websocket: (s) => `export { ${API} } from './core.js';
export { ManagedWebSocket } from '${s}/socket.js';
`,
  share: (s) => `import { addSharing } from '${s}/api.js';
import { sharing, startShared } from '${s}/share.js';
export { ${API} } from './core.js';
addSharing({ sharing, startShared });
`,
  // The testing entry: a virtual clock the clients' timers run on and a scripted server; no client of its own.
  testing: (s) => `export { createVirtualClock, scriptServer } from '${s}/testing.js';
`,
};

/** The entries beside the main one: each has its types in src/web/<name>.d.ts and its own export. */
const ADDED = Object.keys(ENTRIES).filter((name) => name !== 'index');

/** The rooms only one entry imports, which go in that entry's file rather than in the shell's. */
const ENTRY_ROOMS = { 'fetch.js': 'fetch', 'parse.js': 'fetch', 'socket.js': 'websocket', 'share.js': 'share', 'testing.js': 'testing' };

/**
 * Rollup's split of the entries (work/<entry>.js) from the shell: every room but an entry's own goes in the
 * shell's chunk, `core`, whichever entries import it. `write(format, ext, dir)` minifies each file into
 * pkg/`dir` with its source map, and returns the chunks.
 */
async function splitEntries(work, options = {}) {
  const { rollup } = await import('rollup');
  const bundle = await rollup({
    input: Object.fromEntries(Object.keys(ENTRIES).map((name) => [name, join(work, `${name}.js`)])),
    onwarn: (w) => {
      console.error(`[build] failed: rollup: ${w.message}`);
      process.exit(1);
    },
    ...options,
  });
  const entryFiles = new Set(Object.keys(ENTRIES).map((n) => join(work, `${n}.js`)));
  const manualChunks = (id) => (id.startsWith(work) && !entryFiles.has(id) && !ENTRY_ROOMS[id.split('/').at(-1)] ? 'core' : undefined);
  return {
    async write(format, ext, dir = '') {
      const { output } = await bundle.generate({ format, entryFileNames: `[name].${ext}`, chunkFileNames: `[name].${ext}`, manualChunks, sourcemap: true });
      const chunks = output.filter((o) => o.type === 'chunk');
      for (const chunk of chunks) await minifyFile(join(pkg, dir, chunk.fileName), chunk.code, format === 'es' ? 'esm' : 'cjs', chunk.map);
      return chunks;
    },
    close: () => bundle.close(),
  };
}

/**
 * The shell: the crate built once, with the fetch transport's inputs (`small,fetch`), its wasm inlined in
 * pkg/core.js (ES module) and pkg/core.cjs, which every entry imports, so that a page that imports any mix
 * of entries and bindings compiles one module and runs one copy of the JavaScript half. Rollup splits the
 * entries from the shell; esbuild and then terser minify each file.
 */
async function buildShell() {
  const work = join(workRoot, 'shell');
  const features = 'small,fetch';
  say(`cargo build --release --target wasm32-unknown-unknown --features ${features}`);
  run('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown', '--lib', '--features', features]);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  run('wasm-bindgen', ['--target', 'web', '--out-dir', work, join(root, 'target', 'wasm32-unknown-unknown', 'release', 'managed_eventsource.wasm')]);

  const wasmPath = join(work, 'managed_eventsource_bg.wasm');
  const gluePath = join(work, 'managed_eventsource.js');
  const named = minifyNames(readFileSync(wasmPath), diet(readFileSync(gluePath, 'utf8')));
  writeFileSync(wasmPath, named.wasm);
  writeFileSync(gluePath, named.glue);
  say(`shortened the wasm's import and export names: ${named.saved} bytes of wasm`);
  // A copy with its names kept, for the size report's breakdown (scripts/size.mjs); not shipped.
  run(bin('wasm-opt'), ['-Oz', '--converge', '-g', ...FEATURES.map((f) => `--enable-${f}`), wasmPath, '-o', join(work, 'named.wasm')]);
  // --low-memory-unused: nothing lives below 1 KB (rustc puts the stack first, growing down from 1 MB, and
  // the data after it), so wasm-opt may fold more addresses into the loads' offsets.
  optimize(wasmPath, ['--converge', '--strip-target-features', '--low-memory-unused']);
  const wasm = readFileSync(wasmPath);
  const pruned = pruneImports(readFileSync(gluePath, 'utf8'), wasm);
  writeFileSync(gluePath, pruned.glue);
  say(`dropped ${pruned.dropped} of the glue's import functions the optimized module no longer imports`);

  // Hex, not base64: after the server's gzip, hex costs a page 1.7 kB less (a byte is two characters, so
  // gzip still sees the module's repeats byte for byte, which base64's 6-bit groups hide), and the engine
  // decodes either natively.
  writeFileSync(join(work, 'wasm.js'), `// The wasm module, hex-encoded (scripts/build.mjs).\nexport const data = '${wasm.toString('hex')}';\n`);
  writeFileSync(join(work, 'check.js'), `// The option check's module, hex-encoded (scripts/build.mjs).\nexport const check = '${readFileSync(checkPath).toString('hex')}';\n`);
  say(`shell: wasm ${wasm.length} bytes (gzip ${gz(wasm)}), inlined as ${wasm.length * 2} characters of hex (gzip ${gz(Buffer.from(wasm.toString('hex')))})`);

  // The shell: the glue and the modules' bytes given to the loader (src/web/loader.js), and the API. The hex
  // goes last, the shell's and then the option check's (wasm.js and check.js hold the same, for npm run
  // size): after the JavaScript, gzip's blocks mix the two alphabets less, which saves a page 0.3 kB. The
  // loader reads them only once a client needs the module, after every entry has run.
  const snippets = `./snippets/${readdirSync(join(work, 'snippets'))[0]}/src/web`;
  writeFileSync(
    join(work, 'core.js'),
    `import * as glue from './managed_eventsource.js';
import { install } from '${snippets}/loader.js';
export { ${API} } from '${snippets}/api.js';
install(glue, () => ({ shell, check }));
var shell = '${wasm.toString('hex')}';
var check = '${readFileSync(checkPath).toString('hex')}';
`,
  );
  for (const [name, source] of Object.entries(ENTRIES)) writeFileSync(join(work, `${name}.js`), source(snippets));
  const split = await splitEntries(work);
  for (const [format, ext] of [['es', 'js'], ['cjs', 'cjs']]) {
    const output = await split.write(format, ext);
    const names = output.map((o) => o.fileName).sort();
    const want = [...Object.keys(ENTRIES), 'core'].map((n) => `${n}.${ext}`).sort();
    if (names.join() !== want.join()) {
      console.error(`[build] failed: rollup wrote ${names.join(', ')}, not ${want.join(', ')}`);
      process.exit(1);
    }
  }
  await split.close();
  await buildWorkerd(work, snippets, wasm);
  return work;
}

/**
 * The `workerd` build, for runtimes that compile no WebAssembly at run time (Cloudflare Workers): the same
 * entries over a shell that imports its module compiled ahead, as a `.wasm` module (pkg/shell.wasm, which
 * Workers and wrangler give as a WebAssembly.Module), with no hex and no option check. ES modules in
 * pkg/workerd/, which the package's `workerd` export condition names.
 */
async function buildWorkerd(work, snippets, wasm) {
  writeFileSync(join(pkg, 'shell.wasm'), wasm);
  mkdirSync(join(pkg, 'workerd'));
  const core = join(work, 'core-workerd.js');
  writeFileSync(
    core,
    `import * as glue from './managed_eventsource.js';
import { install } from '${snippets}/loader.js';
import shell from '../shell.wasm';
export { ${API} } from '${snippets}/api.js';
install(glue, () => ({ shell: null, check: null }), shell);
`,
  );
  const split = await splitEntries(work, {
    makeAbsoluteExternalsRelative: false,
    plugins: [
      {
        name: 'workerd-shell',
        resolveId: (id, from) => (id === './core.js' && from?.startsWith(work) ? core : id === '../shell.wasm' ? { id, external: true } : null),
      },
    ],
  });
  await split.write('es', 'js', 'workerd');
  await split.close();
}

/**
 * esbuild minifies `code` (one file of the split build, its imports kept; `map` rollup's source map of it),
 * terser compresses the result again (three passes, none of its unsafe transforms), which takes about
 * 0.3 kB more off a page's gzip, and the file goes to `out`, with its source map beside it (`out`.map).
 */
async function minifyFile(out, code, format, map) {
  const { transform } = await import('esbuild');
  const min = await transform(code, { minify: true, target: 'es2022', format, legalComments: 'none', logLevel: 'warning', sourcemap: 'external', sourcefile: 'rolled.js' });
  const small = await minify(min.code, { ecma: 2020, module: format === 'esm', compress: { passes: 3 }, sourceMap: { content: min.map, asObject: true } });
  await writeWithMap(out, small.code, [small.map, map]);
}

/**
 * Writes `code` to `out` with the V8 compile hint on its first line, and its source map, composed from
 * `maps` (the last step's first, each mapping the output of the step before it), to `out`.map: every source
 * named as it stands in the repository (src/web/..., the glue as glue.js), its text inside, so that a
 * user's stack trace and debugger name our functions and files.
 */
async function writeWithMap(out, code, maps) {
  const { default: remapping } = await import('@jridgewell/remapping');
  const map = remapping(maps, () => null);
  map.sources = map.sources.map((s) => (s.includes('/src/web/') ? `managed-eventsource/src/web/${s.split('/src/web/')[1]}` : s.endsWith('managed_eventsource.js') ? 'managed-eventsource/glue.js' : `managed-eventsource/${s.split('/').at(-1)}`));
  // The few lines the build writes (the shell's, with the modules' hex, and each entry's) are named, not
  // carried: only our sources and the glue are.
  map.sourcesContent = map.sourcesContent.map((text, i) => (/\/(src\/|glue\.js$)/.test(map.sources[i]) ? text : null));
  map.file = basename(out);
  // The hint's line comes first: every mapping moves down one line.
  map.mappings = `;${map.mappings}`;
  // V8's explicit compile hint (Chrome 136): compile every function of the file with the file, rather
  // than each on its first call. A client's first construct calls most of them, and compiling them one at
  // a time then cost it about 4 ms in a fresh Chromium (npm run bench:startup); other engines ignore it.
  writeFileSync(out, `//# allFunctionsCalledOnLoad\n${code}\n//# sourceMappingURL=${basename(out)}.map\n`);
  writeFileSync(`${out}.map`, JSON.stringify(map));
}

/** The library: the shell and its entries (main, fetch, websocket), and the classic script. */
async function buildLibrary() {
  rmSync(pkg, { recursive: true, force: true });
  mkdirSync(pkg);
  buildCheck();
  const shell = await buildShell();
  writeFileSync(
    join(shell, 'global.js'),
    `import { ${API} } from './share.js';
export { ${API} };
/** The API is ready at once: ready resolves at once to the same three. */
export const ready = Promise.resolve({ ${API} });
`,
  );
  await bundle(join(shell, 'global.js'), join(pkg, 'managed-eventsource.global.js'), 'iife', ['--global-name=managedEventSource']);
  for (const f of ['core.js', ...Object.keys(ENTRIES).map((name) => `${name}.js`), 'core.cjs', 'index.cjs', 'managed-eventsource.global.js']) {
    const b = readFileSync(join(pkg, f));
    say(`pkg/${f}: ${b.length} bytes, gzip ${gz(b)}`);
  }
}

/**
 * The framework bindings, one entry each: src/bindings/<name>.js (with src/bindings/connect.js bundled in)
 * as pkg/<name>.js and .cjs, and src/bindings/<name>.d.ts as pkg/<name>.d.ts and .d.cts, the framework
 * (`peer`, at `range`) an optional peer dependency. A binding's `import ... from 'managed-eventsource'` is
 * written as './index.js' ('./index.cjs' in CommonJS): the same file the user's own import of the package
 * resolves to, so both share one module and one wasm instance, with or without a bundler. `esmOnly`: no
 * CommonJS build, as the framework ships none (Angular).
 */
export const BINDINGS = [
  { name: 'react', peer: 'react', range: '>=18.0.0' },
  { name: 'vue', peer: 'vue', range: '^3.3.0' },
  { name: 'svelte', peer: 'svelte', range: '^4.0.0 || ^5.0.0' },
  { name: 'solid', peer: 'solid-js', range: '^1.6.0' },
  { name: 'angular', peer: '@angular/core', range: '>=20.0.0', esmOnly: true },
  // The AI SDK's ChatTransport: over the fetch entry (its transport), typed against `ai`, which it never imports.
  { name: 'ai', peer: 'ai', range: '>=7.0.0', entry: 'fetch' },
];

const MAIN_ENTRY = { esm: './index.js', cjs: './index.cjs' };
const FETCH_ENTRY = { esm: './fetch.js', cjs: './fetch.cjs' };

async function buildBindings() {
  for (const { name, peer, esmOnly, entry } of BINDINGS) {
    for (const format of esmOnly ? ['esm'] : ['esm', 'cjs']) {
      const imported = entry === 'fetch' ? FETCH_ENTRY[format] : MAIN_ENTRY[format];
      const out = join(pkg, `${name}.${format === 'esm' ? 'js' : 'cjs'}`);
      await esbuild({
        entryPoints: [join(root, 'src', 'bindings', `${name}.js`)],
        bundle: true,
        minify: true,
        format,
        target: 'es2022',
        outfile: out,
        legalComments: 'none',
        logLevel: 'warning',
        sourcemap: 'external',
        external: [peer, `${peer}/*`],
        plugins: [
          {
            name: 'main-entry',
            setup(b) {
              b.onResolve({ filter: /^managed-eventsource$/ }, () => ({ path: MAIN_ENTRY[format], external: true }));
              b.onResolve({ filter: /^managed-eventsource\/fetch$/ }, () => ({ path: FETCH_ENTRY[format], external: true }));
            },
          },
        ],
      });
      const code = readFileSync(out, 'utf8');
      if (!code.includes(imported)) {
        console.error(`[build] failed: pkg/${name} does not import ${imported}`);
        process.exit(1);
      }
      // Its source map beside it, each source named as it stands in the repository.
      const map = JSON.parse(readFileSync(`${out}.map`, 'utf8'));
      map.sources = map.sources.map((s) => `managed-eventsource/src/bindings/${s.split('/').at(-1)}`);
      writeFileSync(`${out}.map`, JSON.stringify(map));
      writeFileSync(out, `${code}\n//# sourceMappingURL=${basename(out)}.map\n`);
    }
    bindingTypes(name, esmOnly);
    const b = readFileSync(join(pkg, `${name}.js`));
    say(`pkg/${name}.js: ${b.length} bytes, gzip ${gz(b)}`);
  }
  bindingTypes('bindings'); // the types the bindings share (src/bindings/bindings.d.ts)
}

/** src/bindings/<name>.d.ts as pkg/<name>.d.ts and .d.cts, its imports of the package (and of the shared
 * bindings.d.ts) made local to the format. */
function bindingTypes(name, esmOnly = false) {
  const types = readFileSync(join(root, 'src', 'bindings', `${name}.d.ts`), 'utf8');
  const local = (ext) =>
    types
      .replaceAll("from 'managed-eventsource'", `from './index.${ext}'`)
      .replaceAll("from 'managed-eventsource/fetch'", `from './fetch.${ext}'`)
      .replaceAll("from './bindings.js'", `from './bindings.${ext}'`);
  writeFileSync(join(pkg, `${name}.d.ts`), local('js'));
  if (!esmOnly) writeFileSync(join(pkg, `${name}.d.cts`), local('cjs'));
}

/** Types, licences, README and package.json. */
function buildManifest() {
  const types = readFileSync(join(root, 'src', 'web', 'index.d.ts'), 'utf8');
  writeFileSync(join(pkg, 'index.d.ts'), types);
  writeFileSync(join(pkg, 'index.d.cts'), types);
  copyFileSync(join(root, 'src', 'web', 'global.d.ts'), join(pkg, 'managed-eventsource.global.d.ts'));
  copyFileSync(join(root, 'src', 'web', 'disposable.d.ts'), join(pkg, 'disposable.d.ts'));
  for (const name of ADDED) {
    const entryTypes = readFileSync(join(root, 'src', 'web', `${name}.d.ts`), 'utf8');
    writeFileSync(join(pkg, `${name}.d.ts`), entryTypes);
    writeFileSync(join(pkg, `${name}.d.cts`), entryTypes.replaceAll("'./index.js'", "'./index.cjs'"));
  }
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE']) copyFileSync(join(root, f), join(pkg, f));
  // managed-eventsource/server ships readable (bundled from src/server/, not minified, no wasm), as an ES
  // module and a CommonJS copy. `redis` stays an import() inside createRedisStore, so the module loads
  // without it (an optional peer dependency).
  for (const [format, out] of [['esm', 'server.js'], ['cjs', 'server.cjs']]) {
    run(bin('esbuild'), [join(root, 'src', 'server', 'index.js'), '--bundle', '--platform=node', `--format=${format}`, '--target=es2022', '--external:redis', '--log-level=warning', `--outfile=${join(pkg, out)}`]);
  }
  const serverTypes = readFileSync(join(root, 'src', 'server', 'index.d.ts'), 'utf8');
  writeFileSync(join(pkg, 'server.d.ts'), serverTypes);
  writeFileSync(join(pkg, 'server.d.cts'), serverTypes);
  const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
  const field = (name) => cargo.match(new RegExp(`^${name} = "([^"]*)"`, 'm'))?.[1];
  // `workerd` first: Cloudflare Workers (and wrangler, which resolves it) take the build whose shell is a
  // precompiled .wasm module; every other runtime the one whose shell compiles its inlined module.
  const main = {
    workerd: { types: './index.d.ts', default: './workerd/index.js' },
    import: { types: './index.d.ts', default: './index.js' },
    require: { types: './index.d.cts', default: './index.cjs' },
  };
  const manifest = {
    name: 'managed-eventsource',
    version: field('version'),
    description: field('description'),
    license: field('license'),
    repository: { type: 'git', url: field('repository') },
    keywords: ['eventsource', 'sse', 'server-sent-events', 'reconnect', 'backoff', 'jitter', 'wasm'],
    type: 'module',
    main: './index.cjs',
    module: './index.js',
    types: './index.d.ts',
    exports: {
      '.': main,
      './node': main,
      './global': { types: './managed-eventsource.global.d.ts', default: './managed-eventsource.global.js' },
      // Each added entry: the workerd build for Workers, else ES or CommonJS, each with its types.
      ...Object.fromEntries(
        ADDED.map((name) => [
          `./${name}`,
          {
            workerd: { types: `./${name}.d.ts`, default: `./workerd/${name}.js` },
            import: { types: `./${name}.d.ts`, default: `./${name}.js` },
            require: { types: `./${name}.d.cts`, default: `./${name}.cjs` },
          },
        ]),
      ),
      './server': {
        import: { types: './server.d.ts', default: './server.js' },
        require: { types: './server.d.cts', default: './server.cjs' },
      },
      ...Object.fromEntries(
        BINDINGS.map(({ name, esmOnly }) => [
          `./${name}`,
          esmOnly
            ? { types: `./${name}.d.ts`, default: `./${name}.js` }
            : { import: { types: `./${name}.d.ts`, default: `./${name}.js` }, require: { types: `./${name}.d.cts`, default: `./${name}.cjs` } },
        ]),
      ),
      './disposable': { types: './disposable.d.ts' },
      './package.json': './package.json',
    },
    files: ['core.js', 'core.cjs', 'index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', ...ADDED.flatMap((name) => ['js', 'cjs', 'd.ts', 'd.cts'].map((e) => `${name}.${e}`)), 'managed-eventsource.global.js', 'managed-eventsource.global.d.ts', 'disposable.d.ts', 'server.js', 'server.cjs', 'server.d.ts', 'server.d.cts', ...BINDINGS.flatMap(({ name, esmOnly }) => (esmOnly ? ['js', 'd.ts'] : ['js', 'cjs', 'd.ts', 'd.cts']).map((e) => `${name}.${e}`)), 'bindings.d.ts', 'bindings.d.cts', '*.map', 'workerd/*.js', 'workerd/*.map', 'shell.wasm', 'LICENSE-MIT', 'LICENSE-APACHE'],
    unpkg: './managed-eventsource.global.js',
    jsdelivr: './managed-eventsource.global.js',
    // The fetch entry registers its transport when it runs, the share entry sharing across tabs: a bundler
    // must run them, though what they export is the shell's. Every other file may be dropped when nothing
    // of it is used.
    sideEffects: ['./fetch.js', './fetch.cjs', './workerd/fetch.js', './share.js', './share.cjs', './workerd/share.js'],
    peerDependencies: { redis: '^6.0.0', ...Object.fromEntries(BINDINGS.map(({ peer, range }) => [peer, range])) },
    peerDependenciesMeta: Object.fromEntries(['redis', ...BINDINGS.map(({ peer }) => peer)].map((p) => [p, { optional: true }])),
    engines: { node: '>=20' },
  };
  writeFileSync(join(pkg, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  say(`pkg/ ready: ${manifest.name}@${manifest.version}`);
}

function buildDemo() {
  say('wasm-pack build --features demo into pkg-demo/ (the storm simulator for the demo pages)');
  run('wasm-pack', ['build', '--release', '--target', 'web', '--out-dir', 'pkg-demo', '--out-name', 'demo', '--no-pack', '--', '--features', 'small,demo']);
  optimize(join(root, 'pkg-demo', 'demo_bg.wasm'));
}

export async function build({ demo = true } = {}) {
  await buildLibrary();
  await buildBindings();
  buildManifest();
  if (demo) buildDemo();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--if-missing') && upToDate()) say('pkg/ is up to date');
  else await build({ demo: !process.argv.includes('--no-demo') });
}
