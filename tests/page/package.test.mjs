// The package as a new user meets it: `npm pack` of pkg/, unpacked into scratch apps under target/apps/
// (as `npm install` of the tarball would), built with each bundler with no plugin, no config flag and no
// asset copying, and run in headless Chromium through a server drop. Then TypeScript, Node, the tarball's
// contents, and the largest wasm module each browser compiles synchronously.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, pageWithErrors } from './browser.mjs';
import { firefox, haveFirefox } from './webdriver.mjs';
import { startServer } from '../server/sse-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const apps = join(root, 'target', 'apps');
const bin = (name) => join(root, 'node_modules', '.bin', name);
let server, browser, tarball, files;

/** The client every app runs: it connects, and records statuses and event ids on window.app. */
const client = (importLine) => `${importLine}
const sse = new URLSearchParams(location.search).get('sse');
const app = (window.app = { statuses: [], ids: [], error: null });
try {
  const es = new ManagedEventSource(sse + '/sse?c=' + document.title, { baseMs: 50, maxMs: 200, lastEventIdParam: 'lastEventId' });
  es.onstatus = (s) => app.statuses.push(s);
  es.onmessage = (e) => app.ids.push(Number(e.lastEventId));
} catch (e) {
  app.error = String(e);
}
`;
const html = (name, script) => `<!doctype html><meta charset="utf-8"><title>${name}</title>${script}`;

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A scratch app with the package unpacked into its node_modules. */
function scratch(name) {
  const dir = join(apps, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules', 'managed-eventsource'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', join(dir, 'node_modules', 'managed-eventsource'), '--strip-components=1']);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `app-${name}`, private: true, type: name.includes('cjs') ? 'commonjs' : 'module' }));
  return dir;
}

/** Each bundler: how to build its app, and the page that runs the result (relative to the app). */
const BUNDLERS = {
  vite: (dir) => {
    writeFileSync(join(dir, 'main.js'), client("import { ManagedEventSource } from 'managed-eventsource';"));
    writeFileSync(join(dir, 'index.html'), html('vite', '<script type="module" src="/main.js"></script>'));
    run(process.execPath, [bin('vite'), 'build', '--base', './', '--logLevel', 'warn'], dir);
    return 'dist/index.html';
  },
  'webpack-esm': async (dir) => {
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'index.js'), client("import { ManagedEventSource } from 'managed-eventsource';"));
    await webpack(dir);
    writeFileSync(join(dir, 'dist', 'index.html'), html('webpack-esm', '<script src="main.js"></script>'));
    return 'dist/index.html';
  },
  'webpack-cjs': async (dir) => {
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'index.js'), client("const { ManagedEventSource } = require('managed-eventsource');"));
    await webpack(dir);
    writeFileSync(join(dir, 'dist', 'index.html'), html('webpack-cjs', '<script src="main.js"></script>'));
    return 'dist/index.html';
  },
  'esbuild-iife': (dir) => {
    writeFileSync(join(dir, 'main.js'), client("import { ManagedEventSource } from 'managed-eventsource';"));
    run(bin('esbuild'), ['main.js', '--bundle', '--outfile=dist/bundle.js', '--log-level=warning'], dir);
    writeFileSync(join(dir, 'dist', 'index.html'), html('esbuild-iife', '<script src="bundle.js"></script>'));
    return 'dist/index.html';
  },
  'esbuild-esm': (dir) => {
    writeFileSync(join(dir, 'main.js'), client("import { ManagedEventSource } from 'managed-eventsource';"));
    run(bin('esbuild'), ['main.js', '--bundle', '--format=esm', '--outfile=dist/bundle.js', '--log-level=warning'], dir);
    writeFileSync(join(dir, 'dist', 'index.html'), html('esbuild-esm', '<script type="module" src="bundle.js"></script>'));
    return 'dist/index.html';
  },
  rollup: (dir) => {
    writeFileSync(join(dir, 'main.js'), client("import { ManagedEventSource } from 'managed-eventsource';"));
    run(process.execPath, [bin('rollup'), 'main.js', '--plugin', '@rollup/plugin-node-resolve', '--file', 'dist/bundle.js', '--format', 'es', '--silent'], dir, {
      NODE_PATH: join(root, 'node_modules'),
    });
    writeFileSync(join(dir, 'dist', 'index.html'), html('rollup', '<script type="module" src="bundle.js"></script>'));
    return 'dist/index.html';
  },
  'static-module': (dir) => {
    writeFileSync(join(dir, 'index.html'), html('static-module', `<script type="module">${client("import { ManagedEventSource } from './node_modules/managed-eventsource/index.js';")}</script>`));
    return 'index.html';
  },
  'classic-script': (dir) => {
    const body = client('const { ManagedEventSource } = managedEventSource;');
    writeFileSync(join(dir, 'index.html'), html('classic-script', `<script src="node_modules/managed-eventsource/managed-eventsource.global.js"></script><script>${body}</script>`));
    return 'index.html';
  },
};

