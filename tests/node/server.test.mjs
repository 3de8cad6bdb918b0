// managed-eventsource/server's arithmetic, with an injected clock and random source, and its helpers'
// output and errors. The module is tested as it ships (pkg/server.js when built, else src/server/index.js,
// the same file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';

const shipped = new URL('../../pkg/server.js', import.meta.url);
const server = await import(existsSync(shipped) ? shipped : new URL('../../src/server/index.js', import.meta.url));
const { createGate, reject, rejectResponse, retryField, heartbeat, broadcastRetry } = server;

/** A clock the test moves by hand. */
function clock(t = 1_000_000) {
  const c = () => t;
  c.advance = (ms) => (t += ms);
  return c;
}

test('a burst admits exactly `burst`, then refuses', () => {
  const now = clock();
  const gate = createGate({ ratePerSec: 10, burst: 25, now });
  let admitted = 0;
  for (let i = 0; i < 40; i++) if (gate.admit().ok) admitted++;
  assert.equal(admitted, 25);
  assert.equal(gate.open, 25);
});

test('the bucket refills at ratePerSec and holds at most burst', () => {
  const now = clock();
  const gate = createGate({ ratePerSec: 4, burst: 8, now });
  while (gate.admit().ok);
  assert.equal(gate.tokens, 0);
  now.advance(500); // half a second: 2 tokens
  assert.equal(gate.admit().ok, true);
  assert.equal(gate.admit().ok, true);
  assert.equal(gate.admit().ok, false);
  now.advance(250); // one more
  assert.equal(gate.admit().ok, true);
  assert.equal(gate.admit().ok, false);
  now.advance(3_600_000); // an hour: full, not more
  assert.equal(gate.tokens, 8);
  // A clock that steps back adds nothing.
  now.advance(-10_000);
  assert.equal(gate.tokens, 8);
});

test('paced waits grow with the place in line, 1/rate apart, plus at most spreadMs', () => {
  const now = clock();
  const gate = createGate({ ratePerSec: 20, burst: 1, pace: true, spreadMs: 0, now });
  assert.equal(gate.admit().ok, true);
  const waits = Array.from({ length: 6 }, () => gate.admit().retryMs);
  // The first place is when the bucket holds a token again, each later one 1/rate after.
  assert.deepEqual(waits, [50, 100, 150, 200, 250, 300]);
  // Time passes: the next place is after the last one handed out.
  now.advance(30); // 0.6 of a token: still refused
  assert.equal(gate.admit().retryMs, 320);
  // A client that comes back at its place finds its token.
  const fresh = createGate({ ratePerSec: 20, burst: 1, pace: true, spreadMs: 0, now });
  fresh.admit();
  now.advance(fresh.admit().retryMs);
  assert.equal(fresh.admit().ok, true);
  // The jitter: up to spreadMs on top.
  const jittered = createGate({ ratePerSec: 10, burst: 1, pace: true, spreadMs: 400, now, random: () => 0.5 });
  jittered.admit();
  assert.deepEqual([jittered.admit().retryMs, jittered.admit().retryMs], [300, 400]);
});

test('without pace, a refusal is a random wait from minWaitMs to minWaitMs + spreadMs (seed 001)', () => {
  const now = clock();
  let r = 0;
  const gate = createGate({ ratePerSec: 1, burst: 1, now, random: () => r });
  gate.admit();
  assert.equal(gate.admit().retryMs, 5000);
  r = 0.999999;
  assert.equal(gate.admit().retryMs, 25_000);
  const waits = new Set();
  const real = createGate({ ratePerSec: 1, burst: 1, now });
  real.admit();
  for (let i = 0; i < 200; i++) {
    const w = real.admit().retryMs;
    assert.ok(w >= 5000 && w <= 25_000, `${w} in [5000, 25000]`);
    waits.add(w);
  }
  assert.ok(waits.size > 100, 'the waits differ from client to client');
});

test('maxStreams holds whatever the tokens, and release frees one place, once', () => {
  const now = clock();
  const gate = createGate({ ratePerSec: 1000, burst: 1000, maxStreams: 3, now });
  const held = [gate.admit(), gate.admit(), gate.admit()];
  assert.ok(held.every((a) => a.ok));
  assert.equal(gate.admit().ok, false);
  assert.ok(gate.admit().retryMs >= 5000, 'a full budget is a random wait, not a place in line');
  held[0].release();
  held[0].release(); // idempotent: frees one place, not two
  assert.equal(gate.open, 2);
  assert.equal(gate.admit().ok, true);
  assert.equal(gate.admit().ok, false);
});

test('pause admits nobody until then and, paced, lines the refused up from then', () => {
  const now = clock(0);
  const gate = createGate({ ratePerSec: 10, burst: 5, pace: true, spreadMs: 0, now });
  gate.pause(10_000);
  assert.deepEqual([gate.admit().retryMs, gate.admit().retryMs, gate.admit().retryMs], [10_000, 10_100, 10_200]);
  now.advance(10_000);
  assert.equal(gate.admit().ok, true, 'open again once the pause is over');
});

