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

test("in Node, a heartbeat between events does not lose the resume position (the eventsource package gives an event with no id field an empty lastEventId)", async () => {
  await fetch(`${server.url}/plan?c=node-beat&steps=beatcut:3&then=stream`);
  const ids = [];
  const es = new lib.ManagedEventSource(`${server.url}/sse?c=node-beat`, { lastEventIdParam: 'lastEventId', baseMs: 20 });
  es.onmessage = (ev) => ids.push(Number(ev.lastEventId));
  assert.ok(await until(5000, () => ids.length >= 5), `got ${ids}`);
  es.close();
  const log = await (await fetch(`${server.url}/log?c=node-beat`)).json();
  assert.deepEqual(log.attempts.map((a) => a.url), ['/sse?c=node-beat', '/sse?c=node-beat&lastEventId=3']);
  assert.deepEqual(ids.slice(0, 5), [1, 2, 3, 4, 5]);
});

test("in Node, what is not managed-eventsource/server's announcement changes nothing: an app's own 'heartbeat' counter, and an announcement to a client whose stallTimeoutMs is 0; until never sees the heartbeat", async () => {
  await fetch(`${server.url}/plan?c=node-count&steps=countbeat:20&then=countbeat:20`);
  const counted = new lib.ManagedEventSource(`${server.url}/sse?c=node-count`, { baseMs: 20 });
  const beats = [];
  counted.addEventListener('heartbeat', (e) => beats.push(e.data));
  assert.ok(await until(5000, () => beats.length >= 25), `beats: ${beats.length}`);
  counted.close();
  assert.equal((await (await fetch(`${server.url}/log?c=node-count`)).json()).attempts.length, 1, 'data 1, 2, 3 is not an interval of 1 ms');
  await fetch(`${server.url}/plan?c=node-off&steps=announce:50+quiet:1:100000&then=stream`);
  const off = new lib.ManagedEventSource(`${server.url}/sse?c=node-off`, { baseMs: 20, stallTimeoutMs: 0 });
  const got = [];
  off.onmessage = (e) => got.push(e.data);
  assert.ok(await until(5000, () => got.length === 1));
  await new Promise((r) => setTimeout(r, 500)); // ten announced intervals of silence
  off.close();
  assert.equal((await (await fetch(`${server.url}/log?c=node-off`)).json()).attempts.length, 1, 'stallTimeoutMs: 0 keeps the watchdog off');
  await fetch(`${server.url}/plan?c=node-until&steps=announce:1000+events:3&then=stream`);
  const untilFirst = [];
  const first = new lib.ManagedEventSource(`${server.url}/sse?c=node-until`, { until: () => true });
  first.onmessage = (e) => untilFirst.push(e.data);
  assert.ok(await until(5000, () => first.status === 'closed'));
  assert.deepEqual(untilFirst, ['event 1'], 'until saw the first event, not the heartbeat before it');
});

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

test('in Node, for await and an AbortSignal: break and abort close the stream, and nothing keeps the process alive', async () => {
  await fetch(`${server.url}/plan?c=node-iter&steps=&then=stream`);
  const es = new lib.ManagedEventSource(`${server.url}/sse?c=node-iter`);
  const ids = [];
  for await (const ev of es) {
    ids.push(ev.lastEventId);
    if (ids.length === 3) break;
  }
  assert.deepEqual(ids, ['1', '2', '3']);
  // A client of its own at the server (the first may have been sent more than it read before it closed).
  await fetch(`${server.url}/plan?c=node-iter-abort&steps=&then=stream`);
  const ac = new AbortController();
  const es2 = new lib.ManagedEventSource(`${server.url}/sse?c=node-iter-abort`, { signal: ac.signal });
  let arrived = 0, arrivedAtAbort = -1;
  es2.addEventListener('message', () => arrived++);
  const ids2 = [];
  for await (const ev of es2) {
    ids2.push(ev.lastEventId);
    if (ids2.length === 2) {
      arrivedAtAbort = arrived;
      ac.abort();
    }
  }
  // What had arrived by the abort, and nothing after it.
  assert.deepEqual(ids2, Array.from({ length: arrivedAtAbort }, (_, i) => `${i + 1}`));
  assert.deepEqual([es.status, es2.status], ['closed', 'closed']);
  for (const c of ['node-iter', 'node-iter-abort']) {
    let open = -1;
    for (let i = 0; i < 300 && open !== 0; i++) {
      open = (await (await fetch(`${server.url}/log?c=${c}`)).json()).open;
      if (open !== 0) await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(open, 0, `the server holds nothing open for ${c}`);
  }
  // A child process that iterates and aborts exits by itself: no port or timer of ours is left open.
  // (Not spawnSync: the server answering it runs in this process.)
  const { execFile } = await import('node:child_process');
  const script = `
    import { EventSource } from 'eventsource';
    globalThis.EventSource = EventSource;
    const { ManagedEventSource } = await import(${JSON.stringify(new URL('../../pkg/index.js', import.meta.url).href)});
    const es = new ManagedEventSource(${JSON.stringify(`${server.url}/sse?c=node-iter`)});
    let n = 0;
    for await (const ev of es) if (++n === 2) break;
    console.log('iterated', n, es.status);`;
  const r = await new Promise((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url).pathname, encoding: 'utf8', timeout: 15000 }, (error, stdout, stderr) =>
      resolve({ status: child.exitCode, stdout, stderr }),
    );
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'iterated 2 closed');
});
