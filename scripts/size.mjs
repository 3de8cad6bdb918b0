// `npm run size`: what the package costs a page, gzip -9, with the JavaScript peers minified by esbuild in the
// same run as the baseline. With --write, also rewrites the size sections of README.md (per entry) and
// docs/performance.md (the parts as well).
//
// A page loads an entry and the shell it imports: pkg/index.js and pkg/core.js (ES module; the fetch and
// websocket entries the same way), pkg/index.cjs and pkg/core.cjs (CommonJS), or
// pkg/managed-eventsource.global.js (classic script). The shell carries the wasm inside (hex). The parts
// are measured from target/pkg-build/, which the build leaves behind.

import { writeSection } from './sections.mjs';
import { BINDINGS } from './build.mjs';
import { APPS, measureApps } from './size-apps.mjs';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(root, 'target', 'pkg-build', 'shell');
const gz = (buf) => gzipSync(buf, { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
/** What the smallest app (the main entry, one listener, onstatus) may load at most. */
const TARGET = 17.5 * 1024;
/** What any two entries together may load beyond the larger alone. */
const PAIR_BUDGET = 1024;

/** esbuild --minify of a file or of source text, as a bundler would ship it. */
function minified(path, args = []) {
  return execFileSync(join(root, 'node_modules', '.bin', 'esbuild'), [path, '--minify', '--format=esm', '--log-level=error', ...args], { maxBuffer: 1 << 26 });
}

/** Each way in: the files a page loads for it, each gzipped on its own (as a server sends them). */
const files = [
  ['ES module', ['index.js', 'core.js']],
  ['CommonJS', ['index.cjs', 'core.cjs']],
  ['classic <script>', ['managed-eventsource.global.js']],
  ['ES module with ManagedWebSocket', ['websocket.js', 'core.js']],
  ['ES module with the fetch transport', ['fetch.js', 'core.js']],
].map(([flavour, names]) => {
  const bs = names.map((f) => readFileSync(join(root, 'pkg', f)));
  return { flavour, file: names.map((f) => `pkg/${f}`).join(' + '), bytes: bs.reduce((n, b) => n + b.length, 0), gzip: bs.reduce((n, b) => n + gz(b), 0) };
});
const page = files[0].gzip;
/** managed-eventsource/server: for servers; no page loads it. */
const serverFile = readFileSync(join(root, 'pkg', 'server.js'));
const server = { bytes: serverFile.length, gzip: gz(serverFile) };

const parts = [];
if (existsSync(work)) {
  const wasm = readFileSync(join(work, 'managed_eventsource_bg.wasm'));
  const snippet = readdirSync(join(work, 'snippets'))[0];
  parts.push(['wasm (raw module)', wasm.length, gz(wasm)]);
  const data = readFileSync(join(work, 'wasm.js'), 'utf8').match(/'([^']+)'/)[1];
  parts.push(['wasm as shipped (hex)', data.length, gz(Buffer.from(data))]);
  // The option check's module (src/check.rs), which a client made before the shell's module is ready runs.
  const check = readFileSync(join(work, 'check.js'), 'utf8').match(/= '([^']+)'/)[1];
  parts.push(["the option check's wasm as shipped (hex)", check.length, gz(Buffer.from(check))]);
  const web = join(work, 'snippets', snippet, 'src', 'web');
  const glue = minified(join(work, 'managed_eventsource.js'));
  parts.push(["wasm-bindgen's glue (diet, names shortened), minified", glue.length, gz(glue)]);
  const half = minified(join(web, 'api.js'), ['--bundle']);
  parts.push(['src/web/*.js, bundled from api.js, minified', half.length, gz(half)]);
  for (const [file, what] of [
    ['api.js', 'public classes'],
    ['share.js', 'tab sharing'],
    ['iterate.js', 'async iteration'],
    ['client.js', 'record and lifecycle'],
    ['eventsource.js', 'EventSource transport'],
    ['connection.js', "a connection's events"],
    ['events.js', 'listeners, delivery, identity'],
    ['effects.js', 'control path'],
    ['loader.js', 'compile, instantiate, prepare'],
    ['options.js', 'reading options'],
    ['errors.js', 'errors'],
  ]) {
    const m = minified(join(web, file));
    parts.push([`  ${file} (${what}) alone, minified`, m.length, gz(m)]);
  }
}

