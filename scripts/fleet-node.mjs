// One node of the fleet run (scripts/fleet.mjs): an HTTP server on 127.0.0.1 with managed-eventsource/server
// as it ships (pkg/server.js), an event log over the memory store or a Redis Streams store shared by every
// node, behind a paced gate.
//
//   GET  /events        the event stream: gate, then replay after Last-Event-ID or ?lastEventId=, then live
//   POST /publish       appends the request body as one event; answers its id (or "null": stored nowhere)
//   GET  /stats         { open, admitted, refused, log: stats, status } (?times: and admittedAt and arrivedAt,
//                       Date.now() of each admission and of each client the gate was asked about)
//   IPC { drain: MS }   drains the log over MS (a rolling deploy's stop), closes it, says { drained }, exits
//   GET  /page, /pkg/*  with --page: an empty page and the built package, for a browser that loads them
//                       through a proxy in front of the node (tests/page/proxies-scene.mjs)
//
//   node scripts/fleet-node.mjs --port P --store memory|redis [--redis URL --key K] --rate R --burst B
//                               [--heartbeat MS] [--page]
//
// It says `{ ready: port }` over IPC once it listens.

import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const shipped = new URL('../pkg/server.js', import.meta.url);
const { createEventLog, createMemoryStore, createRedisStore, createGate } = await import(existsSync(shipped) ? shipped : new URL('../src/server/index.js', import.meta.url));

const kind = arg('store', 'memory');
const store = kind === 'redis' ? await createRedisStore({ url: arg('redis'), key: arg('key', 'fleet'), reconnect: { baseMs: 100, maxMs: 2000 } }) : createMemoryStore();
const log = createEventLog({ store, heartbeatMs: Number(arg('heartbeat', '5000')) });
const page = process.argv.includes('--page');
const TYPES = { js: 'text/javascript', wasm: 'application/wasm', map: 'application/json' };
const rate = Number(arg('rate', '100'));
const gate = createGate({ ratePerSec: rate, burst: Number(arg('burst', String(rate))), pace: true, spreadMs: 500 });
let admitted = 0;
const admittedAt = []; // Date.now() of each admission
let refused = 0;
const arrivedAt = []; // Date.now() of each client the gate was asked about, admitted or not
const countedGate = {
  admit() {
    arrivedAt.push(Date.now());
    const a = gate.admit();
    if (a.ok) {
      admitted++;
      admittedAt.push(Date.now());
    } else refused++;
    return a;
  },
};

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/events')) return log.serve(req, res, { gate: countedGate, hintEvent: 'retry-hint' });
  if (req.url === '/publish' && req.method === 'POST') {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      try {
        const id = await log.append({ data: body });
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(String(id));
      } catch (error) {
        res.writeHead(500);
        res.end(String(error?.message));
      }
    });
    return;
  }
  if (page && req.url === '/page') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return res.end('<!doctype html><meta charset="utf-8"><title>fleet node</title>');
  }
  const file = page && /^\/pkg\/([\w.-]+)\.(js|wasm|map)$/.exec(req.url);
  if (file && existsSync(new URL(`../pkg/${file[1]}.${file[2]}`, import.meta.url))) {
    res.writeHead(200, { 'Content-Type': TYPES[file[2]], 'Cache-Control': 'no-store' });
    return res.end(readFileSync(new URL(`../pkg/${file[1]}.${file[2]}`, import.meta.url)));
  }
  if (req.url.startsWith('/stats')) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    return res.end(JSON.stringify({ open: gate.open, admitted, refused, admittedAt: req.url.includes('times') ? admittedAt : undefined, arrivedAt: req.url.includes('times') ? arrivedAt : undefined, connections: log.connections, log: log.stats, status: log.status }));
  }
  res.writeHead(404);
  res.end();
});
server.keepAliveTimeout = 60_000;
// A rolling deploy's stop (scripts/fleet.mjs --rolling): { drain: overMs } drains the log over that window,
// closes it, says { drained } and exits.
process.on('message', async (m) => {
  if (typeof m?.drain !== 'number') return;
  const drained = await log.drain({ overMs: m.drain });
  await log.close();
  process.send?.({ drained });
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
});
server.listen(Number(arg('port', '0')), '127.0.0.1', () => process.send?.({ ready: server.address().port }));
