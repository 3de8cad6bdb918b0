// Builds the npm package into pkg/, one self-contained file per flavour, with the wasm inside:
//
//   pkg/index.js    ES module: browsers, bundlers (Vite, webpack, esbuild, Rollup), workers, Node
//   pkg/index.cjs   CommonJS: require('managed-eventsource')
//   pkg/managed-eventsource.global.js   a classic <script src>: defines the global `managedEventSource`
//
// Steps: cargo builds the crate for wasm32 with the `small` feature (no_std, lol_alloc, a trap on panic);
// wasm-bindgen writes the glue; scripts/wasm-names.mjs shortens the import and export names in the wasm
// and the glue together; wasm-opt -Oz (the npm binaryen: Debian's is too old) shrinks the wasm; LZMA
// compresses it (the npm `lzma`, about 7% smaller than zopfli's deflate) and it is inlined as base64, which
// src/web/unlzma.js
// decodes synchronously on first use; esbuild bundles and minifies the glue, src/web/api.js and the entry
// into each flavour.
//
// It also builds pkg-demo/: the crate with the `demo` feature (the storm simulator in wasm), which only the
// demo pages load.
//
//   node scripts/build.mjs               build
//   node scripts/build.mjs --if-missing  build only when pkg/ is older than the sources
//   node scripts/build.mjs --no-demo     skip pkg-demo/

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { minify } from 'terser';
import { minifyNames } from './wasm-names.mjs';
import { clearDeadText } from './wasm-data.mjs';
import { unlzma } from '../src/web/unlzma.js';

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
  const inputs = ['src', 'Cargo.toml', 'Cargo.lock', 'scripts/build.mjs', 'scripts/wasm-names.mjs', 'README.md'];
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

/**
 * The npm `lzma` encoder with the literal and position context bits at 0 (lc = lp = pb = 0) instead of the
 * 3, 0, 2 it always writes: wasm code gains nothing from them, and the stream comes out about 1% smaller
 * (72 bytes). The encoder has no option for them (lp is already 0), so its source is run with its one setting
 * of lc and pb changed; each change must match, so another version of the package fails the build here.
 */
function lzmaEncoder() {
  const require = createRequire(import.meta.url);
  let src = readFileSync(require.resolve('lzma/src/lzma_worker.js'), 'utf8');
  for (const [from, to] of [
    ['encoder._numLiteralContextBits = 3;', 'encoder._numLiteralContextBits = 0;'],
    ['encoder._posStateBits = 2;', 'encoder._posStateBits = 0;'],
    ['encoder._posStateMask = 3;', 'encoder._posStateMask = 0;'],
  ]) {
    if (!src.includes(from)) throw new Error(`build: the lzma package has changed; no ${from}`);
    src = src.replace(from, to);
  }
  return runInNewContext(`${src}\n;LZMA_WORKER`, { Uint8Array, Array, Math, Error, setTimeout, console });
}

/**
 * The wasm, LZMA-compressed (see `lzmaEncoder`): the smallest of the encoder's nine modes (they differ by a
 * few bytes, not always in order). The result is decoded with the package's own decoder and must give the
 * module back.
 */
function compress(wasm) {
  const LZMA = lzmaEncoder();
  let best;
  for (let mode = 1; mode <= 9; mode++) {
    const c = Buffer.from(Uint8Array.from(LZMA.compress(wasm, mode)));
    if (!best || c.length < best.length) best = c;
  }
  if (!Buffer.from(unlzma(best, wasm.length)).equals(wasm)) throw new Error('build: the compressed wasm does not decode back');
  return best;
}

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
  run(bin('esbuild'), [entry, '--bundle', '--minify', '--target=es2022', '--log-level=warning', '--legal-comments=none', `--format=${format}`, `--outfile=${out}`, ...args]);
  const { code } = await minify(readFileSync(out, 'utf8'), { ecma: 2020, module: format === 'esm', compress: { passes: 3 } });
  writeFileSync(out, code);
}

/**
 * Removes from wasm-bindgen's glue what the package never calls, which a bundler cannot see is unused:
 * the async loader (the wasm is inlined), the TextEncoder path for a missing `realloc`
 * (the glue always passes one), Safari's TextDecoder renewal every 2 GB decoded (wasm hands JavaScript a
 * few short strings: the words of an option error, the names an option is compared with), and a stand-in
 * for `TextEncoder.encodeInto`, which every browser with
 * class private fields has (the package's classes need them: Chrome 74, Firefox 90, Safari 14.1), as does
 * Node since version 12. Each cut must match, so a new wasm-bindgen fails the build here
 * rather than shipping something half-cut; the two about strings only where the glue passes strings to
 * wasm (the EventSource build passes none; ManagedWebSocket's passes a close reason).
 */
