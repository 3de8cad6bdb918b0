// The development server that `npm start` runs (Node's own http module, no framework), and the reference
// server for seed 001's load-shedding advice.
//
//   GET /                       the live stream console (www/index.html)
//   GET /storm.html             the reconnect storm, drawn from the wasm simulator
//   GET /classic.html           the package from a classic <script> tag
//   GET /pkg/...                the built npm package
//   GET /api/stream             SSE: a numbered event every second; replay after Last-Event-ID or
//                               ?lastEventId=; a jittered retry: per connection (seed 001, step 1)
//   GET /api/outage?seconds=N   drop every stream and refuse new ones for N seconds
//   GET /api/shed?on=1|0        soft shedding: 200, a long jittered retry:, a retry-hint event, end
//   GET /api/budget?rate=R&burst=B   admit at most R connections a second (token bucket; rate=0: off)
//       &paced=1[&front=1][&spreadMs=S]  paced admission: a turned-away client's retry hint is its place in
//                               line divided by R (plus up to S ms); with front=1, during an outage the
//                               server answers every attempt with a slot after it instead of refusing
//   GET /api/stop?seconds=N     close the listening socket for N seconds: connections are refused (a real
//                               restart), and open streams drop
//   GET /api/retry?fixed=1      send no jittered retry: field (the population run's fixed-retry baseline)
//   GET /api/arrivals?reset=1   stream requests per 100 ms since the last reset: accepted, shed, refused
//   WS  /api/socket             a WebSocket: a tick a second, and 'echo: ' + every message received
//                               (it drops with the streams in an outage)
//   GET /api/next?status=503&count=N answer the next N connections with 503, 401 or 204
//   GET /api/stats              accepted/shed/refused/rejected per second, as JSON
//   GET /api/stats/stream       the same, one SSE event a second
//
//   node www/server.mjs [port]  (default 8080; 0 picks a free port)

import http from 'node:http';
import { WebSocketServer } from 'ws';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGate, reject, retryField } from '../src/server/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.ts': 'text/plain; charset=utf-8',
};

/** A wait from `base` to `base + spread` ms. */
const jittered = (base, spread) => base + Math.floor(Math.random() * spread);

