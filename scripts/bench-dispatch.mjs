// `npm run bench:dispatch`: what each EventSource client costs per event, side by side in one page, in
// Chromium, Firefox and WebKit in turn. The package must be built (npm run build).
//
// A server on 127.0.0.1 sends N events (`id:` and `data:`, as a live feed would) as fast as the socket takes
// them; the page times each client from its first event to its Nth, with a handler that touches `ev.data`.
// Clients: the native EventSource with `onmessage` (the baseline) and with `addEventListener`,
// reconnecting-eventsource 1.6.5 (the JavaScript peer, which relays events without retargeting them), a
// reference relay (the floor: see CLIENTS), and ours with `onmessage` and `addEventListener`;
// then the fetch-based clients: ours with `transport: 'fetch'` (which hands listeners MessageEvents),
// @microsoft/fetch-event-source 2.0.1 (plain objects to `onmessage`) and eventsource 4.0.0 (MessageEvents),
// the peers bundled for the page by esbuild.
// Rounds are shuffled; medians, spread (min-max) and ratios to native onmessage are printed. Higher is
// better: a ratio of 1.10 means 10 % more events a second than the native baseline.
//
// Each engine is started on the page itself with no driver and no DevTools connection (scripts/engines.mjs:
// a DevTools Network session sends one message per EventSource event to the driver, which skews every
// EventSource client; see TOOLCHAIN.md), and the page posts its timings back to this server.
//
// Then, in the same page, the dispatch alone: prebuilt MessageEvents dispatched on the EventSource each
// stream client made, which leaves out the network and the parser (and their noise).
//
//   node scripts/bench-dispatch.mjs [--rounds 31] [--sizes 20000,100000] [--alone 100000] [--clients a,b]
//                                   [--engines Chromium,Firefox,WebKit] [--write]
//   --alone N sets how many events the dispatch alone times (0 leaves it out);
//   --clients runs only the clients named (and their baselines), for a quick comparison;
//   --other DIR also times `ManagedEventSource` with `onmessage` from another build of the package in DIR
//   (a copy of pkg/ made before a change), as the client 'other build onmessage';
//   --iteration times only async iteration (for await) beside ours with onmessage and the native baseline;
//   every run that has both prints iteration's events/s over onmessage's, paired by round (the budget:
//   at least 0.9);
//   --trace times only ours with the trace option on (its records kept) beside ours without it and the
//   native baseline; every run that has both prints traced events/s over untraced, paired by round (the
//   budget: at least 0.99);
//   --write rewrites the dispatch section of docs/performance.md and the speed section of README.md.

import http from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engines, isolate, open } from './engines.mjs';
import { writeSection } from './sections.mjs';
import { WebSocketServer } from 'ws';
import { fetchPeers } from './fetch-peers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', 31));
const sizes = arg('sizes', '20000,100000').split(',').map(Number);
/** How many events the dispatch alone times per client and round (0: none). */
const alone = Number(arg('alone', 100000));