function diet(glue) {
  const strings = glue.includes('function passStringToWasm0');
  const cuts = [
    [/\n    if \(realloc === undefined\) \{[\s\S]*?\n    \}\n/, '\n', strings],
    [/\nasync function __wbg_load\([\s\S]*?\n\}\n/, '\n'],
    [/\nlet __wbg_init_promise;[\s\S]*?\nasync function __wbg_init_once\([\s\S]*?\n\}\n/, '\n'],
    [/export \{ initSync, __wbg_init as default \};/, 'export { initSync };'],
    [/\nif \(!\('encodeInto' in cachedTextEncoder\)\) \{[\s\S]*?\n\}\n/, '\n', strings],
    [/\n    if \(module !== undefined\) \{[\s\S]*?console\.warn[\s\S]*?\n    \}\n/, "\n    ({ module } = module);\n"],
    [/\nconst MAX_SAFARI_DECODE_BYTES = \d+;\nlet numBytesDecoded = 0;\nfunction decodeText\(bytes\) \{[\s\S]*?\n\}\n/, '\nconst decodeText = (bytes) => cachedTextDecoder.decode(bytes);\n'],
  ];
  for (const [re, by, applies = true] of cuts) {
    if (!applies) continue;
    if (!re.test(glue)) throw new Error(`build: wasm-bindgen's glue has changed; no match for ${re}`);
    glue = glue.replace(re, by);
  }
  return glue;
}

/**
 * Drops from the glue the functions it hands the module for imports the module no longer has: wasm-opt
 * removes an import once the code that called it is gone (such as wasm-bindgen's `throw` for a panic path
 * the shipped build traps on instead), but the glue was written before.
 */
function pruneImports(glue, wasm) {
  const imported = new Set(WebAssembly.Module.imports(new WebAssembly.Module(wasm)).map((i) => `${i.module}.${i.name}`));
  const ns = glue.match(/\n {8}(\w+): import0,/)?.[1];
  const block = glue.match(/\n {4}const import0 = \{\n {8}__proto__: null,\n([\s\S]*?)\n {4}\};/);
  if (!ns || !block) throw new Error("build: wasm-bindgen's glue has changed; no import0 object");
  const entries = block[1].split(/\n(?= {8}\w+: )/);
  const kept = entries.filter((e) => imported.has(`${ns}.${e.match(/^ {8}(\w+):/)[1]}`));
  return { glue: glue.replace(block[1], kept.join('\n')), dropped: entries.length - kept.length };
}

/**
 * One module: the crate built with `features`, its wasm inlined, bundled into `pkg/<name>.js` (ES module)
 * and `pkg/<name>.cjs`, exporting what `entry` (given the glue and snippet paths) exports.
 */
async function buildModule({ name, features, entry }) {
  const work = join(workRoot, name);
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
  const { wasm, cleared } = clearDeadText(readFileSync(wasmPath));
  writeFileSync(wasmPath, wasm);
  say(`zeroed ${cleared.reduce((n, s) => n + s.length, 0)} bytes of text nothing reads: ${cleared.map((s) => JSON.stringify(s.length > 40 ? s.slice(0, 37) + '...' : s)).join(', ')}`);
  const pruned = pruneImports(readFileSync(gluePath, 'utf8'), wasm);
  writeFileSync(gluePath, pruned.glue);
  say(`dropped ${pruned.dropped} of the glue's import functions the optimized module no longer imports`);

  const packed = compress(wasm);
  writeFileSync(
    join(work, 'wasm.js'),
    `// The wasm module, LZMA-compressed and base64-encoded (scripts/build.mjs).\nexport const size = ${wasm.length};\nexport const data = '${packed.toString('base64')}';\n`,
  );
  say(`${name}: wasm ${wasm.length} bytes (gzip ${gz(wasm)}), compressed to ${packed.length} and inlined as ${Math.ceil(packed.length / 3) * 4} characters of base64`);

  const snippets = `./snippets/${readdirSync(join(work, 'snippets'))[0]}/src/web`;
  const unlzma = relative(work, join(root, 'src', 'web', 'unlzma.js'));
  writeFileSync(
    join(work, 'entry.js'),
    `import * as glue from './managed_eventsource.js';
import { unlzma } from './${unlzma}';
import { size, data } from './wasm.js';
${entry(snippets)}

// The wasm is compiled on first use, synchronously: it is far below the largest module browsers compile on
// the main thread (see the README).
let ready = false;
function init() {
  if (ready) return;
  try {
    glue.initSync({ module: unlzma(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)), size) });
  } catch (e) {
    if (/content.security|CSP/i.test(String(e?.message))) {
      throw new Error("managed-eventsource: this page's Content-Security-Policy does not let it compile WebAssembly; add 'wasm-unsafe-eval' to script-src", { cause: e });
    }
    throw e;
  }
  ready = true;
}
`,
  );
  await bundle(join(work, 'entry.js'), join(pkg, `${name}.js`), 'esm');
  await bundle(join(work, 'entry.js'), join(pkg, `${name}.cjs`), 'cjs');
  return work;
}

