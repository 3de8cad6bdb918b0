// Cloudflare Workers' runtime, workerd (from npm, installed in tests/workerd by scripts/setup.mjs --browser),
// which refuses to compile WebAssembly at run time: the package's `workerd` build (pkg/workerd/, its shell
// the precompiled pkg/shell.wasm) streams there with the fetch transport, resuming after a drop, against the
// test server on loopback; the build that compiles its inlined module at run time (pkg/fetch.js) says why it
// cannot, in its constructor. The worker is one config of workerd's own (capnp), its modules named as the
// package's files; workerd is stopped at the end, and killed past a time limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../server/sse-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'tests', 'workerd', 'node_modules', '.bin', 'workerd');
const work = join(root, 'target', 'workerd');
const LIMIT_MS = 60_000;

/** The worker: /stream?sse=URL opens a client of the workerd build and answers what it saw; /inlined
 * constructs one of the build that compiles at run time, and answers its error. */
const WORKER = `
import { ManagedEventSource } from 'managed-eventsource/workerd/fetch.js';
import { ManagedEventSource as Inlined } from 'managed-eventsource/fetch.js';

export default {
  async fetch(request) {
    const url = new URL(request.url), sse = url.searchParams.get('sse');
    if (url.pathname === '/inlined') {
      try {
        new Inlined(sse, { transport: 'fetch' });
        return Response.json({ error: null });
      } catch (e) {
        return Response.json({ error: String(e) });
      }
    }
    const seen = { ids: [], statuses: [], retries: 0 };
    const client = new ManagedEventSource(sse, { transport: 'fetch', baseMs: 20, maxMs: 50, lastEventIdParam: 'lastEventId' });
    client.onstatus = (s) => seen.statuses.push(s);
    client.onretry = () => seen.retries++;
    await new Promise((resolve) => {
      client.onmessage = (e) => {
        seen.ids.push(Number(e.lastEventId));
        if (seen.ids.length === 6) resolve();
      };
      setTimeout(resolve, 10000);
    });
    client.close();
    seen.final = client.status;
    return Response.json(seen);
  },
};
`;

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

let server, workerd, base;

before(async () => {
  // Not a skip: npm test installs it, so a missing one is a broken set-up.
  assert.ok(existsSync(bin), 'no workerd in tests/workerd: node scripts/setup.mjs --browser');
  assert.ok(existsSync(join(root, 'pkg', 'workerd', 'fetch.js')), 'pkg/ is not built: node scripts/build.mjs --no-demo');
  server = await startServer();
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const modules = [['worker.js', 'esModule']];
  writeFileSync(join(work, 'worker.js'), WORKER);
  for (const file of ['workerd/fetch.js', 'workerd/core.js', 'fetch.js', 'core.js', 'shell.wasm']) {
    const flat = file.replace('/', '-');
    copyFileSync(join(root, 'pkg', file), join(work, flat));
    modules.push([`managed-eventsource/${file}`, file.endsWith('.wasm') ? 'wasm' : 'esModule', flat]);
  }
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(work, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
${modules.map(([name, kind, file = name]) => `    (name = "${name}", ${kind} = embed "${file}")`).join(',\n')}
  ],
  compatibilityDate = "2026-11-01",
  globalOutbound = "loopback",
);
`,
  );
  workerd = spawn(bin, ['serve', join(work, 'config.capnp')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  workerd.stdout.on('data', (d) => (log += d));
  workerd.stderr.on('data', (d) => (log += d));
  const limit = setTimeout(() => workerd.kill('SIGKILL'), LIMIT_MS);
  workerd.on('exit', () => clearTimeout(limit));
  // Up once it answers.
  for (let i = 0; ; i++) {
    try {
      await fetch(`${base}/inlined?sse=x`);
      break;
    } catch {
      assert.ok(i < 100 && workerd.exitCode === null, `workerd did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});

after(async () => {
  workerd?.kill();
  await server?.close();
});

test('workerd: the workerd build streams with the fetch transport and resumes after a drop, each event once', async () => {
  await fetch(`${server.url}/plan?c=workerd&steps=cut:3&then=stream`);
  const seen = await (await fetch(`${base}/stream?sse=${encodeURIComponent(`${server.url}/sse?c=workerd`)}`)).json();
  assert.deepEqual(seen.ids, [1, 2, 3, 4, 5, 6], JSON.stringify(seen));
  assert.deepEqual(seen.statuses.slice(0, 3), ['open', 'reconnecting', 'open'], JSON.stringify(seen));
  assert.equal(seen.retries, 1);
  assert.equal(seen.final, 'closed');
  const log = await (await fetch(`${server.url}/log?c=workerd`)).json();
  assert.deepEqual(log.attempts.map((a) => a.url), ['/sse?c=workerd', '/sse?c=workerd&lastEventId=3']);
});

test('workerd: the build that compiles at run time says the runtime refuses it, from its constructor', async () => {
  const { error } = await (await fetch(`${base}/inlined?sse=${encodeURIComponent(`${server.url}/sse?c=workerd-inlined`)}`)).json();
  assert.match(error, /managed-eventsource: this runtime refuses to compile WebAssembly at run time \(as Cloudflare Workers do\)/);
  const log = await (await fetch(`${server.url}/log?c=workerd-inlined`)).json();
  assert.equal(log.attempts.length, 0, 'nothing connected');
});

test("a bundler that resolves the workerd condition keeps the fetch entry's registration (sideEffects names it)", async () => {
  // webpack, production, as a Worker's build would resolve the package: the shell's .wasm import left to the
  // runtime. Its `sideEffects` would otherwise drop workerd/fetch.js, whose exports are the shell's.
  const app = join(work, 'webpack-app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(join(root, 'pkg'), join(app, 'node_modules', 'managed-eventsource'));
  writeFileSync(join(app, 'worker.js'), "import { ManagedEventSource } from 'managed-eventsource/fetch';\nglobalThis.client = ManagedEventSource;\n");
  const { default: webpack } = await import(join(root, 'node_modules', 'webpack', 'lib', 'index.js'));
  await new Promise((resolve, reject) =>
    webpack(
      {
        mode: 'production',
        context: app,
        entry: './worker.js',
        experiments: { outputModule: true },
        output: { path: join(app, 'dist'), module: true, library: { type: 'module' } },
        externals: { '../shell.wasm': 'module ../shell.wasm' },
        externalsType: 'module',
        resolve: { conditionNames: ['workerd', 'worker', 'import', 'module', 'default'] },
      },
      (err, stats) => (err || stats.hasErrors() ? reject(err ?? new Error(stats.toString('errors-only'))) : resolve()),
    ),
  );
  const bundle = readFileSync(join(app, 'dist', 'main.mjs'), 'utf8');
  assert.match(bundle, /\.\.\/shell\.wasm/, 'the workerd build was resolved');
  assert.match(bundle, /option fetch must be a function/, 'the fetch transport is in the bundle');
});

test('the package names the workerd build in its exports, and ships its files', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'pkg', 'package.json'), 'utf8'));
  assert.equal(manifest.exports['.'].workerd.default, './workerd/index.js');
  assert.equal(manifest.exports['./fetch'].workerd.default, './workerd/fetch.js');
  assert.equal(Object.keys(manifest.exports['.'])[0], 'workerd', 'the condition comes first');
  for (const f of ['workerd/*.js', 'shell.wasm']) assert.ok(manifest.files.includes(f), f);
});
