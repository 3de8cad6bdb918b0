// `npm run bench:fetch`: where the fetch transport's time per event goes, in Chromium, Firefox and WebKit,
// with no network. The package must be built (npm run build).
//
// A page makes 100,000 events' bytes (`id:` and `data:`, as bench:dispatch sends them) and hands them to a
// ManagedEventSource with `transport: 'fetch'` through a `fetch` option that answers from memory in 64 KB
// chunks, timing the first to the last event with a handler that reads `ev.data`. Beside it, in the same
// page: constructing the same number of MessageEvents alone (what every event costs the transport, as
// listeners are handed real events), an Event, and plain objects (the floor). Medians of 7 rounds, in µs
// per event. Each engine is started with no driver or DevTools connection (scripts/engines.mjs).
//
//   node scripts/bench-fetch.mjs [--engines Chromium,Firefox,WebKit] [--pkg DIR]

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engines, isolate, open } from './engines.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const pkg = arg('pkg', join(root, 'pkg'));
const only = arg('engines', null)?.split(',');

const page = `<!doctype html><meta charset="utf-8"><title>fetch bench</title><script type="module">
import { ManagedEventSource } from '/pkg/fetch.js';
const n = 100000, rounds = 7;
let s = '';
for (let i = 1; i <= n; i++) s += 'id: ' + i + '\\ndata: {"n":' + i + ',"v":"' + ((i * 7919) % 100000) + '"}\\n\\n';
const bytes = new TextEncoder().encode(s);
const fromMemory = () => {
  let at = 0;
  const body = new ReadableStream({ pull(c) { if (at >= bytes.length) return; c.enqueue(bytes.slice(at, at + 65536)); at += 65536; } });
  return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
};
const out = {};
const put = (k, us) => (out[k] ??= []).push(us);
const datas = Array.from({ length: n }, (_, i) => '{"n":' + i + ',"v":"' + ((i * 7919) % 100000) + '"}');
const ids = Array.from({ length: n }, (_, i) => String(i));
const origin = location.origin;
class Sub extends MessageEvent {}
const alone = {
  'MessageEvent(type, { data, lastEventId, origin })': (i) => new MessageEvent('message', { data: datas[i], lastEventId: ids[i], origin }),
  'MessageEvent(type, { data, lastEventId })': (i) => new MessageEvent('message', { data: datas[i], lastEventId: ids[i] }),
  'MessageEvent(type, { data, origin })': (i) => new MessageEvent('message', { data: datas[i], origin }),
  'MessageEvent(type, { data })': (i) => new MessageEvent('message', { data: datas[i] }),
  // Two ways to give an event a prototype of the client's (events.js's swap): a subclass made once, or
  // setPrototypeOf on each event.
  'a subclass of MessageEvent(type, { data, lastEventId, origin })': (i) => new Sub('message', { data: datas[i], lastEventId: ids[i], origin }),
  'MessageEvent(type, { data, lastEventId, origin }), then setPrototypeOf': (i) => Object.setPrototypeOf(new MessageEvent('message', { data: datas[i], lastEventId: ids[i], origin }), Sub.prototype),
  'Event(type)': () => new Event('message'),
  'a plain object { data, lastEventId, origin }': (i) => ({ data: datas[i], lastEventId: ids[i], origin }),
};
for (let r = 0; r < rounds; r++) {
  await new Promise((resolve) => {
    let count = 0, t0 = 0, read = 0;
    const es = new ManagedEventSource(origin + '/memory', { transport: 'fetch', fetch: fromMemory });
    es.onmessage = (e) => {
      read += e.data.length;
      if (++count === 1) t0 = performance.now();
      if (count === n) {
        put('ManagedEventSource, transport fetch, from memory', ((performance.now() - t0) * 1000) / (n - 1));
        es.close();
        resolve();
      }
    };
  });
  for (const [k, make] of Object.entries(alone)) {
    const t0 = performance.now();
    let read = 0;
    for (let i = 0; i < n; i++) read += make(i).data?.length ?? 1;
    put(k, ((performance.now() - t0) * 1000) / n);
  }
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
    if (req.url === '/pkg/fetch.js') return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(join(pkg, 'fetch.js')));
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
  const timeout = setTimeout(() => done(null), 5 * 60 * 1000);
  const result = await finished;
  clearTimeout(timeout);
  await browser.stop();
  server.close();
  if (!result) throw new Error(`bench:fetch: ${engine.name} did not report within 5 minutes`);
  const version = result.ua.match(/Firefox\/[\d.]+/)?.[0] ?? result.ua.match(/Chrome\/[\d.]+/)?.[0] ?? result.ua.match(/AppleWebKit\/[\d.]+/)?.[0];
  console.log(`\n${engine.name} (${version}), µs per event, median of 7 rounds:`);
  for (const [k, v] of Object.entries(result.out)) console.log(`  ${k.padEnd(56)} ${median(v).toFixed(2).padStart(7)}`);
}
