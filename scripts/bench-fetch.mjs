// `npm run bench:fetch`: the fetch transport's time per event beside the fetch-based peers, and where its time
// goes, in Chromium, Firefox and WebKit, with no network. The package must be built (npm run build).
//
// A page makes 100,000 events' bytes (`id:` and `data:`, as bench:dispatch sends them) and hands them, through
// a `fetch` option that answers from memory in 64 KB chunks, to each fetch-based client in turn: ours
// (`transport: 'fetch'`, MessageEvents to its listeners), @microsoft/fetch-event-source 2.0.1 (plain objects
// to its `onmessage`) and eventsource 4.0.0 (MessageEvents), each timed from the first to the last event
// with a handler that reads `ev.data`, in shuffled order each round, with a pause between them (a client's
// garbage is collected in the pause, not in the next client's time). Then, in the same page, what making
// one event costs alone: the MessageEvents a client may construct (what every event costs a client that
// hands listeners real events), an Event, and plain objects (the floor). Medians of 7 rounds, in µs per
// event; "÷ ours" is the median over rounds of the client's time over ours in the same round (above 1: ours
// is faster). Each engine is started with no driver or DevTools connection (scripts/engines.mjs).
//
//   node scripts/bench-fetch.mjs [--engines Chromium,Firefox,WebKit] [--pkg DIR] [--rounds 7]

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engines, isolate, open } from './engines.mjs';
import { fetchPeers } from './fetch-peers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const pkg = arg('pkg', join(root, 'pkg'));
const only = arg('engines', null)?.split(',');
const rounds = Number(arg('rounds', 7));
/** The client every other is compared with. */
const OURS = 'managed-eventsource, transport fetch';

const page = `<!doctype html><meta charset="utf-8"><title>fetch bench</title><script type="module">
import { ManagedEventSource } from '/pkg/fetch.js';
import * as peers from '/peer/fetch-peers.js';
const n = 100000, rounds = ${rounds};
let s = '';
for (let i = 1; i <= n; i++) s += 'id: ' + i + '\\ndata: {"n":' + i + ',"v":"' + ((i * 7919) % 100000) + '"}\\n\\n';
const bytes = new TextEncoder().encode(s);
const fromMemory = () => {
  let at = 0;
  const body = new ReadableStream({ pull(c) { if (at >= bytes.length) return; c.enqueue(bytes.slice(at, at + 65536)); at += 65536; } });
  return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
};
const url = location.origin + '/memory';
/** Each client started on the bytes from memory with the handler \`on\`; each returns what stops it. */
const clients = {
  ${JSON.stringify(OURS)}: (on) => { const es = new ManagedEventSource(url, { transport: 'fetch', fetch: fromMemory }); es.onmessage = on; return () => es.close(); },
  '@microsoft/fetch-event-source 2.0.1': (on) => { const ac = new AbortController(); peers.fetchEventSource(url, { signal: ac.signal, onmessage: on, openWhenHidden: true, fetch: fromMemory }); return () => ac.abort(); },
  'eventsource 4.0.0': (on) => { const es = new peers.EventSource(url, { fetch: fromMemory }); es.onmessage = on; return () => es.close(); },
};
const out = { clients: {}, alone: {} };
const put = (table, k, us) => (out[table][k] ??= []).push(us);
const datas = Array.from({ length: n }, (_, i) => '{"n":' + i + ',"v":"' + ((i * 7919) % 100000) + '"}');
const ids = Array.from({ length: n }, (_, i) => String(i));
const origin = location.origin;
class Sub extends MessageEvent {}
const alone = {
  'MessageEvent(type, { data, lastEventId, origin })': (i) => new MessageEvent('message', { data: datas[i], lastEventId: ids[i], origin }),
  'MessageEvent(type, { data, lastEventId })': (i) => new MessageEvent('message', { data: datas[i], lastEventId: ids[i] }),
  'MessageEvent(type, { data })': (i) => new MessageEvent('message', { data: datas[i] }),
  'MessageEvent(type)': () => new MessageEvent('message'),
  // Two ways to give an event a prototype of the client's (events.js's swap): a subclass made once, or
  // setPrototypeOf on each event.
  'a subclass of MessageEvent(type, { data, lastEventId, origin })': (i) => new Sub('message', { data: datas[i], lastEventId: ids[i], origin }),
  'MessageEvent(type, { data, lastEventId, origin }), then setPrototypeOf': (i) => Object.setPrototypeOf(new MessageEvent('message', { data: datas[i], lastEventId: ids[i], origin }), Sub.prototype),
  'Event(type)': () => new Event('message'),
  'a plain object { data, lastEventId, origin }': (i) => ({ data: datas[i], lastEventId: ids[i], origin }),
};
const shuffled = (a) => a.map((x) => [Math.random(), x]).sort((p, q) => p[0] - q[0]).map((p) => p[1]);
const pause = () => new Promise((r) => setTimeout(r, 300));
for (let r = 0; r < rounds; r++) {
  for (const [k, start] of shuffled(Object.entries(clients))) {
    await new Promise((resolve) => {
      let count = 0, t0 = 0, read = 0;
      const stop = start((e) => {
        read += e.data.length;
        if (++count === 1) t0 = performance.now();
        if (count === n) {
          put('clients', k, ((performance.now() - t0) * 1000) / (n - 1));
          stop();
          resolve();
        }
      });
    });
    await pause();
  }
  for (const [k, make] of Object.entries(alone)) {
    const t0 = performance.now();
    let read = 0;
    for (let i = 0; i < n; i++) read += make(i).data?.length ?? 1;
    put('alone', k, ((performance.now() - t0) * 1000) / n);
  }
  await pause();
}
await fetch('/result', { method: 'POST', body: JSON.stringify({ out, ua: navigator.userAgent }) });
</script>`;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

