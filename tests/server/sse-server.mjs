// A fault-injecting Server-Sent Events server for the browser tests. Node's own http module, loopback only.
//
// Each test names a client with ?c=NAME and gives it a plan: one step per connection attempt, then a
// default step for every attempt after the plan runs out.
//
//   GET /plan?c=NAME&steps=503,503,events:3&then=stream   set the plan (and forget the client's log)
//   GET /sse?c=NAME                                        one connection attempt; runs the next step
//   GET /log?c=NAME                                        every attempt: time, URL, Last-Event-ID, step
//   GET /outage?ms=N                                       stop accepting connections for N ms (real refusals)
//   GET /figure?name=...&value=...                         tests report measured figures; printed at the end
//
// Steps (modifiers joined with '+', e.g. retry:100+events:2):
//   200 ok | 500 | 503 | 401 | 404 | 204   answer with that status (200 'ok' streams like 'stream')
//   type                                   200 with a wrong content type
//   drop                                   cut the connection mid-status-line (a network error)
//   stall                                  send the headers, then nothing
//   events:N[:TYPE]                        send N numbered events (of TYPE), then end the response
//   cut:N                                  send N events, then destroy the socket mid-stream
//   stream                                 send a numbered event every 25 ms until the client goes
//   retry:MS                               first send a 'retry:' field
//   hint:MS                                send a 'retry-hint' event with MS as data, then end
//
// Events are numbered per client from 1 and resume after the id in the Last-Event-ID header or the
// lastEventId query parameter, so a client that resumes correctly sees every id exactly once.
// Every response says Connection: close: Chromium silently re-sends a request whose reused keep-alive
// connection was destroyed, which would show one attempt as two.

import http from 'node:http';
import { performance } from 'node:perf_hooks';

export function startServer({ port = 0, host = '127.0.0.1', quiet = true } = {}) {
  const clients = new Map();
  const figures = [];
  const sockets = new Set();
  let server;

  const client = (name) => {
    if (!clients.has(name)) {
      clients.set(name, { steps: [], then: 'stream', log: [], open: 0, maxOpen: 0, nextId: 1 });
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

  function sse(req, res, url) {
    const name = url.searchParams.get('c') ?? 'default';
    const c = client(name);
    const step = c.steps.length ? c.steps.shift() : c.then;
    const headerId = req.headers['last-event-id'];
    const queryId = url.searchParams.get('lastEventId');
    const resumeFrom = Number(headerId ?? queryId ?? NaN);
    if (Number.isFinite(resumeFrom)) c.nextId = resumeFrom + 1;
    c.log.push({
      t: performance.now(),
      url: req.url,
      lastEventIdHeader: headerId ?? null,
      step,
    });
    if (!quiet) console.log(`[sse] ${name} ${req.url} -> ${step}`);

    res.shouldKeepAlive = false;
    const parts = step.split(/[+ ]/); // a '+' in a query string arrives as a space
    let prefix = '';
    let body = null;
    for (const part of parts) {
      const [kind, arg, arg2] = part.split(':');
      if (kind === 'retry') prefix += `retry: ${Number(arg)}\n\n`;
      else body = { kind, arg, arg2 };
    }
    body ??= { kind: 'stream' };
    const { kind, arg, arg2 } = body;

    if (/^\d{3}$/.test(kind) && kind !== '200') {
      res.writeHead(Number(kind), { 'Content-Type': 'text/plain', ...cors(req) });
      res.end(kind === '204' ? undefined : `status ${kind}\n`);
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
    res.write(prefix + ': hello\n\n');

    const send = (n, type) => {
      for (let i = 0; i < n; i++) res.write(frame(c.nextId++, type, `event ${c.nextId - 1}`));
    };
    if (kind === 'stall') return; // headers sent, then silence
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
    if (kind === 'hint') {
      res.write(`event: retry-hint\ndata: ${Number(arg)}\n\n`);
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
    if (req.method === 'OPTIONS') {
      res.shouldKeepAlive = false;
      res.writeHead(204, { ...cors(req), 'Access-Control-Allow-Headers': '*' });
      res.end();
      return;
    }
    switch (url.pathname) {
      case '/sse':
        return sse(req, res, url);
      case '/plan': {
        const c = client(url.searchParams.get('c') ?? 'default');
        const steps = url.searchParams.get('steps');
        c.steps = steps ? steps.split(',') : [];
        c.then = url.searchParams.get('then') ?? 'stream';
        c.log = [];
        c.maxOpen = c.open;
        c.nextId = 1;
        return json(req, res, { ok: true });
      }
      case '/log': {
        const c = client(url.searchParams.get('c') ?? 'default');
        return json(req, res, { attempts: c.log, open: c.open, maxOpen: c.maxOpen, now: performance.now() });
      }
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
        res.shouldKeepAlive = false;
        res.writeHead(404, cors(req));
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

  server = http.createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({
        url: `http://${host}:${actual}`,
        figures,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
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
