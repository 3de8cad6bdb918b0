// Builds the npm package into pkg/: wasm-pack (release, --target web), wasm-opt -Oz from the npm
// package binaryen (Debian's wasm-opt 108 cannot read modules from current rustc), and two small entry
// files that load the wasm themselves, so no user has to call init():
//
//   pkg/index.js   browsers and bundlers; also `<script type="module">` straight from a page
//   pkg/node.js    Node (with an EventSource global) and other runtimes without fetch for file URLs
//   pkg/managed-eventsource.global.js   a classic `<script src>`: defines `managedEventSource.ready`, a
//                  promise of the API (wasm-bindgen's no-modules glue, with its own copy of the wasm)
//
// It also builds pkg-demo/: the same crate with the `demo` feature (the storm simulator in wasm), which
// only the demo pages load, so that the library's package does not carry it.
//
//   node scripts/build.mjs               build
//   node scripts/build.mjs --if-missing  build only when pkg/ is older than the sources

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'pkg');
const say = (msg) => console.log(`[build] ${msg}`);

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function upToDate() {
  const entry = join(pkg, 'index.js');
  if (!existsSync(entry) || !existsSync(join(root, 'pkg-demo', 'demo.js'))) return false;
  const sources = Math.max(newest(join(root, 'src')), statSync(join(root, 'Cargo.toml')).mtimeMs, statSync(join(root, 'scripts', 'build.mjs')).mtimeMs);
  return statSync(entry).mtimeMs >= sources;
}

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`[build] failed: ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

/** wasm-opt -Oz in place, with the features current rustc emits for wasm32-unknown-unknown. */
function optimize(wasm) {
  const before = statSync(wasm).size;
  const features = ['bulk-memory', 'mutable-globals', 'nontrapping-float-to-int', 'sign-ext', 'reference-types', 'multivalue'];
  run(join(root, 'node_modules', '.bin', 'wasm-opt'), [
    '-Oz',
    ...features.map((f) => `--enable-${f}`),
    '--strip-debug',
    '--strip-producers',
    wasm,
    '-o',
    wasm,
  ]);
  say(`wasm-opt -Oz ${wasm.slice(root.length + 1)}: ${before} -> ${statSync(wasm).size} bytes`);
}

/** The classic-script flavour, from the wasm that wasm-pack just compiled (before the demo build replaces it). */
function buildClassic() {
  const name = 'managed-eventsource.global';
  const tmp = join(root, 'target', 'classic');
  rmSync(tmp, { recursive: true, force: true });
  run('wasm-bindgen', ['--target', 'no-modules', '--out-dir', tmp, '--out-name', 'classic', join(root, 'target', 'wasm32-unknown-unknown', 'release', 'managed_eventsource.wasm')]);
  const glue = readFileSync(join(tmp, 'classic.js'), 'utf8');
  // Wrapped, so the glue's own global `wasm_bindgen` stays private; it reads document.currentScript while
  // this runs, and loads the wasm from beside the script.
  const wrapped = `// managed-eventsource for a classic <script src>: managedEventSource.ready resolves to the API.
(function (root) {
${glue}
var api = wasm_bindgen;
root.managedEventSource = { ready: api().then(function () { return api; }) };
})(typeof self !== 'undefined' ? self : globalThis);
`;
  writeFileSync(join(tmp, 'wrapped.js'), wrapped);
  run(join(root, 'node_modules', '.bin', 'esbuild'), [join(tmp, 'wrapped.js'), '--minify', '--target=es2020', '--log-level=warning', `--outfile=${join(pkg, `${name}.js`)}`]);
  // The glue looks for its wasm at its own URL with .js replaced by _bg.wasm.
  const wasm = ['classic_bg.wasm', 'classic.wasm'].map((f) => join(tmp, f)).find(existsSync);
  copyFileSync(wasm, join(pkg, `${name}_bg.wasm`));
  optimize(join(pkg, `${name}_bg.wasm`));
  writeFileSync(
    join(pkg, `${name}.d.ts`),
    `// The global that pkg/${name}.js defines.