const peers = [
  ['reconnecting-eventsource 1.6.5', 'node_modules/reconnecting-eventsource/build/esm/reconnecting-eventsource.js'],
  ['@microsoft/fetch-event-source 2.0.1', 'node_modules/@microsoft/fetch-event-source/lib/esm/index.js'],
]
  .filter(([, p]) => existsSync(join(root, p)))
  .map(([name, p]) => {
    const bundled = execFileSync(join(root, 'node_modules', '.bin', 'esbuild'), [join(root, p), '--bundle', '--minify', '--format=esm', '--log-level=error']);
    return { name, gzip: gz(bundled), ratio: page / gz(bundled) };
  });

/**
 * Where the wasm's bytes go, by module: twiggy (when installed: cargo install twiggy) on the module as
 * shipped but with its function names kept, after the same wasm-opt run.
 */
function breakdown() {
  const which = (cmd) => {
    try {
      return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  };
  if (!which('twiggy') || !existsSync(join(work, 'named.wasm'))) return null;
  const out = execFileSync('twiggy', ['top', '-n', '100000', '-f', 'csv', join(work, 'named.wasm')], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const groups = [
    ['the state machine and the ladder (machine.rs, ladder.rs, resume.rs)', /managed_eventsource::(machine|ladder|resume)::/],
    ['option checks (options.rs, boundary::options, read_options)', /managed_eventsource::(options|boundary::options|web::read_options)/],
    ['the shell: shell(), feed, the other exports (web/)', /managed_eventsource::web::|^"?(shell|input|free|lastEventId|socket|closed|enqueue|closeWith)( |"|$)/],
    ['allocator and collections (lol_alloc, alloc)', /lol_alloc|alloc::|alloc\[|__rust_(alloc|realloc|dealloc)|__wbindgen_(malloc|realloc|free)/],
    ["wasm-bindgen's runtime (externref table, conversions)", /wasm_bindgen|__externref|__wbindgen|js_sys|getrandom/],
    ['imports (names, types)', /^"?import /],
    ['data (strings, tables)', /data segment/],
  ];
  const totals = new Map(groups.map(([name]) => [name, 0]));
  let other = 0;
  for (const line of out.split('\n').slice(1)) {
    const m = line.match(/^(.*),(\d+),[\d.]+,/);
    if (!m || /names"+ subsection|custom section|section headers/.test(m[1])) continue;
    const group = groups.find(([, re]) => re.test(m[1]));
    if (group) totals.set(group[0], totals.get(group[0]) + Number(m[2]));
    else other += Number(m[2]);
  }
  return [...totals, ['core library and the rest', other]];
}

/**
 * Each framework binding (managed-eventsource/<name>): its file alone, and what it adds to a page that uses
 * it: an app of the entry and the binding, bundled and minified by esbuild with the framework left out,
 * against the same app of the entry alone. The budget is 1 kB on top of the entry.
 */
const BINDING_BUDGET = 1024;
const app = (source) =>
  execFileSync(join(root, 'node_modules', '.bin', 'esbuild'), ['--bundle', '--minify', '--format=esm', '--log-level=error', ...BINDINGS.map(({ peer }) => `--external:${peer}*`)], { input: source, cwd: join(root, 'pkg'), maxBuffer: 1 << 26 });
const entryApps = { index: gz(app("export * from './index.js';")), fetch: gz(app("export * from './fetch.js';")) };
// A binding over the fetch entry (ai) is measured against the fetch entry's app: what it adds to a page that
// already streams with fetch.
const bindings = BINDINGS.map(({ name, entry = 'index' }) => {
  const b = readFileSync(join(root, 'pkg', `${name}.js`));
  const adds = gz(app(`export * from './${entry}.js';\nexport * from './${name}.js';`)) - entryApps[entry];
  return { name, bytes: b.length, gzip: gz(b), adds, verdict: adds <= BINDING_BUDGET ? 'met' : `missed by ${adds - BINDING_BUDGET} bytes` };
});
/**
 * The apps of scripts/size-apps.mjs, each bundler a column: the bytes every script of the built page weighs,
 * the wasm modules it inlines, and the budget that applies (the smallest app's, or a pair's: at most 1 kB
 * more than the larger of its two entries alone, with the same bundler), met or missed by the worst bundler.
 */
const appRows = await measureApps(root);
const BUNDLER_NAMES = { esbuild: 'esbuild', vite: 'Vite', webpack: 'webpack', rollup: 'Rollup + terser' };
const gzipOf = (app, bundler) => appRows.find((r) => r.app === app && r.bundler === bundler).gzip;
const apps = APPS.map((app) => {
  const cells = Object.keys(BUNDLER_NAMES).map((b) => gzipOf(app.name, b));
  const wasm = Math.max(...appRows.filter((r) => r.app === app.name).map((r) => r.wasm));
  let budget = '';
  if (app.name === 'main') {
    const worst = Math.max(...cells);
    budget = `at most ${kb(TARGET)}: ${worst <= TARGET ? 'met' : `missed by ${kb(worst - TARGET)}`}`;
  } else if (app.pair) {
    const over = Math.max(...Object.keys(BUNDLER_NAMES).map((b) => gzipOf(app.name, b) - Math.max(...app.pair.map((p) => gzipOf(p, b)))));
    budget = `at most 1 kB over the larger alone: ${over <= PAIR_BUDGET ? 'met' : `${kb(over)} over`}`;
  }
  return { ...app, cells, wasm, budget };
});

const socketAdds = files[3].gzip - page;
const fetchAdds = files[4].gzip - page;
const verdict = page <= TARGET ? 'met' : `missed by ${kb(page - TARGET)}`;
console.log(`${'file'.padEnd(40)} ${'bytes'.padStart(8)} ${'gzip -9'.padStart(8)}`);
for (const f of files) console.log(`${f.file.padEnd(48)} ${String(f.bytes).padStart(8)} ${String(f.gzip).padStart(8)}   (${f.flavour})`);
console.log(`\nWhat a page loads (ES module entry): ${kb(page)} gzip; the target is ${kb(TARGET)}: ${verdict}.`);
console.log(`ManagedWebSocket adds ${kb(socketAdds)} to a page (managed-eventsource/websocket over the same shell).`);
console.log(`The fetch transport adds ${kb(fetchAdds)} (managed-eventsource/fetch over the same shell).`);
for (const b of bindings) {
  console.log(`managed-eventsource/${b.name}: pkg/${b.name}.js ${b.bytes} bytes, gzip ${b.gzip} alone; adds ${b.adds} bytes gzip to a page's bundle of the entry (budget 1 kB: ${b.verdict}).`);
}
console.log(`managed-eventsource/server (pkg/server.js, for servers; no page loads it): ${server.bytes} bytes, gzip ${server.gzip}.`);
if (parts.length) {
  console.log('\nParts, each measured alone:');
  for (const [name, bytes, g] of parts) console.log(`  ${name.padEnd(56)} ${String(bytes).padStart(7)} ${String(g).padStart(7)}`);
}
const twiggy = breakdown();
if (twiggy) {
  console.log('\nWhere the wasm goes (twiggy, bytes before compression):');
  for (const [name, bytes] of twiggy) console.log(`  ${name.padEnd(60)} ${String(bytes).padStart(7)}`);
} else console.log('\n(install twiggy with `cargo install twiggy` for a breakdown of the wasm by module)');
console.log('\nJavaScript peers, bundled and minified by esbuild, gzip -9 (baseline, same run):');
for (const p of peers) console.log(`  ${p.name.padEnd(40)} ${String(p.gzip).padStart(8)}   managed-eventsource is ${p.ratio.toFixed(1)}x`);
console.log('\nWhat an app pays, as users compose it: gzip -9 of every script the built page loads (the package from its tarball, React outside the bundle; scripts/size-apps.mjs):');
console.log(`  ${'app imports'.padEnd(16)}${Object.values(BUNDLER_NAMES).map((n) => n.padStart(17)).join('')}   wasm modules   budget`);
for (const a of apps) console.log(`  ${a.name.padEnd(16)}${a.cells.map((c) => String(c).padStart(17)).join('')}   ${String(a.wasm).padStart(12)}   ${a.budget}`);

if (process.argv.includes('--write')) {
  // The README: what a page loads, per entry, beside the peers. docs/performance.md: the parts as well.
  const md = (text) => text.replace('<script>', '`<script>`'); // not an HTML tag in Markdown
  const peerText = peers.map((p) => `${p.name} is ${p.gzip} (we are ${p.ratio.toFixed(1)}×)`).join('; ');
  let brief = '| entry | what it has | gzip -9 |\n| --- | --- | ---: |\n';
  for (const f of files) brief += `| \`${f.file}\` | ${md(f.flavour)} | ${f.gzip} |\n`;
  brief += `\nEach framework binding adds to that, gzip: ${bindings.map((b) => `\`/${b.name}\` ${b.adds}`).join(', ')} (budget 1 kB each).\n`;
  brief += `\nA page loads **${kb(page)}** gzip, the wasm included (target ${kb(TARGET)}: ${verdict}); the JavaScript peers, bundled the same way: ${peerText}.`;
  writeSection('README.md', 'size', 'npm run size -- --write', brief);
  let full = '| file a page loads | bytes | gzip -9 |\n| --- | ---: | ---: |\n';
  for (const f of files) full += `| \`${f.file}\` (${md(f.flavour)}) | ${f.bytes} | ${f.gzip} |\n`;
  full += `\nA page loads **${kb(page)}** gzipped, the wasm included; the target is ${kb(TARGET)}: ${verdict}. \`ManagedWebSocket\` adds ${kb(socketAdds)} (\`managed-eventsource/websocket\`, over the same shell), and the fetch transport ${kb(fetchAdds)} (\`managed-eventsource/fetch\`, over the same shell). \`managed-eventsource/server\` (for servers; no page loads it) is ${server.bytes} bytes, ${server.gzip} gzip. The parts of the main module, each measured alone:\n\n`;
  full += '| binding | bytes | gzip -9 alone | gzip added to a bundle of the entry (budget 1 kB) |\n| --- | ---: | ---: | ---: |\n';
  for (const b of bindings) full += `| \`managed-eventsource/${b.name}\` | ${b.bytes} | ${b.gzip} | ${b.adds} (${b.verdict}) |\n`;
  full += '\n| part | bytes | gzip -9 |\n| --- | ---: | ---: |\n';
  for (const [name, bytes, g] of parts) full += `| ${name.trim()} | ${bytes} | ${g} |\n`;
  if (twiggy) {
    full += '\nWhere the wasm goes, by module (twiggy on the same module with its names kept; bytes before compression):\n\n| module | bytes |\n| --- | ---: |\n';
    for (const [name, bytes] of twiggy) full += `| ${name} | ${bytes} |\n`;
  }
  full += '\nFor comparison, measured in the same run:\n\n| peer (JavaScript, bundled and minified by esbuild) | gzip -9 | managed-eventsource is |\n| --- | ---: | ---: |\n';
  for (const p of peers) full += `| ${p.name} | ${p.gzip} | ${p.ratio.toFixed(1)}× |\n`;
  writeSection('docs/performance.md', 'size', 'npm run size -- --write', full);
  let composed = `| app imports | ${Object.values(BUNDLER_NAMES).join(' | ')} | wasm modules inlined | budget |\n| --- |${' ---: |'.repeat(Object.keys(BUNDLER_NAMES).length)} ---: | --- |\n`;
  for (const a of apps) composed += `| ${a.what} | ${a.cells.join(' | ')} | ${a.wasm} | ${a.budget} |\n`;
  composed += '\ngzip -9 of every script the built page loads, the package installed from its tarball, React left outside the bundle; the shell inlines two wasm modules, its own and the option check\'s, so one copy of the package is 2.';
  writeSection('docs/performance.md', 'apps', 'npm run size -- --write', composed);
}