/** Async iteration, which --iteration times beside ours with onmessage (and the native baseline) alone. */
const ITERATION = 'managed-eventsource for await';
const OURS = 'managed-eventsource onmessage';
/** Ours with the trace option on, which --trace times beside ours without it. */
const TRACED = 'managed-eventsource onmessage, traced';
/** The client that --other adds. */
const OTHER = 'other build onmessage';
/** The reference relay (see CLIENTS). */
const FLOOR = 'relay floor: a listener only';
const CLIENTS = {
  'native onmessage': `(url, on) => { const es = new EventSource(url); es.onmessage = on; return () => es.close(); }`,
  'native addEventListener': `(url, on) => { const es = new EventSource(url); es.addEventListener('message', on); return () => es.close(); }`,
  'reconnecting-eventsource 1.6.5': `(url, on) => { const es = new ReconnectingEventSource(url); es.onmessage = on; return () => es.close(); }`,
  'managed-eventsource onmessage': `(url, on) => { const es = new ManagedEventSource(url); es.onmessage = on; return () => es.close(); }`,
  'managed-eventsource addEventListener': `(url, on) => { const es = new ManagedEventSource(url); es.addEventListener('message', on); return () => es.close(); }`,
  // Async iteration: the loop's body is the handler. No bound on its queue: the dispatch alone (below)
  // dispatches every event before the loop takes the first, which is what a bound exists to refuse.
  // Timed from the first event's arrival (first, a listener called once), not from the loop's first turn,
  // which comes a task later.
  // The trace option on, its records kept as an app that shows them would.
  [TRACED]: `(url, on) => { const records = []; const es = new ManagedEventSource(url, { trace: (r) => records.push(r) }); es.onmessage = on; return () => es.close(); }`,
  [ITERATION]: `(url, on, first) => { const es = new ManagedEventSource(url); es.addEventListener('message', first, { once: true }); (async () => { for await (const ev of es.events('message', { max: Infinity })) on(ev); })(); return () => es.close(); }`,
  // Not a client: the least any relay can do (one listener that calls the handler with the event as it
  // came, no bookkeeping), so that the table shows how near native a relay can come in each engine.
  [FLOOR]: `(url, on) => { const es = new EventSource(url), me = {}; es.addEventListener('message', (e) => on.call(me, e)); return () => es.close(); }`,
  [OTHER]: `(url, on) => { const es = new OtherEventSource(url); es.onmessage = on; return () => es.close(); }`,
  'managed-eventsource fetch onmessage': `(url, on) => { const es = new FetchEventSource(url, { transport: 'fetch' }); es.onmessage = on; return () => es.close(); }`,
  '@microsoft/fetch-event-source 2.0.1': `(url, on) => { const ac = new AbortController(); peers.fetchEventSource(url, { signal: ac.signal, onmessage: on, openWhenHidden: true }); return () => ac.abort(); }`,
  'eventsource 4.0.0': `(url, on) => { const es = new peers.EventSource(url); es.onmessage = on; return () => es.close(); }`,
  'native WebSocket onmessage': `(url, on) => { const ws = new WebSocket(wsUrl(url)); ws.onmessage = on; return () => ws.close(); }`,
  'ManagedWebSocket onmessage': `(url, on) => { const ws = new ManagedWebSocket(wsUrl(url)); ws.onmessage = on; return () => ws.close(); }`,
};
/** Whether a client is a stream client, not a socket. */
const isStream = (name) => !name.includes('WebSocket');
/** The clients that drive a native EventSource, which the dispatch alone dispatches on. */
const FETCHING = ['managed-eventsource fetch onmessage', '@microsoft/fetch-event-source 2.0.1', 'eventsource 4.0.0'];
const onEventSource = (name) => isStream(name) && !FETCHING.includes(name);
/** Each client's baseline: native EventSource with onmessage, or for sockets the native WebSocket. */
const baselineOf = (name) => (isStream(name) ? 'native onmessage' : 'native WebSocket onmessage');
const other = arg('other', null);
const only = process.argv.includes('--iteration')
  ? [OURS, ITERATION]
  : process.argv.includes('--trace')
    ? [OURS, TRACED]
    : arg('clients', null)?.split(',');
const onlyEngines = arg('engines', null)?.split(',');
if (only?.some((name) => !CLIENTS[name])) throw new Error(`bench:dispatch: --clients takes names from: ${Object.keys(CLIENTS).join(', ')}`);
/** The clients this run times. */
const RUN = Object.keys(CLIENTS).filter((name) =>
  name === OTHER ? other : !only || only.includes(name) || only.some((o) => baselineOf(o) === name),
);

