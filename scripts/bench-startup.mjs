// `npm run bench:startup`: what the first client costs a page at start, in Chromium, Firefox and WebKit,
// beside the native EventSource and reconnecting-eventsource (the JavaScript peer) in the same run. The
// package must be built (npm run build).
//
// Each sample is a fresh browser process with a new profile (nothing cached, no code cache) and no driver
// attached (see scripts/engines.mjs), on a page that waits 500 ms after its load (the browser's own
// start-up competes for the cores before that), then imports one client, constructs it once and waits for
// its `open`, timing with performance.now(), and posts its figures to this server on 127.0.0.1:
//   import         the `import()` of the client's module (fetch, parse, evaluate); 0 for native
//   construct      the first `new ...()`, split for ours into what the page can see from outside the package:
//                  decode (Uint8Array.fromHex), compile (new WebAssembly.Module), instantiate
//                  (new WebAssembly.Instance) and the rest (the shell: the JavaScript half and Rust's start)
//   later          the longest task from the construct's end to just after its open (a message loop's
//                  longest gap): for ours, where its shell begins
//   to open        from just before the constructor to the client's `open` event
//   second         a second `new ...()` after the first has opened: the construct once its code has run
// The client 'managed-eventsource' is constructed with a URL string and no options: its constructor runs
// the option check (src/check.rs) and none of the shell's wasm, and the client begins in a later task once
// the shell's module is compiled off the main thread (see launch in src/web/client.js);
// 'managed-eventsource with maxAttempts' is given an option, 'managed-eventsource with a URL function' (and
// maxAttempts) a URL function, which the constructor asks for the first attempt's URL: the same path. 'the
// shell's module compiled alone' is no client: the page compiles the module as the package inlines it, the
// first WebAssembly in the process, so its compile is the module's own compile time.
// 'managed-eventsource with the fetch transport' imports the fetch entry (managed-eventsource/fetch) and is
// given transport 'fetch' and maxAttempts: the same path, its request made once the shell begins.
// 'managed-eventsource with share' is given a share name (and maxAttempts), alone on its page, so that it
// leads: its constructor runs the option check, and it builds its shell once it has the lock and the module.
// The client 'managed-eventsource after prepare()' is ours on a page that calls prepare() after the import
// and awaits it before constructing: the compile happens off the main thread and the instantiation in
// prepare()'s own task (timed as the longest task while it runs), so its construct has neither.
// Medians over the samples. The budgets (issue 44): a first construct at most 5 ms of main thread in every
// engine, and no task it causes longer than a frame (16 ms) until the client is open.
//
//   node scripts/bench-startup.mjs [--samples 11] [--engines Chromium,Firefox,WebKit] [--clients A,B] [--after MS] [--other DIR] [--write]
//   --after MS waits MS between the import and the first construct (a page that imports at load and makes its
//   client later), where by default it constructs at once;
//   --other DIR also times DIR/index.js (a build of the package from another directory, such as a copy of
//   pkg/ made before a change) as the clients 'managed-eventsource (other)', '... (other) after prepare()'
//   '... (other) with maxAttempts' and '... (other) with share', and DIR/fetch.js as '... (other) with the
//   fetch transport', in the same run;
//   --clients A,B runs only the clients named (with native and the peer), not with --write;
//   --marks prints, for each engine and client, the medians of the page's performance.measure entries
//   named 'me:<part>' (an experiment: a copy of the package with such measures put in, given as --other).
//   --write rewrites the startup sections of docs/performance.md (the whole table) and README.md (in brief).

import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engines, isolate, open } from './engines.mjs';
import { writeSection } from './sections.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const samples = Number(arg('samples', 11));
const only = arg('engines', null)?.split(',');
const other = arg('other', null);
const after = Number(arg('after', 0));

