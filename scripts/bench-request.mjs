// `npm run bench:request`: when an EventSource's request leaves, in Chromium, Firefox and WebKit. The page
// makes an EventSource and then keeps the main thread busy for 300 ms in the same task (as a first construct
// keeps it busy compiling the wasm); this server notes when the request arrives. An engine that sends the
// request at once lets the connection proceed while the rest of the task runs; one that sends it when the
// task ends gains nothing from a request made early in a long task. (A first construct made its
// EventSource before it compiled the module until issue 44; it now makes no request before its shell.)
//
// Each sample a fresh browser process with no driver (scripts/engines.mjs). Times are Date.now() on the
// page and on this server: one machine, one clock, whole milliseconds.
//
//   node scripts/bench-request.mjs [--samples 3] [--engines Chromium,Firefox,WebKit]

import http from 'node:http';
import { engines, isolate, open } from './engines.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const samples = Number(arg('samples', 3));
const only = arg('engines', null)?.split(',');
const BUSY = 300;

const page = `<!doctype html><meta charset="utf-8"><title>request</title><script>
setTimeout(() => {
  const t0 = Date.now();
  const es = new EventSource('/sse');
  while (Date.now() - t0 < ${BUSY});
  const t1 = Date.now();
  es.onopen = () => fetch('/result', { method: 'POST', body: JSON.stringify({ t0, t1 }) }).then(() => es.close());
}, 500);
</script>`;

let arrived = 0, done = null;
const server = http.createServer((req, res) => {
  isolate(res);
  if (req.url === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
  if (req.url === '/sse') {
    arrived = Date.now();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    return res.write(': open\n\n');
  }
  if (req.url === '/result') {
    let body = '';
    req.on('data', (d) => (body += d));
    return req.on('end', () => {
      res.end('ok');
      done?.({ ...JSON.parse(body), arrived });
    });
  }
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}/`;

const rows = [];
try {
  for (const engine of engines().filter((e) => !only || only.includes(e.name))) {
    const after = [];
    for (let k = 0; k < samples; k++) {
      const result = new Promise((r, reject) => {
        done = r;
        setTimeout(() => reject(new Error(`${engine.name}: no result in 30 s`)), 30000).unref();
      });
      const browser = await open(engine, origin);
      try {
        const { t0, t1, arrived } = await result;
        after.push({ arrived: arrived - t0, ended: t1 - t0 });
      } finally {
        await browser.stop();
      }
    }
    const sent = after.every((a) => a.arrived < a.ended) ? 'at once' : after.every((a) => a.arrived >= a.ended) ? 'when the task ends' : 'varies';
    rows.push(`| ${engine.name} | ${after.map((a) => a.arrived).join(', ')} | ${after.map((a) => a.ended).join(', ')} | ${sent} |`);
  }
} finally {
  server.closeAllConnections?.();
  server.close();
}
console.log(`An EventSource made, then ${BUSY} ms of main thread in the same task; ${samples} fresh processes per engine, ms after the constructor:\n`);
console.log('| engine | the request reached the server | the task ended | the request leaves |');
console.log('| --- | --- | --- | --- |');
for (const row of rows) console.log(row);
