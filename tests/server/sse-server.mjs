// A fault-injecting Server-Sent Events server for the browser tests. Node's own http module, loopback only.
//
// Each test names a client with ?c=NAME and gives it a plan: one step per connection attempt, then a
// default step for every attempt after the plan runs out.
//
//   GET /plan?c=NAME&steps=503,503,events:3&then=stream   set the plan (and forget the client's log)
//   GET /sse?c=NAME                                        one connection attempt; runs the next step
//   GET /sse?c=NAME&moved=302:strict                      a stream that has moved: redirected (302, or 301,
//                                                          307, 308) to the same URL with hop=1 added, on
//                                                          the strict origin (or 'here', this one), which
//                                                          runs the step; the redirect is logged as step
//                                                          'moved'
//   GET /log?c=NAME                                        every attempt: time, URL, Last-Event-ID, step,
//                                                          method, Authorization, Accept, body;
//                                                          streams open now (open), the most at once
//                                                          (maxOpen), requests not finished (inflight)
//   GET /outage?ms=N                                       stop accepting connections for N ms (real refusals)
//   GET /refused                                           { url }: a URL on loopback that refuses connections
//   GET /strict                                            { origin }: a second origin (another port) that
//                                                          answers /sse as this one does, but whose CORS
//                                                          allows only what EventSource sends (its
//                                                          preflight allows no header; each is logged in
//                                                          the client's preflights)
//   GET /figure?name=...&value=...                         tests report measured figures; printed at the end
//
// Steps (modifiers joined with '+', e.g. retry:100+events:2):
//   200 ok | 500 | 503 | 401 | 404 | 204   answer with that status (200 'ok' streams like 'stream')
//   type                                   200 with a wrong content type
//   drop                                   cut the connection mid-status-line (a network error)
//   stall                                  send the headers, then nothing
//   events:N[:TYPE]                        send N numbered events (of TYPE), then end the response
//   cut:N                                  send N events, then destroy the socket mid-stream
//   countbeat:MS                           a 'heartbeat' event whose data is a counter (1, 2, ...) every MS
//   beatcut:N                              send N events, then a heartbeat event (no id field), then
//                                          destroy the socket
//   stream                                 send a numbered event every 25 ms until the client goes
//   retry:MS                               first send a 'retry:' field
//   announce:MS[:PARAM]                    first send managed-eventsource/server's heartbeat event, which
//                                          announces its interval MS and the id parameter PARAM (default
//                                          lastEventId; empty: none), once
//   hint:MS                                send a 'retry-hint' event with MS as data, then end
//   slow:MS                                accept, then send nothing for MS before answering (what
//                                          follows '+', or a stream)
//   named:N:TYPE                           N numbered events of TYPE, interleaved with plain ones,
//                                          then stream (TYPE 'error' is a server event named error)
//   idreset                                events 1 and 2 with ids, an empty id: field, one event with no
//                                          id, then end
//   bigid:N                                one event whose id is N characters long, then end
//   special                                the parser's corner cases (multi-line data, unicode, CRLF, a
//                                          comment, an id reset, a named message, no space after ':'),
//                                          then end
//   hintdata:TEXT                          the same with TEXT (percent-decoded) as its data
//   ra:STATUS:S                            STATUS (e.g. 503) with Retry-After: S
//   radate:STATUS:S                        STATUS with Retry-After: the HTTP date S seconds from now
//   flap                                   200 and the headers, then end at once (accept and drop)
//   beat:MS                                only heartbeat events (event: ping) every MS, no messages
//   split                                  the stream's hard cases in separate writes: a BOM split
//                                          across two, a CRLF split across two, a character split
//                                          across two, multi-line data, then end (the fetch transport)
//   big:N                                  one event whose data is N characters, then end
//   comments:MS                            only comment lines (': beat') every MS, no events
//   quiet:N:MS                             N numbered events, then only comment lines every MS
//   textid[:ID]                            one event whose id is outside ISO-8859-1 (U+2026 U+1F600), or
//                                          ID percent-decoded, then end
//   chaos                                  one of: 503, a drop, a stall killed after 200 ms, or a
//                                          random run of 50-600 events cut mid-stream (seeded per client)
//
//   GET /pkg/..., /tests/browser/...      static files, so that the in-browser suites run same-origin; a
//                                          package file asked for with a query imports the shell with it
//                                          too (a fresh copy of the package)
//   GET /src/web/...                      the JavaScript half's sources, whose pure readers a suite tests
//   GET /target/pkg-build/check.wasm      the option check's module, as the build left it (a suite tests it)
//
// WebSocket (the `ws` package, on the same port): ws://HOST/ws?c=NAME runs the client's next step too.
//   echo                                   answer every message with 'echo:' + it (and log it)
//   stream                                 a numbered message every 25 ms
//   drop[:N]                               N numbered messages, then cut the connection (no close frame: 1006)
//   close:CODE                             a clean close with CODE (and reason 'bye')
//   refuse                                 refuse the upgrade (the socket is destroyed)
//   hang                                   accept the TCP connection and never answer the upgrade
//   noproto                                accept the upgrade choosing none of the subprotocols offered
// The log of a WebSocket client also holds every message it sent and the close code and reason it sent.
//
// Events are numbered per client from 1 and resume after the id in the Last-Event-ID header or the
// lastEventId query parameter, so a client that resumes correctly sees every id exactly once.
// Every response says Connection: close: Chromium silently re-sends a request whose reused keep-alive
// connection was destroyed, which would show one attempt as two.