const CLIENTS = {
  native: { import: null, make: `(url) => new EventSource(url)` },
  'reconnecting-eventsource 1.6.5': { import: '/peer/reconnecting-eventsource.js', make: `(url, m) => new m.default(url)` },
  'managed-eventsource': { import: '/pkg/index.js', make: `(url, m) => new m.ManagedEventSource(url)` },
};
const OURS = 'managed-eventsource';
/** Ours, with the page calling prepare() (the compile off the main thread) after the import and awaiting it. */
const PREPARED = `${OURS} after prepare()`;
CLIENTS[PREPARED] = { import: '/pkg/index.js', before: 'await m.prepare();', make: CLIENTS[OURS].make };
/** Ours given an option whose value its type does not settle: the constructor runs the option check. */
const CHECKED = `${OURS} with maxAttempts`;
CLIENTS[CHECKED] = { import: '/pkg/index.js', make: `(url, m) => new m.ManagedEventSource(url, { maxAttempts: 10 })` };
/** Ours given a URL function, which the constructor asks for the first attempt's URL: the same path as a
 * URL string with maxAttempts. */
const FN = `${OURS} with a URL function`;
CLIENTS[FN] = { import: '/pkg/index.js', make: `(url, m) => new m.ManagedEventSource(() => url, { maxAttempts: 10 })` };
/** Not a client: the shell's module (the wasm as the package inlines it) compiled on the main thread, the
 * first WebAssembly in the process, then a native EventSource: its compile is the module's own compile
 * time, the reference the targets name. */
const MODULE = "the shell's module compiled alone";
CLIENTS[MODULE] = { wasm: true, make: `(url, m, wasm) => (new WebAssembly.Module(wasm), new EventSource(url))` };
/** Ours with the fetch transport (managed-eventsource/fetch): what a page with token auth or a POST stream
 * makes. Its entry's module is the larger one (the fetch transport's parser); the construct compiles it only
 * where it builds the shell. */
const FETCH = `${OURS} with the fetch transport`;
CLIENTS[FETCH] = { import: '/pkg/fetch.js', make: `(url, m) => new m.ManagedEventSource(url, { transport: 'fetch', maxAttempts: 10 })` };
/** Ours with `share` (one connection for all tabs), alone on its page: it leads. */
const SHARED = `${OURS} with share`;
CLIENTS[SHARED] = { import: '/pkg/share.js', make: `(url, m) => new m.ManagedEventSource(url, { share: 'feed' + Math.random(), maxAttempts: 10 })` };
if (other) {
  // A build from before the share entry shares through its main entry.
  CLIENTS[`${OURS} (other) with share`] = { import: existsSync(join(other, 'share.js')) ? '/other/share.js' : '/other/index.js', make: CLIENTS[SHARED].make };
  CLIENTS[`${OURS} (other) with the fetch transport`] = { import: '/other/fetch.js', make: CLIENTS[FETCH].make };
  CLIENTS[`${OURS} (other)`] = { import: '/other/index.js', make: CLIENTS[OURS].make };
  CLIENTS[`${OURS} (other) after prepare()`] = { import: '/other/index.js', before: 'await m.prepare?.();', make: CLIENTS[OURS].make };
  CLIENTS[`${OURS} (other) with maxAttempts`] = { import: '/other/index.js', make: CLIENTS[CHECKED].make };
}
const isOurs = (client) => client.startsWith(OURS);
// --clients a,b: only the clients named (native and the peer always run: the ratios need the peer).
const chosen = arg('clients', null)?.split(',');
if (chosen) for (const c of Object.keys(CLIENTS)) if (!chosen.includes(c) && c !== 'native' && !c.startsWith('reconnecting-eventsource')) delete CLIENTS[c];