/** The library: the main module (EventSource), the websocket module (both), and the classic script. */
async function buildLibrary() {
  rmSync(pkg, { recursive: true, force: true });
  mkdirSync(pkg);
  const main = await buildModule({
    name: 'index',
    features: 'small',
    entry: (s) => `import { define } from '${s}/api.js';
export { ManagedEventSource, createManagedStream } from '${s}/api.js';
define({ ...glue, shell: (...args) => (init(), glue.shell(...args)) });`,
  });
  await buildModule({
    name: 'websocket',
    features: 'small,websocket',
    entry: (s) => `import { define } from '${s}/api.js';
import { defineSocket } from '${s}/socket.js';
export { ManagedEventSource, createManagedStream } from '${s}/api.js';
export { ManagedWebSocket } from '${s}/socket.js';
define({ ...glue, shell: (...args) => (init(), glue.shell(...args)) });
defineSocket({ ...glue, socket: (...args) => (init(), glue.socket(...args)) });`,
  });
  writeFileSync(
    join(main, 'global.js'),
    `import { ManagedEventSource, createManagedStream } from './entry.js';
export { ManagedEventSource, createManagedStream };
/** The API is ready at once; the promise is kept for pages written against earlier versions. */
export const ready = Promise.resolve({ ManagedEventSource, createManagedStream });
`,
  );
  await bundle(join(main, 'global.js'), join(pkg, 'managed-eventsource.global.js'), 'iife', ['--global-name=managedEventSource']);
  for (const f of ['index.js', 'index.cjs', 'websocket.js', 'websocket.cjs', 'managed-eventsource.global.js']) {
    const b = readFileSync(join(pkg, f));
    say(`pkg/${f}: ${b.length} bytes, gzip ${gz(b)}`);
  }
}

/** Types, licences, README and package.json. */
function buildManifest() {
  const types = readFileSync(join(root, 'src', 'web', 'index.d.ts'), 'utf8');
  writeFileSync(join(pkg, 'index.d.ts'), types);
  writeFileSync(join(pkg, 'index.d.cts'), types);
  copyFileSync(join(root, 'src', 'web', 'global.d.ts'), join(pkg, 'managed-eventsource.global.d.ts'));
  copyFileSync(join(root, 'src', 'web', 'disposable.d.ts'), join(pkg, 'disposable.d.ts'));
  const socketTypes = readFileSync(join(root, 'src', 'web', 'websocket.d.ts'), 'utf8');
  writeFileSync(join(pkg, 'websocket.d.ts'), socketTypes);
  writeFileSync(join(pkg, 'websocket.d.cts'), socketTypes.replaceAll("'./index.js'", "'./index.cjs'"));
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE']) copyFileSync(join(root, f), join(pkg, f));
  const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
  const field = (name) => cargo.match(new RegExp(`^${name} = "([^"]*)"`, 'm'))?.[1];
  const main = {
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
      './websocket': {
        import: { types: './websocket.d.ts', default: './websocket.js' },
        require: { types: './websocket.d.cts', default: './websocket.cjs' },
      },
      './disposable': { types: './disposable.d.ts' },
      './package.json': './package.json',
    },
    files: ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', 'websocket.js', 'websocket.cjs', 'websocket.d.ts', 'websocket.d.cts', 'managed-eventsource.global.js', 'managed-eventsource.global.d.ts', 'disposable.d.ts', 'LICENSE-MIT', 'LICENSE-APACHE'],
    unpkg: './managed-eventsource.global.js',
    jsdelivr: './managed-eventsource.global.js',
    sideEffects: false,
    engines: { node: '>=18' },
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
  buildManifest();
  if (demo) buildDemo();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--if-missing') && upToDate()) say('pkg/ is up to date');
  else await build({ demo: !process.argv.includes('--no-demo') });
}
