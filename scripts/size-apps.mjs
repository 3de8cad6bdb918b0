// What an app pays for the package, as users compose it: small apps of each combination of entries (the main
// entry, the fetch entry, the websocket entry, the React binding), each bundled for production by each
// bundler the packaging tests run (esbuild, Vite, webpack, Rollup with terser), from the packed tarball
// unpacked into the app's node_modules as `npm install` would. React stays outside every bundle: the figure
// is ours alone. For each: the gzip -9 bytes of every script the built page loads, and how many wasm
// modules the bundle carries (the shell inlines two: its own and the option check's). scripts/size.mjs
// prints the table beside the budgets.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { minify } from 'terser';

/** The apps: what each imports and calls, the way the README shows it. */
export const APPS = [
  {
    name: 'main',
    what: '`ManagedEventSource` from the main entry, one listener, `onstatus`',
    source: `import { ManagedEventSource } from 'managed-eventsource';
const feed = new ManagedEventSource('/sse');
feed.addEventListener('message', (ev) => console.log(ev.data));
feed.onstatus = (status) => console.log(status);`,
  },
  {
    name: 'fetch',
    what: 'the fetch entry alone',
    source: `import { ManagedEventSource } from 'managed-eventsource/fetch';
const feed = new ManagedEventSource('/sse', { transport: 'fetch', headers: { authorization: 'Bearer x' } });
feed.addEventListener('message', (ev) => console.log(ev.data));
feed.onstatus = (status) => console.log(status);`,
  },
  {
    name: 'react',
    what: 'the React binding alone',
    source: `import { useManagedEventSource } from 'managed-eventsource/react';
function Feed() {
  const { status, lastEvent } = useManagedEventSource('/sse');
  return status + (lastEvent?.data ?? '');
}
globalThis.Feed = Feed;`,
  },
  {
    name: 'react+fetch',
    what: 'the React binding + the fetch entry',
    source: `import { useManagedEventSource } from 'managed-eventsource/react';
import { ManagedEventSource } from 'managed-eventsource/fetch';
function Feed() {
  const { status, lastEvent } = useManagedEventSource('/sse', { client: ManagedEventSource, transport: 'fetch' });
  return status + (lastEvent?.data ?? '');
}
globalThis.Feed = Feed;`,
    pair: ['react', 'fetch'],
  },
  {
    name: 'websocket',
    what: 'the websocket entry alone',
    source: `import { ManagedWebSocket } from 'managed-eventsource/websocket';
const socket = new ManagedWebSocket('ws://127.0.0.1:1/ws');
socket.onmessage = (ev) => console.log(ev.data);
socket.onstatus = (status) => console.log(status);`,
  },
  {
    name: 'main+websocket',
    what: 'the main entry + the websocket entry',
    source: `import { ManagedEventSource } from 'managed-eventsource';
import { ManagedWebSocket } from 'managed-eventsource/websocket';
const feed = new ManagedEventSource('/sse');
feed.addEventListener('message', (ev) => console.log(ev.data));
const socket = new ManagedWebSocket('ws://127.0.0.1:1/ws');
socket.onmessage = (ev) => console.log(ev.data);`,
    pair: ['main', 'websocket'],
  },
  {
    name: 'main+fetch',
    what: 'the main entry + the fetch entry',
    source: `import { ManagedEventSource } from 'managed-eventsource';
import { ManagedEventSource as FetchEventSource } from 'managed-eventsource/fetch';
const feed = new ManagedEventSource('/sse');
feed.addEventListener('message', (ev) => console.log(ev.data));
const posted = new FetchEventSource('/chat', { transport: 'fetch', method: 'POST', body: '{}' });
posted.addEventListener('message', (ev) => console.log(ev.data));`,
    pair: ['main', 'fetch'],
  },
  {
    name: 'main+share',
    what: 'the main entry + the share entry, one client shared across tabs',
    source: `import { ManagedEventSource } from 'managed-eventsource';
import 'managed-eventsource/share';
const feed = new ManagedEventSource('/sse', { share: true });
feed.addEventListener('message', (ev) => console.log(ev.data));
feed.onstatus = (status) => console.log(status);`,
  },
];

const gz = (buf) => gzipSync(buf, { level: 9 }).length;

/** Every .js file under `dir`. */
function scripts(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? scripts(p) : f.endsWith('.js') ? [p] : [];
  });
}

/** Each bundler: builds the app in `dir` (main.js) for production into dir/dist. */
function bundlers(root) {
  const bin = (name) => join(root, 'node_modules', '.bin', name);
  const quiet = { stdio: ['ignore', 'pipe', 'pipe'] };
  return {
    esbuild: (dir) => execFileSync(bin('esbuild'), ['main.js', '--bundle', '--minify', '--format=esm', '--external:react', '--outfile=dist/bundle.js', '--log-level=warning'], { cwd: dir, ...quiet }),
    vite: (dir) => {
      writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/main.js"></script>\n');
      writeFileSync(join(dir, 'vite.config.mjs'), "export default { logLevel: 'warn', build: { rollupOptions: { external: ['react'] } } };\n");
      execFileSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--base', './'], { cwd: dir, ...quiet });
    },
    webpack: async (dir) => {
      const { default: webpack } = await import(join(root, 'node_modules', 'webpack', 'lib', 'index.js'));
      await new Promise((resolve, reject) =>
        webpack({ mode: 'production', context: dir, entry: './main.js', externals: { react: 'React' }, output: { path: join(dir, 'dist') } }, (err, stats) => {
          if (err || stats.hasErrors()) reject(err ?? new Error(stats.toString('errors-only')));
          else resolve();
        }),
      );
    },
    rollup: async (dir) => {
      execFileSync(process.execPath, [join(root, 'node_modules', 'rollup', 'dist', 'bin', 'rollup'), 'main.js', '--plugin', '@rollup/plugin-node-resolve', '--external', 'react', '--file', 'dist/bundle.js', '--format', 'es', '--silent'], {
        cwd: dir,
        env: { ...process.env, NODE_PATH: join(root, 'node_modules') },
        ...quiet,
      });
      const out = join(dir, 'dist', 'bundle.js');
      writeFileSync(out, (await minify(readFileSync(out, 'utf8'), { module: true })).code);
    },
  };
}

/**
 * Packs pkg/, then builds every app with every bundler under `work`. Returns rows of
 * { app, bundler, gzip, wasm } (wasm: the modules inlined, counted by their magic number in hex).
 */
export async function measureApps(root, work = join(root, 'target', 'size-apps')) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const packed = JSON.parse(execFileSync('npm', ['pack', join(root, 'pkg'), '--pack-destination', work, '--json', '--silent'], { cwd: root, encoding: 'utf8' }));
  const tarball = join(work, packed[0].filename);
  const rows = [];
  for (const [bundler, build] of Object.entries(bundlers(root))) {
    for (const app of APPS) {
      const dir = join(work, `${bundler}-${app.name.replace('+', '-')}`);
      mkdirSync(join(dir, 'node_modules', 'managed-eventsource'), { recursive: true });
      execFileSync('tar', ['-xzf', tarball, '-C', join(dir, 'node_modules', 'managed-eventsource'), '--strip-components=1']);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `size-${app.name.replace('+', '-')}`, private: true, type: 'module' }));
      writeFileSync(join(dir, 'main.js'), `${app.source}\n`);
      await build(dir);
      const files = scripts(join(dir, 'dist'));
      const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
      rows.push({ app: app.name, bundler, gzip: files.reduce((n, f) => n + gz(readFileSync(f)), 0), wasm: text.split('0061736d').length - 1 });
    }
  }
  return rows;
}
