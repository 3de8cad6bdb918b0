// Issue 47: a resumable POST stream (an LLM completion) in Chromium, Firefox and WebKit. A node:http server on
// 127.0.0.1 answers POST /v1/chat with managed-eventsource/server's createResumableStreams as it ships
// (pkg/server.js): one producer per client, a token every 30 ms. The first response of each client is cut
// (its socket destroyed) after three tokens; the page's client (managed-eventsource/fetch, the fetch
// transport) must resend the POST with Last-Event-ID, receive every token once, in order, and stop at
// `[DONE]` through `until`, with the answer generated once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine, pageServer } from './browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createResumableStreams } = await import(join(root, 'pkg', 'server.js'));

const WORDS = ['Once', ' upon', ' a', ' time', ' a', ' stream', ' dropped', ' and', ' came', ' back'];
const streams = createResumableStreams();
/** Per client name: the requests it made and how many answers were generated for it. */
const seen = new Map();
let server, url;

async function* answer(name) {
  seen.get(name).generated++;
  for (const w of WORDS) {
    await new Promise((r) => setTimeout(r, 30));
    yield w;
  }
  yield '[DONE]';
}

before(async () => {
  server = await pageServer((req, res, u) => {
    if (u.pathname === '/v1/chat' && req.method === 'POST') {
      const name = u.searchParams.get('c');
      if (!seen.has(name)) seen.set(name, { requests: [], generated: 0 });
      const log = seen.get(name);
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        log.requests.push({ lastEventId: req.headers['last-event-id'] ?? null, body });
        res.shouldKeepAlive = false; // a cut is a closed socket, not a reused connection
        if (log.requests.length === 1) {
          // The first answer is cut after its stream event and three tokens, once the third has reached the
          // socket (a destroy before that drops it, and the client would rightly resume after the second).
          let frames = 0;
          const write = res.write.bind(res);
          res.write = (chunk) => (++frames === 4 ? write(chunk, () => res.destroy()) : write(chunk));
        }
        streams.serve(req, res, () => answer(name));
      });
      return;
    }
    if (u.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end('<!doctype html><meta charset="utf-8"><title>resumable</title>');
    }
    return false;
  });
  url = server.url;
});
after(async () => {
  await server?.close();
});

const script = (engine) => `
  window.__r = { tokens: [], statuses: [], before: null };
  import('/pkg/fetch.js').then(({ createManagedStream }) => {
    createManagedStream('/v1/chat?c=${engine}', {
      onMessage: (e) => window.__r.tokens.push(e.data),
      onStatus: (s) => {
        window.__r.statuses.push(s);
        if (s === 'reconnecting') window.__r.before ??= window.__r.tokens.length;
      },
    }, {
      transport: 'fetch', method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: () => JSON.stringify({ prompt: 'a story' }), until: (e) => e.data === '[DONE]', baseMs: 50, maxMs: 100,
    });
  });
  'started'`;
const read = 'JSON.stringify(window.__r)';

async function check(engine, evaluate) {
  await evaluate(script(engine));
  let r;
  for (let i = 0; i < 200; i++) {
    r = JSON.parse(await evaluate(read));
    if (r.statuses.at(-1) === 'closed') break;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.deepEqual(r.tokens, [...WORDS, '[DONE]'], 'every token once, in order');
  assert.equal(r.statuses.at(-1), 'closed', `until ended it: ${r.statuses}`);
  assert.ok(r.statuses.includes('reconnecting'), `the cut was seen: ${r.statuses}`);
  const log = seen.get(engine);
  assert.equal(log.generated, 1, 'the answer was generated once');
  assert.equal(log.requests.length, 2, JSON.stringify(log.requests));
  assert.equal(log.requests[0].lastEventId, null);
  // The server cuts the first answer after its third token has reached the socket; the browser may still
  // drop that token with the connection (seen in Chromium under load), and then it comes in the resume.
  assert.ok(r.before === 2 || r.before === 3, `tokens before the cut: ${r.before}`);
  assert.match(log.requests[1].lastEventId, new RegExp(`^[0-9a-f]{16}:${r.before}$`), 'the resume names the stream and the last token the client had');
  assert.equal(log.requests[1].body, '{"prompt":"a story"}', 'the POST was sent again');
}

inEachEngine('a POST stream cut mid-answer resumes from its last event id, each token once', async (engine, page) => {
  await page.goto(`${url}/`);
  await check(engine, page.evaluate);
});
