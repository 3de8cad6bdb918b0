// The entries as users compose them, in a page of each engine: each combination of the main, fetch and
// websocket entries (the AI SDK's transport beside the main entry; and, beside all three, the share entry and a binding: the share entry's registration
// must survive each bundler, or the main entry's class refuses `share`), from the packed tarball, built for
// production by each bundler a user runs (esbuild, Vite, webpack, Rollup), opened in Chromium, Firefox and
// WebKit. Each page
// counts what the package compiles and instantiates (WebAssembly's compile, instantiate, Module and Instance,
// wrapped before the app's script runs): one shell, whatever the mix; and each class it imports connects.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine } from './browser.mjs';
import { startServer } from '../server/sse-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = join(root, 'target', 'compose');
const bin = (name) => join(root, 'node_modules', '.bin', name);

/**
 * The apps: what each imports, and what it makes of it. Every class is constructed against the test
 * server and must open; `same` lists pairs of imports that must be one class.
 */
const APPS = {
  main: { imports: { main: 'managed-eventsource' } },
  fetch: { imports: { fetch: 'managed-eventsource/fetch' } },
  websocket: { imports: { websocket: 'managed-eventsource/websocket' } },
  'main-fetch': { imports: { main: 'managed-eventsource', fetch: 'managed-eventsource/fetch' } },
  'main-websocket': { imports: { main: 'managed-eventsource', websocket: 'managed-eventsource/websocket' } },
  // The AI SDK's transport beside the main entry: it brings the fetch entry, over the same shell.
  'main-ai': { imports: { main: 'managed-eventsource', ai: 'managed-eventsource/ai' } },
  'all-entries-and-a-binding': {
    imports: { main: 'managed-eventsource', fetch: 'managed-eventsource/fetch', websocket: 'managed-eventsource/websocket', share: 'managed-eventsource/share', solid: 'managed-eventsource/solid' },
  },
};

/** The app's script: every import as a namespace, each class connected, what opened on window.app. */
function appSource(name, { imports }) {
  const lines = Object.entries(imports).map(([as, from]) => `import * as ${as} from '${from}';`);
  return `${lines.join('\n')}
const params = new URLSearchParams(location.search), base = params.get('sse');
const c = (what) => '${name}-' + what + '-' + params.get('engine');
const app = (window.app = { opened: [], errors: [], same: [] });
const opened = (what, client) => {
  client.onstatus = (s) => s === 'open' && (app.opened.push(what), client.close());
  client.onerror = () => {};
};
try {
  ${imports.main ? "opened('main', new main.ManagedEventSource(base + '/sse?c=' + c('main')));" : ''}
  ${imports.fetch ? "opened('fetch', new fetch.ManagedEventSource(base + '/sse?c=' + c('fetch'), { transport: 'fetch' }));" : ''}
  ${imports.websocket ? "opened('websocket', new websocket.ManagedWebSocket(base.replace('http', 'ws') + '/ws?c=' + c('websocket')));" : ''}
  ${imports.main && imports.fetch ? "app.same.push(main.ManagedEventSource === fetch.ManagedEventSource);" : ''}
  ${imports.main && imports.websocket ? "app.same.push(main.ManagedEventSource === websocket.ManagedEventSource);" : ''}
  ${imports.share ? "opened('share', new main.ManagedEventSource(base + '/sse?c=' + c('share'), { share: c('share') }));" : ''}
  ${imports.share ? "app.same.push(main.ManagedEventSource === share.ManagedEventSource);" : ''}
  ${imports.solid ? "app.same.push(typeof solid.createManagedEventSource === 'function');" : ''}
  ${imports.ai ? "app.same.push(typeof new ai.ManagedChatTransport({ storage: null }).sendMessages === 'function');" : ''}
} catch (e) {
  app.errors.push(String(e));
}
`;
}

/** Counts what the page compiles and instantiates, before any of the app runs: the shell is the module
 * past 8,000 bytes (the option check is about 2,000). */
const COUNTING = `<script>
(() => {
  const W = WebAssembly, counts = (window.wasmCounts = { shellCompiles: 0, shellInstances: 0 });
  const isShell = (bytes) => (bytes?.byteLength ?? 0) > 8000;
  const shells = new WeakSet();
  const compile = W.compile, instantiate = W.instantiate, Module = W.Module, Instance = W.Instance;
  W.compile = (bytes, ...rest) => compile.call(W, bytes, ...rest).then((m) => (isShell(bytes) && (counts.shellCompiles++, shells.add(m)), m));
  W.instantiate = (what, ...rest) => {
    if (what instanceof Module) {
      if (shells.has(what)) counts.shellInstances++;
    } else if (isShell(what)) counts.shellCompiles++, counts.shellInstances++;
    return instantiate.call(W, what, ...rest);
  };
  W.Module = Object.assign(function (bytes) {
    const m = new Module(bytes);
    if (isShell(bytes)) counts.shellCompiles++, shells.add(m);
    return m;
  }, { prototype: Module.prototype, exports: Module.exports, imports: Module.imports, customSections: Module.customSections });
  W.Instance = Object.assign(function (m, imports) {
    if (shells.has(m)) counts.shellInstances++;
    return new Instance(m, imports);
  }, { prototype: Instance.prototype });
})();
</script>`;