test('bad options are errors naming the option, never a gate that admits everyone or no one', () => {
  const bad = [
    [{}, TypeError, /ratePerSec/],
    [{ ratePerSec: 0 }, RangeError, /ratePerSec/],
    [{ ratePerSec: -1 }, RangeError, /ratePerSec/],
    [{ ratePerSec: NaN }, TypeError, /ratePerSec/],
    [{ ratePerSec: Infinity }, RangeError, /ratePerSec/],
    [{ ratePerSec: '10' }, TypeError, /ratePerSec/],
    [{ ratePerSec: 10, burst: 0 }, RangeError, /burst/],
    [{ ratePerSec: 10, burst: Infinity }, RangeError, /burst/],
    [{ ratePerSec: 10, maxStreams: 0 }, RangeError, /maxStreams/],
    [{ ratePerSec: 10, maxStreams: 2.5 }, RangeError, /maxStreams/],
    [{ ratePerSec: 10, spreadMs: -1 }, RangeError, /spreadMs/],
    [{ ratePerSec: 10, minWaitMs: 2 ** 40 }, RangeError, /minWaitMs/],
    [{ ratePerSec: 10, pace: 'yes' }, TypeError, /pace/],
    [{ ratePerSec: 10, now: 5 }, TypeError, /now/],
  ];
  for (const [options, type, name] of bad) {
    assert.throws(() => createGate(options), (e) => e instanceof type && name.test(e.message), JSON.stringify(options));
  }
  assert.throws(() => createGate(null), TypeError);
  const gate = createGate({ ratePerSec: 1, now: () => NaN });
  assert.throws(() => gate.admit(), /now\(\) returned/);
  assert.throws(() => createGate({ ratePerSec: 1 }).pause('soon'), TypeError);
});

test('the helpers write the frames seed 001 describes, and refuse what would break a frame', () => {
  assert.equal(retryField(3000, 7000, () => 0.5), 'retry: 6500\n');
  assert.equal(retryField(3000), 'retry: 3000\n');
  assert.throws(() => retryField(-5), RangeError);
  assert.throws(() => retryField(3000, NaN), TypeError);
  assert.equal(heartbeat(), ':\n\n');
  assert.equal(heartbeat('ping'), ': ping\n\n');
  assert.throws(() => heartbeat('a\nb'), TypeError);
  const sent = [];
  const node = { write: (s) => sent.push(s) };
  const ended = { write: () => assert.fail('an ended stream is skipped'), writableEnded: true };
  const bytes = [];
  const controller = { enqueue: (b) => bytes.push(new TextDecoder().decode(b)) };
  assert.equal(broadcastRetry(new Set([node, ended, controller]), 30_000, { random: () => 0.5 }), 2);
  assert.deepEqual(sent, ['retry: 45000\n\n']);
  assert.deepEqual(bytes, ['retry: 45000\n\n']);
  assert.throws(() => broadcastRetry([{}], 1000), TypeError);
  assert.throws(() => broadcastRetry([node], Infinity), RangeError);
  assert.throws(() => broadcastRetry(5, 1000), TypeError);
});

test('rejectResponse: a 200 event stream with retry:, the hint event, and an end', async () => {
  const r = rejectResponse(12_345, { hintEvent: 'retry-hint' });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  assert.equal(await r.text(), 'retry: 12345\nevent: retry-hint\ndata: 12345\n\n: come back in 12345 ms\n\n');
  assert.equal(await rejectResponse(10).text(), 'retry: 10\n\n: come back in 10 ms\n\n');
  assert.throws(() => rejectResponse(-1), RangeError);
  assert.throws(() => rejectResponse(10, { hintEvent: 'a\nb' }), TypeError);
  assert.throws(() => rejectResponse(10, { hintEvent: 7 }), TypeError);
});

test('reject over node:http: the client reads the frame and the response ends', async () => {
  const s = http.createServer((req, res) => reject(res, 2500, { hintEvent: 'retry-hint' }));
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${s.address().port}/`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(await res.text(), 'retry: 2500\nevent: retry-hint\ndata: 2500\n\n: come back in 2500 ms\n\n');
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  assert.throws(() => reject({}, 1000), TypeError);
  assert.throws(() => reject({ writeHead() {}, end() {}, headersSent: true }, 1000), /already sent/);
});

test('a pause far ahead (or a very long line) never asks for a wait that reject() refuses: the wait is capped at 2^31 - 1 ms', async () => {
  const now = clock(0);
  for (const pace of [true, false]) {
    const gate = createGate({ ratePerSec: 10, burst: 1, pace, now });
    gate.pause(40 * 24 * 3600 * 1000); // forty days, past what setTimeout and retry: can hold
    const a = gate.admit();
    assert.equal(a.ok, false);
    assert.ok(a.retryMs <= 2 ** 31 - 1, `pace ${pace}: ${a.retryMs}`);
    assert.match(await rejectResponse(a.retryMs).text(), /^retry: \d+\n/);
  }
});