const page = (name) => `<!doctype html><meta charset="utf-8"><title>startup</title>
<script type="module">
const now = () => performance.now();
const parts = { decode: 0, compile: 0, instantiate: 0 };
// Times what the package does from outside it: each wrapper adds its call's time to one part.
const time = (obj, key, part) => {
  const f = obj[key];
  if (typeof f !== 'function') return;
  obj[key] = new Proxy(f, {
    construct(t, a, n) { const s = now(); try { return Reflect.construct(t, a, n); } finally { parts[part] += now() - s; } },
    apply(t, self, a) { const s = now(); try { return Reflect.apply(t, self, a); } finally { parts[part] += now() - s; } },
  });
};
time(Uint8Array, 'fromHex', 'decode');
time(WebAssembly, 'Module', 'compile');
time(WebAssembly, 'Instance', 'instantiate');
/** A message loop from now on; \`stop()\` ends it after a last turn and gives its longest gap: the longest
 * task the page ran meanwhile. */
const tasks = () => {
  let longest = 0, last = now(), on = true;
  const ch = new MessageChannel();
  ch.port1.onmessage = () => {
    const t = now();
    longest = Math.max(longest, t - last);
    last = t;
    if (on) ch.port2.postMessage(0);
  };
  ch.port2.postMessage(0);
  return {
    async stop(ms) {
      await new Promise((r) => setTimeout(r, ms)); // the loop's last turns, after the task that ended the wait
      on = false;
      ch.port1.onmessage = null;
      return longest;
    },
  };
};
// The browser's own start-up (its other processes, the first paint) competes for the same cores for the
// first few hundred milliseconds; the page lets it settle, so that what it times is the client's.
if (document.readyState !== 'complete') await new Promise((r) => addEventListener('load', r, { once: true }));
await new Promise((r) => setTimeout(r, 500));
const client = ${JSON.stringify(name)};
const spec = ${JSON.stringify(CLIENTS[name])};
const url = '/sse?r=' + Math.random();
const i0 = now();
const m = spec.import ? await import(spec.import) : null;
const i1 = now();
const wasm = spec.wasm ? new Uint8Array(await (await fetch('/module.wasm')).arrayBuffer()) : null;
${CLIENTS[name].before ? `// What prepare() costs the main thread: the longest task while it runs.
const preparing = tasks();
${CLIENTS[name].before}
parts.prepareTask = await preparing.stop(50);` : ''}
${after ? `await new Promise((r) => setTimeout(r, ${after}));` : ''}
const make = (${CLIENTS[name].make});
for (const k of ['decode', 'compile', 'instantiate']) parts[k] = 0; // from here on: the construct's own
const c0 = now();
let opened;
const open = new Promise((r) => (opened = r));
const es = make(url, m, wasm);
es.addEventListener('open', () => opened(now()), { once: true });
const c1 = now();
const own = { decode: parts.decode, compile: parts.compile, instantiate: parts.instantiate };
// The longest task from here until just after the open: what the client does later on the main thread
// (for ours with a string URL, the shell's taking over).
const afterwards = tasks();
const o = await open;
const later = await afterwards.stop(30);
// A second client at once: what the construct costs once the engine has run the code (the first-run part).
const a0 = now();
const again = make(url + '&again', m, wasm);
const a1 = now();
again.close();
es.close();
// A copy of the package with marks in it (an experiment, see --marks) measures its parts as 'me:<part>'.
const marks = {};
for (const e of performance.getEntriesByType('measure')) {
  const part = e.name.startsWith('me:') && e.name.slice(3);
  if (part) marks[part] = (marks[part] ?? 0) + e.duration;
}
await fetch('/result', { method: 'POST', body: JSON.stringify({ client, import: i1 - i0, construct: c1 - c0, ...parts, ...own, later, toOpen: o - c0, again: a1 - a0, marks, ua: navigator.userAgent, isolated: crossOriginIsolated }) });
</script>`;

async function sample(engine, name, server) {
  let done;
  const got = new Promise((r) => (done = r));
  server.wait = done;
  const b = await open(engine, `http://127.0.0.1:${server.address().port}/?client=${encodeURIComponent(name)}`);
  const timer = setTimeout(() => done(null), 60000);
  const r = await got;
  clearTimeout(timer);
  await b.stop();
  if (!r) throw new Error(`bench:startup: ${engine.name} did not report for ${name} within 60 s`);
  // Else WebKit's clock counts whole milliseconds (see isolate in engines.mjs).
  if (!r.isolated) throw new Error(`bench:startup: ${engine.name}'s page was not cross-origin isolated`);
  return r;
}