for (const engine of engines().filter((e) => !only || only.includes(e.name))) {
  let done;
  const finished = new Promise((r) => (done = r));
  const server = http.createServer((req, res) => {
    isolate(res);
    res.shouldKeepAlive = false;
    if (req.url === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    if (req.url === '/peer/fetch-peers.js') return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(fetchPeers());
    // The fetch entry and the shell it imports (core.js, where the build has one).
    if (/^\/pkg\/(fetch|core)\.js$/.test(req.url)) return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(join(pkg, req.url.slice(5))));
    if (req.url === '/result' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => (res.end('ok'), done(JSON.parse(body))));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const browser = await open(engine, `http://127.0.0.1:${server.address().port}/`);
  const timeout = setTimeout(() => done(null), 10 * 60 * 1000);
  const result = await finished;
  clearTimeout(timeout);
  await browser.stop();
  server.close();
  if (!result) throw new Error(`bench:fetch: ${engine.name} did not report within 10 minutes`);
  const version = result.ua.match(/Firefox\/[\d.]+/)?.[0] ?? result.ua.match(/Chrome\/[\d.]+/)?.[0] ?? result.ua.match(/AppleWebKit\/[\d.]+/)?.[0];
  const { clients, alone } = result.out;
  const paired = (name) => median(clients[name].map((t, r) => t / clients[OURS][r]));
  console.log(`\n${engine.name} (${version}), 100,000 events from memory, µs per event, median of ${rounds} rounds:`);
  console.log(`  ${'client'.padEnd(40)} ${'median'.padStart(7)} ${'min - max'.padStart(13)} ${'÷ ours'.padStart(7)}`);
  for (const [k, v] of Object.entries(clients)) {
    const spread = `${Math.min(...v).toFixed(2)} - ${Math.max(...v).toFixed(2)}`;
    console.log(`  ${k.padEnd(40)} ${median(v).toFixed(2).padStart(7)} ${spread.padStart(13)} ${paired(k).toFixed(2).padStart(7)}`);
  }
  console.log('  making one event alone:');
  for (const [k, v] of Object.entries(alone)) console.log(`    ${k.padEnd(70)} ${median(v).toFixed(2).padStart(7)}`);
}