const page = `<!doctype html><meta charset="utf-8"><title>dispatch bench</title>
<script type="module">
import { ManagedEventSource } from '/pkg/index.js';
import { ManagedWebSocket } from '/pkg/websocket.js';
import { ManagedEventSource as FetchEventSource } from '/pkg/fetch.js';
import * as peers from '/peer/fetch-peers.js';
import ReconnectingEventSource from '/peer/reconnecting-eventsource.js';
const { ManagedEventSource: OtherEventSource } = ${other ? "await import('/other/index.js')" : '{}'};
const wsUrl = (url) => location.origin.replace(/^http/, 'ws') + url.replace('/blast', '/ws-blast');
const clients = { ${Object.entries(CLIENTS).map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(',\n')} };
const plan = await (await fetch('/plan')).json();
const results = [];
// One client at a time: time its first to its Nth event.
function run(name, n, k) {
  return new Promise((resolve) => {
    let count = 0, bytes = 0, t0 = 0;
    let stop;
    const first = () => (t0 ||= performance.now());
    const on = (ev) => {
      bytes += ev.data.length;
      if (++count === 1) first();
      if (count === n) {
        const ms = performance.now() - t0;
        stop();
        resolve({ name, n, k, ms, bytes });
      }
    };
    stop = clients[name]('/blast?n=' + n + '&k=' + k, on, first);
  });
}
for (const job of plan.blast) {
  results.push(await run(job.name, job.n, job.k));
  await new Promise((r) => setTimeout(r, 150));
}
// The dispatch alone: the page keeps every EventSource made from here on, and dispatches prebuilt
// MessageEvents on the one a client made, once it is open, so the network and the parser are left out.
const inner = [];
const Native = EventSource;
globalThis.EventSource = class extends Native {
  constructor(...args) {
    super(...args);
    inner.push(this);
  }
};
async function dispatch(name, n, k) {
  const events = [];
  for (let i = 1; i <= n; i++) events.push(new MessageEvent('message', { data: '{"n":' + i + ',"v":"' + ((i * 7919) % 100000) + '"}', lastEventId: String(i) }));
  let bytes = 0, count = 0, all;
  // Until the handler has seen every event: a loop of for await takes them after the dispatches.
  const consumed = new Promise((r) => (all = r));
  const stop = clients[name]('/quiet', (ev) => {
    bytes += ev.data.length;
    if (++count === n) all();
  }, () => {});
  const es = inner.at(-1);
  while (es.readyState !== 1) await new Promise((r) => setTimeout(r, 5));
  const t0 = performance.now();
  // EventTarget's own dispatchEvent: ours gives the source the instance's face (see attach in relay.js),
  // whose dispatchEvent is the instance's.
  const send = EventTarget.prototype.dispatchEvent;
  for (const ev of events) send.call(es, ev);
  await consumed;
  const ms = performance.now() - t0;
  stop();
  return { name, n, k, ms, bytes, alone: true };
}
for (const job of plan.alone) {
  results.push(await dispatch(job.name, job.n, job.k));
  await new Promise((r) => setTimeout(r, 150));
}
await fetch('/result', { method: 'POST', body: JSON.stringify({ results, ua: navigator.userAgent, isolated: crossOriginIsolated }) });
</script>`;

function shuffle(a) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const frames = new Map();
function blast(n) {
  if (!frames.has(n)) {
    let s = '';
    for (let i = 1; i <= n; i++) s += `id: ${i}\ndata: {"n":${i},"v":"${(i * 7919) % 100000}"}\n\n`;
    frames.set(n, Buffer.from(s));
  }
  return frames.get(n);
}