function serve() {
  const server = http.createServer((req, res) => {
    isolate(res);
    const url = new URL(req.url, 'http://127.0.0.1');
    res.shouldKeepAlive = false;
    if (url.pathname === '/') {
      return res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' }).end(page(url.searchParams.get('client')));
    }
    if (/^\/pkg\/(index|fetch|share|core)\.js$/.test(url.pathname)) {
      return res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store' }).end(readFileSync(join(root, 'pkg', url.pathname.slice(5))));
    }
    if (url.pathname === '/module.wasm') {
      return res.writeHead(200, { 'Content-Type': 'application/wasm', 'Cache-Control': 'no-store' }).end(readFileSync(join(root, 'target', 'pkg-build', 'shell', 'managed_eventsource_bg.wasm')));
    }
    if (/^\/other\/(index|fetch|share|core)\.js$/.test(url.pathname) && other) {
      return res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store' }).end(readFileSync(join(other, url.pathname.slice(7))));
    }
    if (url.pathname === '/peer/reconnecting-eventsource.js') {
      const file = join(root, 'node_modules', 'reconnecting-eventsource', 'build', 'esm', 'reconnecting-eventsource.js');
      return res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store' }).end(readFileSync(file));
    }
    if (url.pathname === '/sse') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(': open\n\n');
      return;
    }
    if (url.pathname === '/result' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        res.end('ok');
        server.wait?.(JSON.parse(body));
      });
      return;
    }
    res.writeHead(404).end();
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function benchStartup({ log = () => {} } = {}) {
  const list = engines().filter((e) => !only || only.includes(e.name));
  const server = await serve();
  const results = [];
  try {
    for (let k = 0; k < samples; k++) {
      for (const engine of list) {
        for (const name of Object.keys(CLIENTS).sort(() => Math.random() - 0.5)) {
          const r = await sample(engine, name, server);
          results.push({ engine: engine.name, ...r });
        }
      }
      log(`[bench:startup] sample ${k + 1} of ${samples} done`);
    }
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
  return results;
}

/** Medians per engine and client, and the targets' verdicts. */
export function summarise(results) {
  const rows = [];
  for (const engine of new Set(results.map((r) => r.engine))) {
    const version = (ua) => ua.match(/Firefox\/([\d.]+)/)?.[0] ?? ua.match(/Chrome\/([\d.]+)/)?.[0] ?? ua.match(/AppleWebKit\/([\d.]+)/)?.[0];
    const ua = version(results.find((r) => r.engine === engine).ua);
    const of = (client) => results.filter((r) => r.engine === engine && r.client === client);
    const m = (client, key) => median(of(client).map((r) => r[key]));
    const peer = 'reconnecting-eventsource 1.6.5';
    for (const client of Object.keys(CLIENTS)) {
      const row = { engine, ua, client, n: of(client).length };
      for (const key of ['import', 'construct', 'decode', 'compile', 'instantiate', 'later', 'toOpen', 'again', 'prepareTask']) row[key] = m(client, key);
      row.rest = median(of(client).map((r) => r.construct - r.decode - r.compile - r.instantiate));
      row.openRatio = row.toOpen / m(peer, 'toOpen');
      rows.push(row);
    }
    // The budgets (issue 44): a first construct at most 5 ms of main thread, and no task it causes longer
    // than a frame (16 ms) until the client is open.
    for (const [client, label] of [[OURS, ''], [CHECKED, 'with maxAttempts, '], [FN, 'with a URL function, '], [PREPARED, 'after prepare(), '], [FETCH, 'with the fetch transport, '], [SHARED, 'with share, ']]) {
      const row = rows.find((r) => r.engine === engine && r.client === client);
      if (!row) continue; // not chosen (--clients)
      row.verdicts = [
        [`${label}construct ${row.construct.toFixed(2)} ms ≤ 5 ms`, row.construct <= 5],
        [`${label}longest task until open ${row.later.toFixed(2)} ms ≤ 16 ms`, row.later <= 16],
      ];
    }
  }
  return rows;
}

export function table(rows) {
  const f = (x) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(2));
  let md = `Each sample a fresh browser process with a new profile and no driver, timed from 500 ms after the page's load, on a cross-origin isolated page (so that WebKit's clock counts 20 µs steps, not whole milliseconds; see scripts/bench-startup.mjs); ${samples} samples per engine and client; medians, in ms of main thread as the page's \`performance.now()\` sees them. Construct: the first \`new ...()\`; for ours split into decode (hex to bytes), compile (\`new WebAssembly.Module\`: the option check's module, 2.3 kB; after \`prepare()\`, nothing), instantiate (the option check's) and the rest (the JavaScript half, the option check's run, and after \`prepare()\` the shell's build and Rust's start). Later: the longest task from the construct's end to just after the \`open\` (a message loop's longest gap), where the shell begins. The shell's module compiled alone: its compile is the module's own compile time. To open: from just before the constructor to the \`open\` event. Second: a second construct once the first has opened, which shows what of the first was the engine running the code for the first time.\n\n`;
  md += '| engine | client | import | construct | decode | compile | instantiate | rest | later | second | to open | ÷ peer |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
  for (const r of rows) {
    const ours = isOurs(r.client);
    md += `| ${r.engine} (${r.ua}) | ${r.client} | ${f(r.import)} | ${ours ? `**${f(r.construct)}**` : f(r.construct)} | ${ours ? f(r.decode) : ''} | ${ours || r.client === MODULE ? f(r.compile) : ''} | ${ours ? f(r.instantiate) : ''} | ${ours ? f(r.rest) : ''} | ${f(r.later)} | ${f(r.again)} | ${f(r.toOpen)} | ${f(r.openRatio)} |\n`;
  }
  const tasks = rows.filter((r) => r.client === PREPARED).map((r) => `${r.engine} ${f(r.prepareTask)} ms`);
  md += `\nThe row after \`prepare()\`: the page calls it after the import and awaits it, then constructs. It moves the compile off the main thread and the instantiation into a task of its own before the construct, which then begins the client at once; prepare()'s task, the longest the page saw while \`prepare()\` ran (a message loop's longest gap): ${tasks.join(', ')}.\n`;
  const verdicts = rows.filter((r) => r.verdicts).flatMap((r) => r.verdicts.map(([what, ok]) => `${r.engine}: ${what}: ${ok ? 'met' : 'missed'}`));
  md += `\nTargets: ${verdicts.join('; ')}.\n`;
  return md;
}