declare global {
  const managedEventSource: { ready: Promise<typeof import('./managed_eventsource.js')> };
}
export {};
`,
  );
  say(`pkg/${name}.js ready for a classic <script> tag`);
}

function buildDemo() {
  say('wasm-pack build --features demo into pkg-demo/ (the storm simulator for the demo pages)');
  run('wasm-pack', ['build', '--release', '--target', 'web', '--out-dir', 'pkg-demo', '--out-name', 'demo', '--no-pack', '--', '--features', 'small,demo']);
  optimize(join(root, 'pkg-demo', 'demo_bg.wasm'));
}

export function build() {
  say('wasm-pack build --release --target web (the first build compiles the crate graph, about a minute)');
  // `small`: no_std, a trap on panic and lol_alloc (see src/lib.rs).
  run('wasm-pack', ['build', '--release', '--target', 'web', '--out-dir', 'pkg', '--out-name', 'managed_eventsource', '--no-pack', '--', '--features', 'small']);

  optimize(join(pkg, 'managed_eventsource_bg.wasm'));
  const glue = join(pkg, 'managed_eventsource.js');
  const unminified = statSync(glue).size;
  run(join(root, 'node_modules', '.bin', 'esbuild'), [glue, '--minify', '--format=esm', '--target=es2020', '--log-level=warning', `--outfile=${glue}`, '--allow-overwrite']);
  say(`esbuild --minify managed_eventsource.js: ${unminified} -> ${statSync(glue).size} bytes`);

  writeFileSync(
    join(pkg, 'index.js'),
    `// managed-eventsource for browsers and bundlers: loads the wasm beside this file, then exports the API.
import init from './managed_eventsource.js';
await init({ module_or_path: new URL('./managed_eventsource_bg.wasm', import.meta.url) });
export * from './managed_eventsource.js';
`,
  );
  writeFileSync(
    join(pkg, 'node.js'),
    `// managed-eventsource for Node and other runtimes that cannot fetch a file URL. Needs an EventSource global.
import { readFileSync } from 'node:fs';
import { initSync } from './managed_eventsource.js';
initSync({ module: readFileSync(new URL('./managed_eventsource_bg.wasm', import.meta.url)) });
export * from './managed_eventsource.js';
`,
  );
  // wasm-bindgen's unchecked_param_type replaces a parameter's whole type, optional marker included:
  // the trailing options parameter is optional, as the Rust side (Option<JsValue>) already treats it.
  const dts = join(pkg, 'managed_eventsource.d.ts');
  const generated = readFileSync(dts, 'utf8');
  const fixed = generated.replaceAll('options: Options)', 'options?: Options)');
  if (fixed === generated) throw new Error('managed_eventsource.d.ts: no options parameter to mark optional');
  writeFileSync(dts, fixed);
  const types = `export * from './managed_eventsource.js';\n`;
  writeFileSync(join(pkg, 'index.d.ts'), types);
  writeFileSync(join(pkg, 'node.d.ts'), types);

  const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
  const field = (name) => cargo.match(new RegExp(`^${name} = "([^"]*)"`, 'm'))?.[1];
  const manifest = {
    name: 'managed-eventsource',
    version: field('version'),
    description: field('description'),
    license: field('license'),
    repository: { type: 'git', url: field('repository') },
    keywords: ['eventsource', 'sse', 'server-sent-events', 'reconnect', 'backoff', 'jitter', 'wasm'],
    type: 'module',
    main: './index.js',
    module: './index.js',
    types: './index.d.ts',
    exports: {
      '.': { types: './index.d.ts', node: './node.js', default: './index.js' },
      './node': { types: './node.d.ts', default: './node.js' },
      './raw': { types: './managed_eventsource.d.ts', default: './managed_eventsource.js' },
      './managed_eventsource_bg.wasm': './managed_eventsource_bg.wasm',
    },
    files: ['index.js', 'index.d.ts', 'node.js', 'node.d.ts', 'managed_eventsource.js', 'managed_eventsource.d.ts', 'managed_eventsource_bg.wasm', 'managed_eventsource_bg.wasm.d.ts', 'managed-eventsource.global.js', 'managed-eventsource.global.d.ts', 'managed-eventsource.global_bg.wasm'],
    unpkg: './managed-eventsource.global.js',
    jsdelivr: './managed-eventsource.global.js',
    sideEffects: ['./index.js', './node.js'],
  };
  writeFileSync(join(pkg, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  buildClassic();
  say(`pkg/ ready: ${manifest.name}@${manifest.version}`);
  buildDemo();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--if-missing') && upToDate()) say('pkg/ is up to date');
  else build();
}