export async function benchDispatch(engine) {
  const plan = { blast: [], alone: [] };
  for (let k = 0; k < rounds; k++) {
    for (const n of sizes) plan.blast.push(...shuffle(RUN.map((name) => ({ name, n, k }))));
    if (alone) plan.alone.push(...shuffle(RUN.filter(onEventSource).map((name) => ({ name, n: alone, k }))));
  }
  let done;
  const finished = new Promise((r) => (done = r));
  const server = http.createServer((req, res) => {
    isolate(res);
    const url = new URL(req.url, 'http://127.0.0.1');
    res.shouldKeepAlive = false;
    if (url.pathname === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    if (url.pathname === '/plan') return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(plan));
    if (url.pathname === '/peer/fetch-peers.js') return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(fetchPeers());
    // The entries and the shell they import (core.js), of this build and of the other.
    if (/^\/pkg\/(index|websocket|fetch|core)\.js$/.test(url.pathname)) {
      return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(join(root, url.pathname)));
    }
    if (other && /^\/other\/(index|core)\.js$/.test(url.pathname)) {
      return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(join(other, url.pathname.slice(7))));
    }
    if (url.pathname === '/peer/reconnecting-eventsource.js') {
      const file = join(root, 'node_modules', 'reconnecting-eventsource', 'build', 'esm', 'reconnecting-eventsource.js');
      return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(file));
    }
    if (url.pathname === '/blast') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      // Hold the stream open after the last event, so no client reconnects while it is being timed.
      res.write(blast(Number(url.searchParams.get('n'))));
      return;
    }
    if (url.pathname === '/quiet') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(': open\n\n');
      return;
    }
    if (url.pathname === '/result' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        res.end('ok');
        done(JSON.parse(body));
      });
      return;
    }
    res.writeHead(404).end();
  });
  // The same messages over a WebSocket: each event's data as one message.
  const wss = new WebSocketServer({ server, path: '/ws-blast' });
  wss.on('connection', (ws, req) => {
    const n = Number(new URL(req.url, 'http://127.0.0.1').searchParams.get('n'));
    for (let i = 1; i <= n; i++) ws.send(`{"n":${i},"v":"${(i * 7919) % 100000}"}`);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  const browser = await open(engine, `http://127.0.0.1:${port}/`);
  const timeout = setTimeout(() => done(null), 15 * 60 * 1000);
  const outcome = await finished;
  clearTimeout(timeout);
  await browser.stop();
  server.closeAllConnections?.();
  server.close();
  if (!outcome) throw new Error(`bench:dispatch: ${engine.name} did not report within 15 minutes`);
  // Else WebKit's clock counts whole milliseconds, a few per cent of a run (see isolate in engines.mjs).
  if (!outcome.isolated) throw new Error(`bench:dispatch: ${engine.name}'s page was not cross-origin isolated`);
  return outcome;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * A 95 % confidence interval for the median of `xs`, from order statistics (no assumption about the
 * distribution): the ranks (n - 1.96 √n) / 2 and 1 + (n + 1.96 √n) / 2, as [low, high]. With fewer than 6
 * values it is their whole range.
 */
export function interval(xs) {
  const s = [...xs].sort((a, b) => a - b), n = s.length, h = 1.96 * Math.sqrt(n);
  const lo = Math.max(1, Math.floor((n - h) / 2)), hi = Math.min(n, Math.ceil(1 + (n + h) / 2));
  return [s[lo - 1], s[hi - 1]];
}

/**
 * Rows per size: events/s median, min and max, the ratio to the baseline's median, and the paired ratio:
 * the median over rounds of the client's rate divided by the baseline's rate in the same round. A round runs
 * every client once, back to back, so the paired ratio cancels the drift of a shared machine between rounds.
 * `alone` selects the runs of the dispatch alone (every event timed) or of the blast (first to last event).
 */
export function summarise(results, alone) {
  const rows = [];
  results = results.filter((r) => !r.alone === !alone);
  for (const n of new Set(results.map((r) => r.n))) {
    const of = (name) => results.filter((r) => r.name === name && r.n === n);
    const rate = (r) => ((alone ? n : n - 1) / r.ms) * 1000;
    for (const name of RUN.filter((name) => of(name).length !== 0)) {
      const rs = of(name).map(rate);
      const base = of(baselineOf(name));
      const paired = of(name).flatMap((r) => base.filter((b) => b.k === r.k).map((b) => rate(r) / rate(b)));
      const m = median(rs);
      rows.push({ n, name, median: m, min: Math.min(...rs), max: Math.max(...rs), ratio: m / median(base.map(rate)), paired: median(paired), within: interval(paired), usPerEvent: 1e6 / m });
    }
  }
  return rows;
}

function rowsOf(rows) {
  let md = '| events | client | median events/s | min – max | µs per event | ÷ native baseline | paired | paired, 95 % interval |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n';
  const k = (x) => Math.round(x).toLocaleString('en-US');
  for (const r of rows) md += `| ${r.n.toLocaleString('en-US')} | ${r.name} | ${k(r.median)} | ${k(r.min)} – ${k(r.max)} | ${r.usPerEvent.toFixed(2)} | **${r.ratio.toFixed(2)}** | ${r.paired.toFixed(2)} | ${r.within.map((x) => x.toFixed(2)).join(' – ')} |\n`;
  return md;
}

/** The README's table: at the largest size, each client's paired ratio to its native baseline, per engine. */
function brief(briefs) {
  const n = Math.max(...sizes);
  const columns = [
    ['managed-eventsource onmessage', 'ours'],
    ['reconnecting-eventsource 1.6.5', 'reconnecting-eventsource'],
    [FLOOR, 'a relay that only calls the handler'],
    [ITERATION, 'ours, for await'],
    ['managed-eventsource fetch onmessage', 'ours, fetch'],
    ['@microsoft/fetch-event-source 2.0.1', '@microsoft/fetch-event-source'],
    ['eventsource 4.0.0', 'eventsource v4'],
    ['ManagedWebSocket onmessage', 'ManagedWebSocket ÷ WebSocket'],
  ];
  let md = `Events a second as a multiple of the native client's in the same page (\`EventSource\` with \`onmessage\`; for the socket, \`WebSocket\`), ${n.toLocaleString('en-US')} events, ${rounds} rounds, paired medians (for ours, with a 95 % confidence interval); higher is faster:\n\n`;
  md += `| engine | ${columns.map(([, t]) => t).join(' | ')} |\n| --- |${' ---: |'.repeat(columns.length)}\n`;
  for (const [engine, rows] of briefs) {
    const at = (name) => {
      const r = rows.find((r) => r.n === n && r.name === name);
      if (!r) return '';
      // Ours with its 95 % interval: whether it is at, above or below native is what the target asks.
      return r.paired.toFixed(2) + (name === columns[0][0] ? ` (${r.within.map((x) => x.toFixed(2)).join('–')})` : '');
    };
    md += `| ${engine} | ${columns.map(([name]) => at(name)).join(' | ')} |\n`;
  }
  return md;
}

function table(results, ua, engine) {
  const version = ua.match(/Firefox\/[\d.]+/)?.[0] ?? ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua.match(/AppleWebKit\/[\d.]+/)?.[0];
  let md = `**${engine}** (${version}), no driver or DevTools connection, on a cross-origin isolated page (its clock in steps of 20 µs or less), ${rounds} rounds per client and size in shuffled order; events/s from the first to the last event (messages, for the sockets), with a handler that reads \`ev.data\`. Ratio: median events/s divided by the median of the native baseline in the same run (higher is faster): \`EventSource\` with \`onmessage\` for the stream clients, \`WebSocket\` with \`onmessage\` for the sockets. Paired: the median, over rounds, of the client's events/s divided by the baseline's in the same round (each round runs every client back to back, so this cancels the machine's drift between rounds), and a 95 % confidence interval for that median (from order statistics: it assumes nothing about how the rounds spread).\n\n`;
  md += rowsOf(summarise(results, false));
  const alone = summarise(results, true);
  if (alone.length !== 0) {
    md += `\nThe dispatch alone, in the same run: ${alone[0].n.toLocaleString('en-US')} \`MessageEvent\`s made beforehand and dispatched with \`dispatchEvent\` on the \`EventSource\` each client made (after it opened), so that the network and the stream's parser are left out and what remains is the browser's dispatch and each client's own work. The same handler; the same ratios.\n\n`;
    md += rowsOf(alone);
  }
  return md;
}

/**
 * A variant of ours (`name`: async iteration, the trace option) against ours with onmessage, in the same
 * run: for each size (and the dispatch alone), the median over rounds of its events/s divided by
 * onmessage's in the same round, with its 95 % interval. Empty unless both ran.
 */
function besideOurs(results, engine, name, label, budget) {
  const rows = [];
  for (const alone of [false, true]) {
    const part = results.filter((r) => !r.alone === !alone);
    for (const n of new Set(part.map((r) => r.n))) {
      const rate = (r) => ((alone ? n : n - 1) / r.ms) * 1000;
      const of = (client) => part.filter((r) => r.name === client && r.n === n);
      const paired = of(name).flatMap((r) => of(OURS).filter((b) => b.k === r.k).map((b) => rate(r) / rate(b)));
      if (paired.length === 0) continue;
      const us = (client) => 1e6 / median(of(client).map(rate));
      rows.push(`| ${alone ? 'dispatch alone, ' : ''}${n.toLocaleString('en-US')} | ${us(OURS).toFixed(2)} | ${us(name).toFixed(2)} | **${median(paired).toFixed(2)}** | ${interval(paired).map((x) => x.toFixed(2)).join(' – ')} |`);
    }
  }
  if (rows.length === 0) return '';
  return `\n**${engine}: ${label} beside onmessage** (ours, same run, paired by round; budget ≥ ${budget}):\n\n| events | onmessage µs/event | ${label} µs/event | ${label} ÷ onmessage | 95 % interval |\n| --- | ---: | ---: | ---: | ---: |\n${rows.join('\n')}\n`;
}

/** Async iteration against ours with onmessage (see besideOurs). */
export const iterationRow = (results, engine) => besideOurs(results, engine, ITERATION, 'for await', '0.90');

/** The trace option on against ours without it (see besideOurs). */
export const traceRow = (results, engine) => besideOurs(results, engine, TRACED, 'traced', '0.99');

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!existsSync(join(root, 'pkg', 'index.js'))) {
    console.error('bench:dispatch: pkg/index.js is missing; run npm run build first');
    process.exit(1);
  }
  console.log(`[bench:dispatch] ${rounds} rounds x ${sizes.join(', ')} events x ${RUN.length} clients${alone ? `, then the dispatch alone x ${alone} events` : ''}`);
  if ((only || other) && process.argv.includes('--write')) throw new Error('bench:dispatch: --write needs every client and no other build');
  let md = '';
  const briefs = [];
  for (const engine of engines().filter((e) => !onlyEngines || onlyEngines.includes(e.name))) {
    console.log(`[bench:dispatch] ${engine.name}`);
    const { results, ua } = await benchDispatch(engine);
    briefs.push([engine.name, summarise(results, false)]);
    const part = table(results, ua, engine.name) + iterationRow(results, engine.name) + traceRow(results, engine.name);
    console.log('\n' + part);
    md += part + '\n';
  }
  if (process.argv.includes('--write')) {
    writeSection('docs/performance.md', 'dispatch', 'npm run bench:dispatch -- --write', md);
    writeSection('README.md', 'speed', 'npm run bench:dispatch -- --write', brief(briefs));
  }
}
