// Issue 27: managed-eventsource/server as a team would use it. A node:http server on 127.0.0.1 admits
// streams through the shipped gate (pkg/server.js), which starts full, so every client's first attempt is
// soft-rejected with its place in line. A native EventSource and a ManagedEventSource in one page, in
// Chromium, Firefox and WebKit, and one on the fetch transport (managed-eventsource/fetch, which reads the
// rejection's retry: field itself, with no retryHintEvent), must come back on their own after the wait (judged at the server: never before
// it), be admitted, and receive the stream's event, with no reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine, pageServer } from './browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createGate, reject, retryField } = await import(join(root, 'pkg', 'server.js'));

const RATE = 2; // places in line 500 ms apart
let server, url;
/** Per client name: what the server did with each attempt, and when. */
const seen = new Map();
const gates = new Map();

function gateFor(name) {
  if (!gates.has(name)) {
    const gate = createGate({ ratePerSec: RATE, burst: 1, pace: true, spreadMs: 200 });
    gate.admit(); // a full server: the next client waits its turn
    gates.set(name, gate);
    seen.set(name, []);
  }
  return gates.get(name);
}

before(async () => {
  server = await pageServer((req, res, u) => {
    if (u.pathname === '/stream') {
      const name = u.searchParams.get('c');
      const a = gateFor(name).admit();
      const log = seen.get(name);
      if (!a.ok) {
        log.push({ at: Date.now(), refused: a.retryMs });
        return reject(res, a.retryMs, { hintEvent: 'retry-hint' });
      }
      log.push({ at: Date.now(), admitted: true });
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(`${retryField(60_000)}id: 1\ndata: welcome ${name}\n\n`);
      res.on('close', a.release);
      return;
    }
    if (u.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end('<!doctype html><meta charset="utf-8"><title>gate</title>');
    }
    return false;
  });
  url = server.url;
});
after(async () => {
  await server?.close();
});

/** The page: both clients, recording what reaches them and whether the page ever loaded again. */
const script = (engine) => `
  window.__r = { native: [], ours: [], fetched: [], statuses: [], loads: (sessionStorage.loads = (Number(sessionStorage.loads) || 0) + 1) };
  const native = new EventSource('/stream?c=${engine}-native');
  native.onmessage = (e) => window.__r.native.push(e.data);
  import('/pkg/index.js').then(({ ManagedEventSource }) => {
    const ours = new ManagedEventSource('/stream?c=${engine}-ours', { retryHintEvent: 'retry-hint', baseMs: 50, maxMs: 100 });
    ours.onmessage = (e) => window.__r.ours.push(e.data);
    ours.onstatus = (s) => window.__r.statuses.push(s);
  });
  import('/pkg/fetch.js').then(({ ManagedEventSource }) => {
    const fetched = new ManagedEventSource('/stream?c=${engine}-fetched', { transport: 'fetch', baseMs: 50, maxMs: 100 });
    fetched.onmessage = (e) => window.__r.fetched.push(e.data);
    fetched.onerror = (e) => (window.__r.errors ??= []).push(e.message);
  });
  'started'`;
const read = 'JSON.stringify(window.__r)';

async function check(engine, evaluate) {
  await evaluate(script(engine));
  let r;
  for (let i = 0; i < 200; i++) {
    r = JSON.parse(await evaluate(read));
    if (r.native.length && r.ours.length && r.fetched.length) break;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.deepEqual(r.native, [`welcome ${engine}-native`], 'native EventSource came back and was admitted');
  assert.deepEqual(r.ours, [`welcome ${engine}-ours`], 'ManagedEventSource came back and was admitted');
  assert.deepEqual(r.fetched, [`welcome ${engine}-fetched`], `the fetch transport came back and was admitted (errors: ${r.errors?.slice(0, 3)})`);
  assert.equal(r.loads, 1, 'no reload');
  assert.ok(r.statuses.includes('reconnecting') && r.statuses.at(-1) === 'open', `ours: ${r.statuses}`);
  for (const who of ['native', 'ours', 'fetched']) {
    const log = seen.get(`${engine}-${who}`);
    assert.equal(log.length, 2, `${who}: one refusal, then admitted: ${JSON.stringify(log)}`);
    assert.ok(log[0].refused >= 1, `${who} was told to wait`);
    assert.ok(log[1].admitted, `${who} admitted on its return`);
    // The client honoured the wait: it did not come back before the time the gate gave it (10 ms for
    // clocks; a browser may add its own delay, never take any off).
    assert.ok(log[1].at - log[0].at >= log[0].refused - 10, `${who} waited ${log[1].at - log[0].at} ms of ${log[0].refused}`);
  }
}

inEachEngine('native EventSource and ManagedEventSource come back on their own after a soft rejection', async (engine, page) => {
  await page.goto(`${url}/`);
  await check(engine, page.evaluate);
});