import http from 'node:http';
import { WebSocketServer } from 'ws';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json' };

/** A small seeded generator (mulberry32), so that a chaos run can be repeated. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function startServer({ port = 0, host = '127.0.0.1', quiet = true, statics = {} } = {}) {
  const clients = new Map();
  const figures = [];
  const sockets = new Set();
  let server;

  const client = (name) => {
    if (!clients.has(name)) {
      clients.set(name, { steps: [], then: 'stream', log: [], open: 0, maxOpen: 0, inflight: 0, nextId: 1, rng: random(1), chaos: { kills: 0, refusals: 0, stalls: 0, drops: 0, sent: 0 }, received: [], closes: [], preflights: [] });
    }
    return clients.get(name);
  };

  const cors = (req) => {
    const origin = req.headers.origin;
    return origin
      ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' }
      : { 'Access-Control-Allow-Origin': '*' };
  };

  const json = (req, res, body) => {
    res.shouldKeepAlive = false;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...cors(req) });
    res.end(JSON.stringify(body));
  };

  const frame = (id, type, data) => (type ? `event: ${type}\n` : '') + `id: ${id}\ndata: ${data}\n\n`;

  /** A request with a body (the fetch transport's POST) is answered once its body has arrived, so that
   * the log holds it whatever the answer (a 503 ends the connection at once). */
  function sse(req, res, url) {
    if (req.method === 'GET' || req.method === 'HEAD') return sseNow(req, res, url, '');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => sseNow(req, res, url, body));
  }

  function sseNow(req, res, url, requestBody) {
    const name = url.searchParams.get('c') ?? 'default';
    const c = client(name);
    // Requests not yet finished, answered or not (a held one counts too), until the connection goes.
    c.inflight += 1;
    res.on('close', () => (c.inflight -= 1));
    // A stream that has moved (?moved=STATUS:WHERE): every request that has not followed a redirect yet is
    // sent on, to the same path and query with hop=1, on this origin (WHERE 'here') or the strict one
    // ('strict'), where the client's plan answers it. Logged with step 'moved'.
    const moved = url.searchParams.get('moved');
    if (moved && !url.searchParams.has('hop')) {
      const [status, where] = moved.split(':');
      const to = new URL(req.url, where === 'strict' ? `http://${host}:${strictPort}` : `http://${req.headers.host}`);
      to.searchParams.set('hop', '1');
      c.log.push({ t: performance.now(), url: req.url, lastEventIdHeader: req.headers['last-event-id'] ?? null, origin: req.headers.origin ?? null, step: 'moved', method: req.method });
      res.shouldKeepAlive = false;
      res.writeHead(Number(status), { Location: to.href, ...cors(req) });
      res.end();
      return;
    }
    let step = c.steps.length ? c.steps.shift() : c.then;
    if (step === 'chaos') step = chaos(c);
    const headerId = req.headers['last-event-id'];
    const queryId = url.searchParams.get('lastEventId');
    const resumeFrom = Number(headerId ?? queryId ?? NaN);
    if (Number.isFinite(resumeFrom)) c.nextId = resumeFrom + 1;
    const entry = {
      t: performance.now(),
      url: req.url,
      lastEventIdHeader: headerId ?? null,
      // The header's bytes as they came (Node reads a header value as Latin-1: one character a byte).
      lastEventIdBytes: headerId === undefined ? null : [...Buffer.from(headerId, 'latin1')],
      origin: req.headers.origin ?? null,
      step,
      method: req.method,
      auth: req.headers.authorization ?? null,
      accept: req.headers.accept ?? null,
      body: requestBody,
    };
    c.log.push(entry);
    if (!quiet) console.log(`[sse] ${name} ${req.url} -> ${step}`);

    res.shouldKeepAlive = false;
    const parts = step.split(/[+ ]/); // a '+' in a query string arrives as a space
    let prefix = '';
    let body = null;
    let slow = 0;
    for (const part of parts) {
      const [kind, arg, arg2] = part.split(':');
      if (kind === 'retry') prefix += `retry: ${Number(arg)}\n\n`;
      else if (kind === 'announce') prefix += `event: heartbeat\ndata: ${JSON.stringify({ heartbeatMs: Number(arg), ...(arg2 === '' ? {} : { lastEventIdParam: arg2 ?? 'lastEventId' }) })}\n\n`;
      else if (kind === 'slow') slow = Number(arg);
      else body = { kind, arg, arg2 };
    }
    body ??= { kind: 'stream' };
    if (slow) {
      const timer = setTimeout(() => answer(req, res, c, prefix, body), slow);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    answer(req, res, c, prefix, body);
  }

  /** Picks a chaos step for one connection: the test asks for 'chaos' and the server decides. */
  function chaos(c) {
    const r = c.rng();
    if (r < 0.12) return (c.chaos.refusals++, '503');
    if (r < 0.2) return (c.chaos.drops++, 'drop');
    if (r < 0.28) return (c.chaos.stalls++, 'stallkill');
    c.chaos.kills++;
    return `cut:${50 + Math.floor(c.rng() * 550)}`;
  }

  function answer(req, res, c, prefix, body) {
    const { kind, arg, arg2 } = body;

    if (/^\d{3}$/.test(kind) && kind !== '200') {
      res.writeHead(Number(kind), { 'Content-Type': 'text/plain', ...cors(req) });
      res.end(kind === '204' ? undefined : `status ${kind}\n`);
      return;
    }
    if (kind === 'ra' || kind === 'radate') {
      // radate: the date arg2 seconds from now, as an IMF-fixdate (what toUTCString writes).
      const value = kind === 'ra' ? arg2 : new Date(Date.now() + Number(arg2) * 1000).toUTCString();
      res.writeHead(Number(arg), { 'Content-Type': 'text/plain', 'Retry-After': value, 'Access-Control-Expose-Headers': 'Retry-After', ...cors(req) });
      res.end(`status ${arg}\n`);
      return;
    }
    if (kind === 'drop') {
      // Cut mid-status-line: a network error to EventSource. With no byte at all, browsers may re-send
      // the request by themselves (Firefox does even on a fresh connection), hiding the failure.
      req.socket.end('HTTP/1.1 200');
      req.socket.destroy();
      return;
    }
    if (kind === 'type') {
      res.writeHead(200, { 'Content-Type': 'text/plain', ...cors(req) });
      res.end('not a stream\n');
      return;
    }

    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', ...cors(req) });
    c.open += 1;
    c.maxOpen = Math.max(c.maxOpen, c.open);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        c.open -= 1;
      }
    };
    res.on('close', finish);
    if (kind !== 'split') res.write(prefix + ': hello\n\n');

    const send = (n, type) => {
      let chunk = '';
      for (let i = 0; i < n; i++) chunk += frame(c.nextId++, type, `event ${c.nextId - 1}`);
      c.chaos.sent += n;
      res.write(chunk);
    };
    if (kind === 'stall') return; // headers sent, then silence
    if (kind === 'flap') {
      res.end();
      return;
    }
    if (kind === 'beat') {
      const timer = setInterval(() => res.write('event: ping\ndata: beat\n\n'), Number(arg));
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (kind === 'stallkill') {
      setTimeout(() => req.socket.destroy(), 200);
      return;
    }
    if (kind === 'named') {
      for (let i = 0; i < Number(arg); i++) {
        send(1, arg2);
        send(1);
      }
      const timer = setInterval(() => send(1), 25);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (kind === 'idreset') {
      res.write('id: 1\ndata: one\n\nid: 2\ndata: two\n\nid\ndata: reset\n\ndata: no id\n\n');
      res.end();
      return;
    }
    if (kind === 'special') {
      res.write(
        'data: first\ndata: second\n\n' +
          'data: ünïcødé ✓ 𝄞 中文\n\n' +
          ': a comment\n\n' +
          'event: message\ndata: explicitly a message\n\n' +
          'event: custom\r\ndata: crlf\r\nid: 7\r\n\r\n' +
          'data:no space\n\n' +
          'id: 8\ndata: eight\n\n' +
          'id\ndata: reset\n\n' +
          'data\n\n' +
          'retry: soon\ndata: last\n\n',
      );
      res.end();
      return;
    }
    if (kind === 'split') {
      const parts = [Buffer.from([0xef, 0xbb]), Buffer.from([0xbf]), 'data: one\r', '\ndata: two\r', '\n\r', '\nid: 5\ndata: \xe2', Buffer.from([0x9c]), Buffer.from([0x93, 0x0a, 0x0a]), 'data: last\r\n\r\n'];
      // Separate writes a few ms apart, so that they arrive as separate chunks.
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        if (i === parts.length) return res.end();
        const p = parts[i++];
        res.write(typeof p === 'string' ? Buffer.from(p, 'latin1') : p);
        setTimeout(next, 15);
      };
      // The BOM comes first of all: no hello comment before it.
      return next();
    }
    if (kind === 'big') {
      res.write(`id: big\ndata: ${'x'.repeat(Number(arg))}\n\n`);
      res.end();
      return;
    }
    if (kind === 'quiet') {
      // N events, then only comment lines every MS: alive, as sse-starlette's or axum's keep-alive keeps it.
      send(Number(arg));
      const timer = setInterval(() => res.write(': ping\n\n'), Number(arg2));
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (kind === 'comments') {
      const timer = setInterval(() => res.write(': beat\n'), Number(arg));
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (kind === 'textid') {
      // An id outside ISO-8859-1 (U+2026 and an astral character), or arg percent-decoded, then the end.
      res.write(`id: ${arg ? decodeURIComponent(arg) : '\u2026\u{1F600}'}\ndata: one\n\n`);
      res.end();
      return;
    }
    if (kind === 'bigid') {
      res.write(`id: ${'x'.repeat(Number(arg))}\ndata: big\n\n`);
      res.end();
      return;
    }
    if (kind === 'events') {
      send(Number(arg), arg2);
      res.end();
      return;
    }
    if (kind === 'cut') {
      send(Number(arg));
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    if (kind === 'countbeat') {
      // An app's own 'heartbeat' event whose data is a counter (not managed-eventsource/server's announcement).
      let n = 0;
      const timer = setInterval(() => res.write(`event: heartbeat\ndata: ${++n}\n\n`), Number(arg));
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (kind === 'beatcut') {
      // As managed-eventsource/server writes its heartbeat between events: a named event with no id field.
      send(Number(arg));
      res.write('event: heartbeat\ndata: {"heartbeatMs":60000}\n\n');
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    if (kind === 'hint' || kind === 'hintdata') {
      const data = kind === 'hint' ? Number(arg) : decodeURIComponent(arg);
      res.write(`event: retry-hint\ndata: ${data}\n\n`);
      res.end();
      return;
    }
    // stream / ok / 200
    send(1);
    const timer = setInterval(() => send(1), 25);
    res.on('close', () => clearInterval(timer));
  }

  function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.socket.localPort === strictPort) return handleStrict(req, res, url);
    if (req.method === 'OPTIONS') {
      res.shouldKeepAlive = false;
      // The headers asked for, by name: a wildcard does not cover Authorization (the Fetch standard).
      const asked = req.headers['access-control-request-headers'] ?? '*';
      res.writeHead(204, { ...cors(req), 'Access-Control-Allow-Headers': asked, 'Access-Control-Allow-Methods': 'GET, POST, PUT' });
      res.end();
      return;
    }
    switch (url.pathname) {
      case '/sse':
        return sse(req, res, url);
      case '/plan': {
        const c = client(url.searchParams.get('c') ?? 'default');
        c.preflights = [];
        const steps = url.searchParams.get('steps');
        c.steps = steps ? steps.split(',') : [];
        c.then = url.searchParams.get('then') ?? 'stream';
        c.log = [];
        c.maxOpen = c.open;
        c.nextId = 1;
        c.rng = random(Number(url.searchParams.get('seed') ?? 1));
        c.chaos = { kills: 0, refusals: 0, stalls: 0, drops: 0, sent: 0 };
        c.received = [];
        c.closes = [];
        return json(req, res, { ok: true });
      }
      case '/log': {
        const c = client(url.searchParams.get('c') ?? 'default');
        return json(req, res, { attempts: c.log, open: c.open, maxOpen: c.maxOpen, inflight: c.inflight, now: performance.now(), chaos: c.chaos, received: c.received, closes: c.closes, preflights: c.preflights });
      }
      case '/strict':
        return json(req, res, { origin: `http://${host}:${strictPort}` });
      case '/refused':
        return json(req, res, { url: `http://${host}:${refused}/closed` });
      case '/outage': {
        const ms = Number(url.searchParams.get('ms') ?? 1000);
        json(req, res, { ok: true, ms });
        res.on('finish', () => outage(ms));
        return;
      }
      case '/figure':
        figures.push({ name: url.searchParams.get('name'), value: url.searchParams.get('value') });
        return json(req, res, { ok: true });
      default:
        if (/^\/pkg\/\w+\.js$/.test(url.pathname) && url.search) return freshCopy(res, url);
        if (/^\/(pkg|tests\/browser|src\/web|target\/bindings)\/|^\/target\/pkg-build\/check\.wasm$/.test(url.pathname)) return file(res, url.pathname);
        for (const [prefix, where] of Object.entries(statics)) {
          const { dir, headers } = typeof where === 'string' ? { dir: where } : where;
          if (url.pathname.startsWith(prefix)) return file(res, url.pathname.slice(prefix.length), dir, headers);
        }
        res.shouldKeepAlive = false;
        res.writeHead(404, cors(req));
        res.end();
    }
  }

  async function file(res, path, base = root, headers = {}) {
    res.shouldKeepAlive = false;
    const full = normalize(join(base, path));
    try {
      if (!full.startsWith(base + '/')) throw new Error('outside');
      const body = await readFile(full);
      // Any origin may load them: a sandboxed iframe's page (an opaque origin) imports the package too.
      res.writeHead(200, { 'Content-Type': TYPES[extname(full)] ?? 'application/octet-stream', 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*', ...headers });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  }

  // A fresh copy of a package file (a suite imports /pkg/index.js?copy-1 for a module state of its own):
  // its import of the shell carries the same query, so the copy has a shell of its own too.
  async function freshCopy(res, url) {
    res.shouldKeepAlive = false;
    try {
      const body = (await readFile(join(root, url.pathname), 'utf8')).replace(/(["'])\.\/core\.js\1/g, `$1./core.js${url.search}$1`);
      res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  }

  // A real outage: the listening socket goes away, so new connections are refused, and open streams drop.
  function outage(ms) {
    const { port } = server.address();
    server.close();
    for (const s of sockets) s.destroy();
    setTimeout(() => server.listen(port, host), ms);
  }

  // A second origin (another port) whose CORS allows only what EventSource sends: simple GETs, from any
  // origin, with credentials; its preflight names no header, so a request that needs one is refused.
  // It answers /sse as the main server does (the same clients, plans and log); every preflight is logged.
  function handleStrict(req, res, url) {
    res.shouldKeepAlive = false;
    if (req.method === 'OPTIONS') {
      client(url.searchParams.get('c') ?? 'default').preflights.push({ url: req.url, headers: req.headers['access-control-request-headers'] ?? null });
      res.writeHead(204, cors(req));
      return res.end();
    }
    if (url.pathname === '/sse') return sse(req, res, url);
    res.writeHead(404, cors(req));
    res.end();
  }

  server = http.createServer(handle);
  const strict = http.createServer(handle);
  let strictPort = 0;
  strict.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const strictListening = new Promise((r) => strict.listen(0, host, () => r((strictPort = strict.address().port))));
  const wss = new WebSocketServer({ noServer: true });
  // 'noproto': a server that takes none of the subprotocols the client offers (the browser then fails it).
  const noProtocol = new WebSocketServer({ noServer: true, handleProtocols: () => false });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const c = client(url.searchParams.get('c') ?? 'default');
    const step = c.steps.length ? c.steps.shift() : c.then;
    c.log.push({ t: performance.now(), url: req.url, step });
    const [kind, arg] = step.split(':');
    if (kind === 'refuse') return socket.destroy();
    if (kind === 'hang') return; // the upgrade is never answered; the socket closes with the server
    (kind === 'noproto' ? noProtocol : wss).handleUpgrade(req, socket, head, (ws) => {
      c.open += 1;
      c.maxOpen = Math.max(c.maxOpen, c.open);
      let timer;
      ws.on('close', (code, reason) => {
        c.open -= 1;
        clearInterval(timer);
        c.closes.push({ code, reason: String(reason) });
      });
      ws.on('message', (data, binary) => {
        const text = binary ? `binary:${data.length}` : String(data);
        c.received.push(text);
        if (kind === 'echo') ws.send(`echo:${text}`);
      });
      const send = () => ws.send(`message ${c.nextId++}`);
      if (kind === 'stream') timer = setInterval(send, 25);
      if (kind === 'close') setTimeout(() => ws.close(Number(arg), 'bye'), 20);
      if (kind === 'drop') {
        for (let i = 0; i < Number(arg ?? 0); i++) send();
        setTimeout(() => ws.terminate(), 20);
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  // A port on loopback that nothing listens on (opened and closed at once), for refused connections: a
  // well-known closed port such as 9 is on the Fetch standard's blocked list, which WebKit enforces.
  let refused = 0;
  const closedPort = new Promise((r) => {
    const probe = http.createServer();
    probe.listen(0, host, () => {
      refused = probe.address().port;
      probe.close(r);
    });
  });

  return new Promise((resolve) => {
    server.listen(port, host, async () => {
      await closedPort;
      await strictListening;
      const { port: actual } = server.address();
      resolve({
        url: `http://${host}:${actual}`,
        figures,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            strict.close();
            server.close(() => done());
          }),
      });
    });
  });
}

// Run alone: `node tests/server/sse-server.mjs [port]` prints the URL and serves until stopped.
if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await startServer({ port: Number(process.argv[2] ?? 0), quiet: false });
  console.log(`SSE_TEST_SERVER=${s.url}`);
}
