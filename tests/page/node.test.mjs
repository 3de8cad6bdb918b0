// Where there is no window or document (Node with an EventSource global), the client still works and
// simply has no visibility handling.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { startServer } from '../server/sse-server.mjs';

let server, lib;
before(async () => {
  server = await startServer();
  globalThis.EventSource = EventSource;
  lib = await import('../../pkg/index.js');
});
after(() => server.close());

const until = async (ms, cond) => {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
};

test('in Node, a dropped stream resumes through the ladder with no event lost', async () => {
  assert.equal(typeof globalThis.window, 'undefined');
  await fetch(`${server.url}/plan?c=node&steps=events:3,cut:2&then=stream`);
  const ids = [];
  const retries = [];
  const es = new lib.ManagedEventSource(`${server.url}/sse?c=node`, { lastEventIdParam: 'lastEventId', baseMs: 20, jitter: 'equal' });
  es.onmessage = (ev) => ids.push(Number(ev.lastEventId));
  es.onretry = (r) => retries.push(r);
  assert.ok(await until(5000, () => ids.length >= 8), `got ${ids}`);
  es.close();
  assert.deepEqual(ids, ids.map((_, i) => i + 1));
  assert.deepEqual(retries.map((r) => r.attempt), [1, 1]);
  assert.ok(retries.every((r) => r.delayMs >= 10 && r.delayMs <= 20), JSON.stringify(retries));
  const log = await (await fetch(`${server.url}/log?c=node`)).json();
  assert.deepEqual(log.attempts.map((a) => a.url), ['/sse?c=node', '/sse?c=node&lastEventId=3', '/sse?c=node&lastEventId=5']);
  assert.equal(es.status, 'closed');
});

test('in Node, bad options throw the same typed errors', () => {
  assert.throws(() => new lib.ManagedEventSource('http://127.0.0.1:1/x', { factor: 0 }), RangeError);
  assert.throws(() => new lib.ManagedEventSource('http://127.0.0.1:1/x', { jitter: 'sometimes' }), TypeError);
  assert.throws(() => lib.createManagedStream('http://127.0.0.1:1/x', { onOpn() {} }), /unknown handler 'onOpn'/);
});