async function webpack(dir) {
  const { default: webpackFn } = await import(join(root, 'node_modules', 'webpack', 'lib', 'index.js'));
  await new Promise((resolve, reject) =>
    webpackFn({ mode: 'production', context: dir, output: { path: join(dir, 'dist') } }, (err, stats) => {
      if (err || stats.hasErrors()) reject(err ?? new Error(stats.toString('errors-only')));
      else resolve();
    }),
  );
}

before(async () => {
  rmSync(apps, { recursive: true, force: true });
  mkdirSync(apps, { recursive: true });
  const packed = JSON.parse(run('npm', ['pack', join(root, 'pkg'), '--pack-destination', apps, '--json', '--silent'], root));
  tarball = join(apps, packed[0].filename);
  files = packed[0].files.map((f) => f.path).sort();
  const csp = (extra) => ({ dir: apps, headers: { 'Content-Security-Policy': `default-src 'self'; script-src 'self'${extra}; connect-src 'self'` } });
  server = await startServer({ statics: { '/apps/': apps, '/strict-csp/': csp(''), '/wasm-csp/': csp(" 'wasm-unsafe-eval'") } });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('the tarball holds what a user needs and nothing else', () => {
  // Each minified file's source map beside it (the server module ships readable).
  const maps = files.filter((f) => f.endsWith('.map'));
  assert.deepEqual(maps, files.filter((f) => /\.c?js$/.test(f) && !f.startsWith('server.')).map((f) => `${f}.map`).sort());
  assert.deepEqual(files.filter((f) => !f.endsWith('.map')), [
    'LICENSE-APACHE', 'LICENSE-MIT', 'README.md', 'ai.cjs', 'ai.d.cts', 'ai.d.ts', 'ai.js', 'angular.d.ts', 'angular.js', 'bindings.d.cts', 'bindings.d.ts', 'core.cjs', 'core.js', 'disposable.d.ts', 'fetch.cjs', 'fetch.d.cts', 'fetch.d.ts', 'fetch.js',
    'index.cjs', 'index.d.cts', 'index.d.ts', 'index.js', 'managed-eventsource.global.d.ts', 'managed-eventsource.global.js', 'package.json',
    'react.cjs', 'react.d.cts', 'react.d.ts', 'react.js', 'server.cjs', 'server.d.cts', 'server.d.ts', 'server.js',
    'share.cjs', 'share.d.cts', 'share.d.ts', 'share.js', 'shell.wasm', 'solid.cjs', 'solid.d.cts', 'solid.d.ts', 'solid.js', 'svelte.cjs', 'svelte.d.cts', 'svelte.d.ts', 'svelte.js',
    'testing.cjs', 'testing.d.cts', 'testing.d.ts', 'testing.js', 'vue.cjs', 'vue.d.cts', 'vue.d.ts', 'vue.js', 'websocket.cjs', 'websocket.d.cts', 'websocket.d.ts', 'websocket.js',
    'workerd/core.js', 'workerd/fetch.js', 'workerd/index.js', 'workerd/share.js', 'workerd/testing.js', 'workerd/websocket.js',
  ]);
  const manifest = JSON.parse(readFileSync(join(root, 'pkg', 'package.json'), 'utf8'));
  assert.equal(manifest.exports['./package.json'], './package.json');
  assert.ok(manifest.engines.node);
  assert.equal(manifest.license, 'MIT OR Apache-2.0');
  // The Redis store's client library and the bindings' frameworks are optional peers: never installed with
  // the package.
  const peers = ['redis', 'react', 'vue', 'svelte', 'solid-js', '@angular/core', 'ai'];
  assert.deepEqual(Object.keys(manifest.peerDependencies), peers);
  assert.deepEqual(manifest.peerDependenciesMeta, Object.fromEntries(peers.map((p) => [p, { optional: true }])));
  for (const name of ['react', 'vue', 'svelte', 'solid', 'angular']) {
    const esm = { types: `./${name}.d.ts`, default: `./${name}.js` };
    // Angular ships ES modules only, and so does its binding.
    assert.deepEqual(manifest.exports[`./${name}`], name === 'angular' ? esm : { import: esm, require: { types: `./${name}.d.cts`, default: `./${name}.cjs` } });
    // Each binding's budget: 1 kB gzip on top of the entry it imports (npm run size prints both figures).
    const gzip = execFileSync('gzip', ['-9c', join(root, 'pkg', `${name}.js`)]).length;
    assert.ok(gzip <= 1024, `pkg/${name}.js is ${gzip} bytes gzip`);
  }
  // The wasm is inside the shell (core.js, core.cjs) and the classic script; only the workerd build, for
  // runtimes that compile none at run time, imports it as a module.
  assert.deepEqual(files.filter((f) => f.endsWith('.wasm')), ['shell.wasm']);
});

for (const [name, build] of Object.entries(BUNDLERS)) {
  test(`${name}: builds with no plugin, config flag or asset copying, and reconnects after a drop`, async () => {
    const dir = scratch(name);
    const page = await build(dir);
    const { page: tab, errors } = await pageWithErrors(browser);
    await fetch(`${server.url}/plan?c=${name}&then=stream`);
    await tab.goto(`${server.url}/apps/${name}/${page}?sse=${encodeURIComponent(server.url)}`);
    await tab.waitForFunction(() => window.app && (window.app.error || window.app.ids.length >= 3), null, { timeout: 15000 });
    assert.equal(await tab.evaluate(() => window.app.error), null);
    await fetch(`${server.url}/outage?ms=300`);
    await tab.waitForFunction(() => window.app.statuses.includes('reconnecting') && window.app.statuses.at(-1) === 'open' && window.app.ids.length >= 8, null, { timeout: 15000 });
    const app = await tab.evaluate(() => window.app);
    assert.deepEqual(app.ids, app.ids.map((_, i) => i + 1), 'no event lost or repeated over the reconnect');
    assert.deepEqual(errors, []);
    await tab.close();
    // The size of what the page loaded: the app's JavaScript, gzipped.
    const js = readdirSync(join(dir, dirname(page)), { recursive: true }).filter((f) => String(f).endsWith('.js') && !String(f).includes('node_modules'));
    if (js.length) {
      const gz = js.reduce((sum, f) => sum + execFileSync('gzip', ['-9c', join(dir, dirname(page), String(f))]).length, 0);
      console.log(`[figure] ${name}: the built app's JavaScript is ${gz} bytes gzip`);
    }
  });
}

test("a strict CSP: a clear error naming 'wasm-unsafe-eval', from the constructor and from prepare(); with it, the package works", async () => {
  const dir = scratch('csp');
  writeFileSync(join(dir, 'main.js'), client("import { ManagedEventSource } from './node_modules/managed-eventsource/index.js';"));
  writeFileSync(join(dir, 'index.html'), html('csp', '<script type="module" src="main.js"></script>'));
  await fetch(`${server.url}/plan?c=csp&then=stream`);
  const { page: tab } = await pageWithErrors(browser);
  await tab.goto(`${server.url}/strict-csp/csp/index.html?sse=${encodeURIComponent(server.url)}`);
  await tab.waitForFunction(() => window.app?.error, null, { timeout: 10000 });
  assert.match(await tab.evaluate(() => window.app.error), /Content-Security-Policy .* add 'wasm-unsafe-eval' to script-src/);
  // prepare() rejects with the same words (in a fresh copy of the module), and again when called again.
  const prepared = await tab.evaluate(async () => {
    const m = await import('./node_modules/managed-eventsource/index.js?prepare');
    const told = [];
    for (let i = 0; i < 2; i++) await m.prepare().then(() => told.push('resolved'), (e) => told.push(String(e)));
    return told;
  });
  assert.equal(prepared.length, 2);
  for (const t of prepared) assert.match(t, /Content-Security-Policy .* add 'wasm-unsafe-eval' to script-src/);
  // With no options, whose values need no check, the constructor compiles only an empty module to learn the
  // same (see soon in scripts/build.mjs), and throws the same words (again in a fresh copy of the module).
  const bare = await tab.evaluate(async (sse) => {
    const m = await import('./node_modules/managed-eventsource/index.js?bare');
    try {
      new m.ManagedEventSource(sse + '/sse?c=csp-bare');
      return 'constructed';
    } catch (e) {
      return String(e);
    }
  }, server.url);
  assert.match(bare, /Content-Security-Policy .* add 'wasm-unsafe-eval' to script-src/);
  await tab.goto(`${server.url}/wasm-csp/csp/index.html?sse=${encodeURIComponent(server.url)}`);
  await tab.waitForFunction(() => window.app?.ids.length >= 2 || window.app?.error, null, { timeout: 10000 });
  assert.equal(await tab.evaluate(() => window.app.error), null);
  await tab.close();
});

test('every entry and the framework bindings share one copy of the package: Vite and esbuild bundle its wasm once', async () => {
  // The start of the shell's module as the build inlined it: found once in a bundle that has one copy.
  const hex = readFileSync(join(root, 'target', 'pkg-build', 'shell', 'wasm.js'), 'utf8').match(/'([0-9a-f]{200})/)[1];
  const copies = (file) => readFileSync(file, 'utf8').split(hex).length - 1;
  const dir = scratch('bindings');
  // The frameworks are found where a user's app has them, in node_modules above the app (the repository's).
  writeFileSync(
    join(dir, 'main.js'),
    `import { ManagedEventSource } from 'managed-eventsource';
import { ManagedEventSource as FetchEventSource } from 'managed-eventsource/fetch';
import { ManagedWebSocket } from 'managed-eventsource/websocket';
import 'managed-eventsource/share';
import { useManagedEventSource } from 'managed-eventsource/react';
import { useManagedEventSource as useVue } from 'managed-eventsource/vue';
import { managedEventSource } from 'managed-eventsource/svelte';
import { createManagedEventSource } from 'managed-eventsource/solid';
window.app = { ManagedEventSource, FetchEventSource, ManagedWebSocket, useManagedEventSource, useVue, managedEventSource, createManagedEventSource };
`,
  );
  run(bin('esbuild'), ['main.js', '--bundle', '--format=esm', '--outfile=dist/esbuild.js', '--log-level=warning'], dir);
  assert.equal(copies(join(dir, 'dist', 'esbuild.js')), 1, 'esbuild');
  writeFileSync(join(dir, 'index.html'), html('bindings', '<script type="module" src="/main.js"></script>'));
  run(process.execPath, [bin('vite'), 'build', '--base', './', '--logLevel', 'warn', '--outDir', 'vite'], dir);
  const assets = readdirSync(join(dir, 'vite', 'assets')).filter((f) => f.endsWith('.js'));
  assert.equal(assets.reduce((n, f) => n + copies(join(dir, 'vite', 'assets', f)), 0), 1, 'Vite');
});

test('Node: import and require work with the eventsource package as the global; without one, a clear error', async () => {
  const dir = scratch('node');
  cpSync(join(root, 'node_modules', 'eventsource'), join(dir, 'node_modules', 'eventsource'), { recursive: true });
  cpSync(join(root, 'node_modules', 'eventsource-parser'), join(dir, 'node_modules', 'eventsource-parser'), { recursive: true });
  const script = (load) => `
${load}
const { EventSource } = require('eventsource');
const before = (() => { try { new ManagedEventSource('http://127.0.0.1:1/'); } catch (e) { return e; } })();
globalThis.EventSource = EventSource;
const es = new ManagedEventSource(${JSON.stringify(server.url)} + '/sse?c=node-pkg', { baseMs: 20 });
es.onmessage = (e) => { if (e.lastEventId === '2') { es.close(); console.log(JSON.stringify({ ok: true, before: before.constructor.name + ': ' + before.message })); } };
`;
  writeFileSync(join(dir, 'esm.mjs'), script("import { ManagedEventSource } from 'managed-eventsource';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);"));
  writeFileSync(join(dir, 'cjs.cjs'), script("const { ManagedEventSource } = require('managed-eventsource');"));
  for (const f of ['esm.mjs', 'cjs.cjs']) {
    await fetch(`${server.url}/plan?c=node-pkg&then=stream`);
    // Not execFileSync: the server this script talks to runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, [f], { cwd: dir, encoding: 'utf8', timeout: 10000 });
    const out = JSON.parse(stdout);
    assert.equal(out.ok, true, f);
    assert.match(out.before, /^TypeError: managed-eventsource: this runtime has no EventSource: use transport 'fetch'\. In Node, install the eventsource package/, f);
  }
});

test("managed-eventsource/fetch in Node with no EventSource global: import and require, a token per attempt, Last-Event-ID", async () => {
  const dir = scratch('fetch');
  const script = (load) => `
${load}
if (typeof EventSource !== 'undefined') throw new Error('this test needs a Node with no EventSource');
let n = 0;
const es = new ManagedEventSource(${JSON.stringify(server.url)} + '/sse?c=node-fetch', { transport: 'fetch', baseMs: 20, headers: async () => ({ Authorization: 'Bearer ' + ++n }) });
const ids = [];
es.onmessage = (e) => { ids.push(e.lastEventId); if (ids.length === 4) { es.close(); console.log(JSON.stringify({ ids, target: e.target === es, state: es.readyState })); } };
`;
  writeFileSync(join(dir, 'esm.mjs'), script("import { ManagedEventSource } from 'managed-eventsource/fetch';"));
  writeFileSync(join(dir, 'cjs.cjs'), script("const { ManagedEventSource } = require('managed-eventsource/fetch');"));
  for (const f of ['esm.mjs', 'cjs.cjs']) {
    await fetch(`${server.url}/plan?c=node-fetch&steps=events:2,503&then=events:2`);
    const { stdout } = await promisify(execFile)(process.execPath, [f], { cwd: dir, encoding: 'utf8', timeout: 10000 });
    assert.deepEqual(JSON.parse(stdout), { ids: ['1', '2', '3', '4'], target: true, state: 2 }, f);
    const { attempts } = await (await fetch(`${server.url}/log?c=node-fetch`)).json();
    assert.deepEqual(attempts.slice(0, 3).map((a) => [a.auth, a.lastEventIdHeader]), [['Bearer 1', null], ['Bearer 2', '2'], ['Bearer 3', '2']], f);
  }
});

test('managed-eventsource/server: import and require from the tarball, a gate, a Web Response, the event log', async () => {
  const dir = scratch('server');
  const script = `
const gate = createGate({ ratePerSec: 5, burst: 2, pace: true, spreadMs: 0, now: () => 0 });
const decisions = [gate.admit(), gate.admit(), gate.admit()].map((a) => a.ok || a.retryMs);
const log = createEventLog({ heartbeatMs: 0 });
Promise.all([
  rejectResponse(1500, { hintEvent: 'retry-hint' }).text(),
  log.append({ data: 'one' }).then((id) => log.connect(id === null ? '' : '0-0')).then((c) => { let text = ''; c.start((t) => (text += t)).close(); return text; }),
]).then(([body, replay]) => { console.log(JSON.stringify({ decisions, body, replay })); return log.close(); });
`;
  const names = 'createGate, rejectResponse, createEventLog';
  writeFileSync(join(dir, 'esm.mjs'), `import { ${names} } from 'managed-eventsource/server';` + script);
  writeFileSync(join(dir, 'cjs.cjs'), `const { ${names} } = require('managed-eventsource/server');` + script);
  for (const f of ['esm.mjs', 'cjs.cjs']) {
    const out = JSON.parse(run(process.execPath, [f], dir));
    assert.deepEqual(out.decisions, [true, true, 200], f);
    assert.equal(out.body, 'retry: 1500\nevent: retry-hint\ndata: 1500\n\n: come back in 1500 ms\n\n', f);
    // The event log (memory store) from the tarball; `redis` is an optional peer, not installed with it
    // (tests/node/log.test.mjs loads the module where no `redis` can be found).
    assert.match(out.replay, /^id: \d+-\d+_[0-9a-z]{7}\nevent: reload\ndata: unknown\n\n$/, f);
  }
});

for (const [version, tsc] of [['5.9', bin('tsc')], ['7.0', join(root, 'node_modules', 'typescript7', 'bin', 'tsc')]]) {
  test(`TypeScript ${version}: every member compiles under --strict with skipLibCheck false; wrong usages are rejected`, () => {
    const dir = scratch(`types-${version}`);
    cpSync(join(root, 'tests', 'types'), join(dir, 'src'), { recursive: true });
    const check = (files, extra = {}) => {
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', ...extra }, files }),
      );
      const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
      return { ok: r.status === 0, out: r.stdout + r.stderr };
    };
    // The AI SDK's own types need Node's (as in any app built on it): TypeScript 7 includes none unless named.
    for (const files of [['src/uses.ts'], ['src/global.ts'], ['src/wrong.ts'], ['src/bindings.ts']]) {
      const r = check(files, files[0] === 'src/bindings.ts' ? { types: ['node'] } : {});
      assert.ok(r.ok, `${files}: ${r.out}`);
    }
    // The Svelte binding against Svelte 4's types, where a Svelte 4 project finds them.
    const svelte4 = join(root, 'node_modules', 'svelte4', 'types', 'index.d.ts');
    const s4 = check(['src/svelte4.ts'], { paths: { svelte: [svelte4], 'svelte/*': [svelte4] } });
    assert.ok(s4.ok, s4.out);
    // Every wrong usage is an error of its own: without the directives, tsc reports each one.
    const wrong = readFileSync(join(dir, 'src', 'wrong.ts'), 'utf8');
    writeFileSync(join(dir, 'src', 'bare.ts'), wrong.replace(/^\/\/ @ts-expect-error/gm, '//'));
    const bare = check(['src/bare.ts']);
    const expected = (wrong.match(/^\/\/ @ts-expect-error/gm) ?? []).length;
    const errors = new Set([...bare.out.matchAll(/bare\.ts\((\d+),/g)].map((m) => m[1])).size;
    assert.equal(errors, expected, bare.out);
    console.log(`[figure] TypeScript ${version}: ${expected} of ${expected} wrong usages rejected`);
    // `using`, with the opt-in types, where the lib knows Symbol.dispose.
    const d = check(['src/dispose.ts'], { target: 'es2022', lib: ['esnext', 'dom'] });
    assert.ok(d.ok, d.out);
  });
}

test('the largest wasm module each browser compiles synchronously on the main thread', async () => {
  // A module of n bytes: a passive data segment of the right size (the module's bulk is data either way).
  const probe = async (run) => {
    const fits = (n) => run(n);
    let lo = 1 << 16, hi = 1 << 27; // 64 KB known to work; 128 MB as the ceiling of the search
    if (await fits(hi)) return `${hi / (1 << 20)} MB or more`;
    while (hi - lo > 1 << 12) {
      const mid = Math.floor((lo + hi) / 2);
      if (await fits(mid)) lo = mid;
      else hi = mid;
    }
    return `${(lo / (1 << 20)).toFixed(2)} MB (${lo} bytes; ${hi} fails)`;
  };
  const inPage = `(n) => {
    const leb = (v) => { const b = []; do { let x = v & 127; v >>>= 7; if (v) x |= 128; b.push(x); } while (v); return b; };
    const body = n - 40;
    const seg = [1, 1, ...leb(body)]; // one segment, passive
    const data = [11, ...leb(seg.length + body), ...seg];
    const head = [0, 97, 115, 109, 1, 0, 0, 0, 12, 1, 1, ...data];
    const bytes = new Uint8Array(head.length + body);
    bytes.set(head);
    try { new WebAssembly.Module(bytes); return true; } catch (e) { return false; }
  }`;
  const { page } = await pageWithErrors(browser);
  await page.goto(`${server.url}/tests/browser/harness.html?suite=none`);
  const chromium = await probe((n) => page.evaluate(`(${inPage})(${n})`).then((r) => r === true));
  console.log(`[figure] Chromium ${browser.version()}: largest module compiled synchronously on the main thread: ${chromium}`);
  await page.close();
  let gecko = 'not measured (no Firefox)';
  if (haveFirefox()) {
    const ff = await firefox();
    await ff.goto(`${server.url}/tests/browser/harness.html?suite=none`);
    gecko = await probe((n) => ff.run(`return (${inPage})(${n})`).then((r) => r === true));
    console.log(`[figure] Firefox ${ff.version}: largest module compiled synchronously on the main thread: ${gecko}`);
    await ff.close();
  }
  const ours = readFileSync(join(root, 'target', 'pkg-build', 'shell', 'managed_eventsource_bg.wasm')).length;
  console.log(`[figure] the package's module: ${ours} bytes`);
  assert.ok(!chromium.startsWith('0.0'), chromium);
});