/** The README's table: per engine, the first construct and the time to open, ours beside the peer and native. */
export function brief(rows) {
  const f = (x) => x.toFixed(1);
  let md = `First client on a page, ${samples} fresh browser processes per engine and client, medians (ms of main thread; to \`open\` includes the connection):\n\n`;
  md += '| engine | first construct: ours (the longest task after it, until open) | ours with `maxAttempts` | ours with a URL function | ours with the fetch transport | ours after `prepare()` | the shell\'s module: its compile alone | reconnecting-eventsource | native | to open: ours ÷ peer |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
  for (const engine of new Set(rows.map((r) => r.engine))) {
    const of = (c) => rows.find((r) => r.engine === engine && r.client === c);
    const ours = of(OURS), checked = of(CHECKED), fn = of(FN), viaFetch = of(FETCH), prepared = of(PREPARED), module = of(MODULE), peer = of('reconnecting-eventsource 1.6.5'), native = of('native');
    md += `| ${engine} | ${f(ours.construct)} (${f(ours.later)}) | ${f(checked.construct)} | ${f(fn.construct)} | ${f(viaFetch.construct)} | ${f(prepared.construct)} | ${f(module.compile)} | ${f(peer.construct)} | ${f(native.construct)} | ${ours.openRatio.toFixed(2)} |\n`;
  }
  return md;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!existsSync(join(root, 'pkg', 'index.js'))) {
    console.error('bench:startup: pkg/index.js is missing; run npm run build first');
    process.exit(1);
  }
  const results = await benchStartup({ log: console.log });
  const md = table(summarise(results));
  console.log('\n' + md);
  // --marks: the medians of what a copy of the package with marks in it measured (see the page).
  if (process.argv.includes('--marks')) {
    for (const key of new Set(results.map((r) => `${r.engine}\t${r.client}`))) {
      const of = results.filter((r) => `${r.engine}\t${r.client}` === key);
      const parts = [...new Set(of.flatMap((r) => Object.keys(r.marks ?? {})))];
      if (parts.length) console.log(`${key.replace('\t', ', ')}: ${parts.map((p) => `${p} ${median(of.map((r) => r.marks[p] ?? 0)).toFixed(2)}`).join(', ')}`);
    }
  }
  if (process.argv.includes('--write')) {
    if (after || other || chosen) throw new Error('bench:startup: --write takes the default run, with no --after, --other or --clients');
    writeSection('docs/performance.md', 'startup', 'npm run bench:startup -- --write', md);
    writeSection('README.md', 'startup', 'npm run bench:startup -- --write', brief(summarise(results)));
  }
}