export function startDevServer({ port = 8080, host = '127.0.0.1', eventMs = 1000, log = false } = {}) {
  const state = {
    nextId: 1,
    buffer: [], // the last 1000 events, for replay
    streams: new Set(),
    statsStreams: new Set(),
    outageUntil: 0,
    shedding: false,
    shedMin: 5000,
    shedSpread: 10000,
    budget: null, // { rate, burst, paced, front, gate } (managed-eventsource/server's createGate)
    fixedRetry: false,
    arrivals: { t0: Date.now(), accepted: [], shed: [], refused: [] },
    forced: [], // statuses for the next connections
    counts: { accepted: 0, shed: 0, refused: 0, rejected: 0 },
    history: [],
  };
  const sockets = new Set();

  const say = (msg) => log && console.log(`[dev] ${msg}`);

  function publish() {
    const ev = { id: state.nextId++, data: JSON.stringify({ n: state.nextId - 1, at: new Date().toISOString() }) };
    state.buffer.push(ev);
    if (state.buffer.length > 1000) state.buffer.shift();
    for (const res of state.streams) res.write(`id: ${ev.id}\ndata: ${ev.data}\n\n`);
  }

  function tick() {
    const row = { t: Date.now(), ...state.counts, open: state.streams.size };
    state.counts = { accepted: 0, shed: 0, refused: 0, rejected: 0 };
    state.history.push(row);
    if (state.history.length > 120) state.history.shift();
    const frame = `data: ${JSON.stringify(controls(row))}\n\n`;
    for (const res of state.statsStreams) res.write(frame);
  }

  const controls = (row) => ({
    ...row,
    outage: Math.max(0, Math.ceil((state.outageUntil - Date.now()) / 1000)),
    shedding: state.shedding,
    budget: state.budget ? { rate: state.budget.rate, burst: state.budget.burst, paced: state.budget.paced, front: state.budget.front } : null,
    forced: state.forced.length,
  });

  /** Counts an arrival of `kind` in its 100 ms bucket. */
  function arrival(kind) {
    const a = state.arrivals;
    const i = Math.floor((Date.now() - a.t0) / 100);
    while (a[kind].length <= i) a[kind].push(0);
    a[kind][i]++;
  }

  /** Seed 001, step 2 (managed-eventsource/server's reject): accept just enough to say when to come back.
   * A client that has taken over reconnecting cannot read retry:, so the same advice goes out as a
   * retry-hint event. */
  function softReject(res, wait) {
    state.counts.shed++;
    arrival('shed');
    reject(res, wait, { hintEvent: 'retry-hint' });
  }

  function stream(req, res, url) {
    res.shouldKeepAlive = false;
    if (Date.now() < state.outageUntil) {
      // With the front up, the gate (paused until the outage ends) hands every attempt a place in line.
      if (state.budget?.front) return softReject(res, state.budget.gate.admit().retryMs);
      state.counts.refused++;
      arrival('refused');
      req.socket.destroy(); // a network error, as a refused connection looks to EventSource
      return;
    }
    if (state.forced.length) {
      const status = state.forced.shift();
      state.counts.rejected++;
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(status === 204 ? undefined : `forced ${status}\n`);
      return;
    }
    if (state.shedding) return softReject(res, jittered(state.shedMin, state.shedSpread));
    // The gate's refusal carries a random wait (seed 001) or, paced, the client's place in line.
    const admitted = state.budget ? state.budget.gate.admit() : null;
    if (admitted && !admitted.ok) return softReject(res, admitted.retryMs);
    state.counts.accepted++;
    arrival('accepted');
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    res.write(state.fixedRetry ? ': fixed retry\n\n' : `${retryField(3000, 7000)}\n`);
    const from = Number(req.headers['last-event-id'] ?? url.searchParams.get('lastEventId') ?? NaN);
    if (Number.isFinite(from)) {
      for (const ev of state.buffer) if (ev.id > from) res.write(`id: ${ev.id}\ndata: ${ev.data}\n\n`);
    }
    state.streams.add(res);
    res.on('close', () => {
      state.streams.delete(res);
      admitted?.release();
    });
    say(`stream open (${state.streams.size}) ${req.url}`);
  }

  function json(res, body) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  }

  function file(res, path) {
    const full = normalize(join(root, path));
    const allowed = [join(root, 'www'), join(root, 'pkg'), join(root, 'pkg-demo'), join(root, 'docs')];
    if (!allowed.some((dir) => full.startsWith(dir + '/')) || !existsSync(full) || !statSync(full).isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end(path.startsWith('/pkg') ? 'not found: run `npm run build` to build pkg/ and pkg-demo/\n' : 'not found\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(full)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' });
    createReadStream(full).pipe(res);
  }

  function handle(req, res) {
    const url = new URL(req.url, 'http://localhost');
    const q = (k, d) => url.searchParams.get(k) ?? d;
    switch (url.pathname) {
      case '/':
        return file(res, '/www/index.html');
      case '/storm.html':
        return file(res, '/www/storm.html');
      case '/classic.html':
        return file(res, '/www/classic.html');
      case '/api/stream':
        return stream(req, res, url);
      case '/api/outage': {
        const seconds = Math.min(600, Math.max(0, Number(q('seconds', 10))));
        state.outageUntil = Date.now() + seconds * 1000;
        if (state.budget?.front) state.budget.gate.pause(state.outageUntil);
        for (const s of state.streams) s.destroy();
        state.streams.clear();
        for (const ws of sockets_.clients) ws.terminate();
        return json(res, controls({}));
      }
      case '/api/shed':
        state.shedding = q('on', '1') === '1';
        state.shedMin = Number(q('minMs', state.shedMin));
        state.shedSpread = Number(q('spreadMs', state.shedSpread));
        return json(res, controls({}));
      case '/api/budget': {
        const rate = Number(q('rate', 0));
        const paced = q('paced', '0') === '1';
        const burst = Number(q('burst', rate));
        try {
          state.budget = rate > 0 ? { rate, burst, paced, front: paced && q('front', '0') === '1', gate: createGate({ ratePerSec: rate, burst, pace: paced, minWaitMs: state.shedMin, spreadMs: paced ? Number(q('spreadMs', 500)) : state.shedSpread }) } : null;
        } catch (e) {
          res.writeHead(400, { 'Content-Type': 'text/plain' });
          return res.end(`${e.message}\n`);
        }
        if (state.budget?.front && Date.now() < state.outageUntil) state.budget.gate.pause(state.outageUntil);
        return json(res, controls({}));
      }
      case '/api/stop': {
        const seconds = Math.min(600, Math.max(0, Number(q('seconds', 10))));
        json(res, { stopping: seconds });
        res.on('finish', () => stop(seconds * 1000));
        return;
      }
      case '/api/retry':
        state.fixedRetry = q('fixed', '0') === '1';
        return json(res, controls({}));
      case '/api/arrivals': {
        const out = { ...state.arrivals, open: state.streams.size };
        if (q('reset', '0') === '1') state.arrivals = { t0: Date.now(), accepted: [], shed: [], refused: [] };
        return json(res, out);
      }
      case '/api/next': {
        const status = Number(q('status', 503));
        if (![503, 401, 204].includes(status)) {
          res.writeHead(400, { 'Content-Type': 'text/plain' });
          return res.end('status must be 503, 401 or 204\n');
        }
        for (let i = 0; i < Math.min(100, Number(q('count', 1))); i++) state.forced.push(status);
        return json(res, controls({}));
      }
      case '/api/stats':
        return json(res, { history: state.history, ...controls({}) });
      case '/api/stats/stream':
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
        res.write(': stats\n\n');
        state.statsStreams.add(res);
        res.on('close', () => state.statsStreams.delete(res));
        return;
      default:
        return file(res, url.pathname);
    }
  }

  /** A real restart: the listening socket goes away (connections are refused), open streams drop. */
  function stop(ms) {
    const { port: at } = server.address();
    server.close();
    for (const s of sockets) s.destroy();
    state.streams.clear();
    setTimeout(() => server.listen(at, host), ms);
  }

  const server = http.createServer(handle);
  // Refused (401) during an outage, as the streams are.
  const sockets_ = new WebSocketServer({ server, path: '/api/socket', verifyClient: () => Date.now() >= state.outageUntil });
  sockets_.on('connection', (ws) => {
    let n = 0;
    const timer = setInterval(() => ws.send(`tick ${++n}`), 1000);
    ws.on('message', (data) => ws.send(`echo: ${data}`));
    ws.on('close', () => clearInterval(timer));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const publisher = setInterval(publish, eventMs);
  const ticker = setInterval(tick, 1000);

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({
        url: `http://${host}:${actual}`,
        state,
        close: () =>
          new Promise((done) => {
            clearInterval(publisher);
            clearInterval(ticker);
            for (const ws of sockets_.clients) ws.terminate();
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
  const s = await startDevServer({ port, log: !!process.env.DEV_LOG });
  console.log(`\n  managed-eventsource demo: ${s.url}/\n  reconnect storm:          ${s.url}/storm.html\n\n  (Ctrl+C to stop)\n`);
}