const html = (script) => `<!doctype html><html><head><meta charset="utf-8"><title>compose</title>${COUNTING}</head><body>${script}</body></html>\n`;

/** Each bundler: builds dir/main.js for production into dir/dist, with an index.html that loads it. */
const BUNDLERS = {
  esbuild: async (dir) => {
    execFileSync(bin('esbuild'), ['main.js', '--bundle', '--minify', '--format=esm', '--outfile=dist/bundle.js', '--log-level=warning'], { cwd: dir });
    writeFileSync(join(dir, 'dist', 'index.html'), html('<script type="module" src="bundle.js"></script>'));
  },
  vite: async (dir) => {
    // Vite writes its own script tag into the page it is given; the counting script stays first.
    writeFileSync(join(dir, 'index.html'), html('<script type="module" src="/main.js"></script>'));
    execFileSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--base', './', '--logLevel', 'warn'], { cwd: dir });
  },
  webpack: async (dir) => {
    const { default: webpack } = await import(join(root, 'node_modules', 'webpack', 'lib', 'index.js'));
    await new Promise((resolve, reject) =>
      webpack({ mode: 'production', context: dir, entry: './main.js', output: { path: join(dir, 'dist') } }, (err, stats) => (err || stats.hasErrors() ? reject(err ?? new Error(stats.toString('errors-only'))) : resolve())),
    );
    writeFileSync(join(dir, 'dist', 'index.html'), html('<script src="main.js"></script>'));
  },
  rollup: async (dir) => {
    execFileSync(process.execPath, [join(root, 'node_modules', 'rollup', 'dist', 'bin', 'rollup'), 'main.js', '--plugin', '@rollup/plugin-node-resolve', '--file', 'dist/bundle.js', '--format', 'es', '--silent'], {
      cwd: dir,
      env: { ...process.env, NODE_PATH: join(root, 'node_modules') },
    });
    writeFileSync(join(dir, 'dist', 'index.html'), html('<script type="module" src="bundle.js"></script>'));
  },
};

let server;
const pages = [];

before(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const packed = JSON.parse(execFileSync('npm', ['pack', join(root, 'pkg'), '--pack-destination', work, '--json', '--silent'], { cwd: root, encoding: 'utf8' }));
  const tarball = join(work, packed[0].filename);
  for (const [bundler, build] of Object.entries(BUNDLERS)) {
    for (const [name, app] of Object.entries(APPS)) {
      const dir = join(work, `${bundler}-${name}`);
      mkdirSync(join(dir, 'node_modules', 'managed-eventsource'), { recursive: true });
      execFileSync('tar', ['-xzf', tarball, '-C', join(dir, 'node_modules', 'managed-eventsource'), '--strip-components=1']);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `compose-${bundler}-${name}`, private: true, type: 'module' }));
      writeFileSync(join(dir, 'main.js'), appSource(name, app));
      await build(dir);
      pages.push({ bundler, name, app, path: `/compose/${bundler}-${name}/dist/index.html` });
    }
  }
  server = await startServer({ statics: { '/compose/': work } });
  for (const { name, app } of pages) {
    for (const engine of ['chromium', 'firefox', 'webkit']) {
      for (const what of Object.keys(app.imports).filter((k) => k !== 'solid' && k !== 'ai')) {
        await fetch(`${server.url}/plan?c=${name}-${what}-${engine}&then=stream`);
      }
    }
  }
});

after(() => server?.close());

inEachEngine('every combination of entries, built by each bundler: one shell compiled and instantiated, and every class it imports connects', async (engine, page) => {
  for (const { bundler, name, app, path } of pages) {
    await page.goto(`${server.url}${path}?sse=${encodeURIComponent(server.url)}&engine=${engine}`);
    const want = Object.keys(app.imports).filter((k) => k !== 'solid' && k !== 'ai').sort();
    let seen;
    for (let i = 0; i < 100; i++) {
      seen = await page.evaluate('window.app ? JSON.stringify({ ...window.app, counts: window.wasmCounts }) : null');
      if (seen && (JSON.parse(seen).opened.length === want.length || JSON.parse(seen).errors.length)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const result = JSON.parse(seen ?? 'null');
    const label = `${engine}, ${bundler}, ${name}`;
    assert.ok(result, `${label}: the app did not run`);
    assert.deepEqual(result.errors, [], label);
    assert.deepEqual(result.opened.sort(), want, `${label}: every class opened`);
    assert.ok(result.same.every(Boolean), `${label}: one class for the entries' ManagedEventSource`);
    assert.deepEqual(result.counts, { shellCompiles: 1, shellInstances: 1 }, `${label}: one shell compiled and instantiated`);
  }
});
