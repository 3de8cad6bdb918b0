// The testing entry (pkg/testing.js) under Node's own test runner, with the package's fetch entry: the
// virtual clock the clients' timers run on, its seeded jitter, and the scripted server served as the fetch
// transport's `fetch`. Needs the built package (`npm test` builds it before this step).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

const testingEntry = new URL('../../pkg/testing.js', import.meta.url);
const fetchEntry = new URL('../../pkg/fetch.js', import.meta.url);
const built = existsSync(testingEntry) && existsSync(fetchEntry);
const skip = built ? false : 'pkg/testing.js is not built (run `npm run build`; `npm test` builds it before this step)';
const { createVirtualClock, scriptServer } = built ? await import(testingEntry) : {};
const { ManagedEventSource } = built ? await import(fetchEntry) : {};

// The README's example, as a user writes it: 503 with Retry-After, resume at id 42, then a 401.
async function outageStory(seed = 1) {
  const clock = createVirtualClock({ seed });
  try {
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
      .attempt((a) => a.status(503, { retryAfter: 5 }))
      .attempt((a) => a.status(401));
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch });
    const seen = [];
    es.onstatus = (s) => seen.push(s);
    es.onretry = ({ attempt, delayMs }) => seen.push(`retry ${attempt} in ${delayMs}`);
    const took = await clock.runUntil(() => es.status === 'failed');
    return { seen, took, ids: server.requests.map((r) => r.lastEventId), pending: clock.pending, left: server.left };
  } finally {
    clock.uninstall();
  }
}

test('a 503 with Retry-After, a resume at id 42, then a 401: played on the virtual clock in milliseconds, the same every run', { skip }, async () => {
  const t0 = performance.now();
  const first = await outageStory();
  const ms = performance.now() - t0;
  assert.deepEqual(first.ids, [null, '42', '42'], 'the second and third attempts resume after id 42');
  assert.equal(first.seen[0], 'open');
  assert.equal(first.seen.at(-1), 'failed');
  const retries = first.seen.filter((s) => s.startsWith('retry'));
  assert.equal(retries.length, 2, first.seen.join(', '));
  assert.match(retries[1], /^retry 2 in (\d+)$/);
  assert.ok(Number(retries[1].split(' ').at(-1)) >= 5000, `the wait after the 503 heeds Retry-After: 5 (${retries[1]})`);
  assert.ok(first.took >= 5000, `${first.took} virtual ms`);
  assert.equal(first.left, 0);
  assert.equal(first.pending, 0, 'no timer left once failed');
  assert.ok(ms < 1000, `${ms} ms of real time`);
  // The same seed, the same story to the millisecond; 1,000 runs.
  const t1 = performance.now();
  for (let i = 0; i < 1000; i++) assert.deepEqual(await outageStory(), first);
  console.log(`[figure] the outage story (3 attempts, 2 waits, ${first.took} virtual ms): ${ms.toFixed(1)} ms once, ${((performance.now() - t1) / 1000).toFixed(2)} ms a run over 1,000 identical runs`);
});

test('the seed decides the jitter: the same seed draws the same delays, another seed others', { skip }, async () => {
  async function delays(seed) {
    const clock = createVirtualClock({ seed });
    try {
      const server = scriptServer();
      for (let i = 0; i < 7; i++) server.attempt((a) => a.fail());
      const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, maxAttempts: 6, baseMs: 1000, maxMs: 60000 });
      const got = [];
      es.onretry = ({ delayMs }) => got.push(delayMs);
      await clock.runUntil(() => es.status === 'failed');
      assert.equal(server.requests.length, 7, 'the first attempt and six more');
      return got;
    } finally {
      clock.uninstall();
    }
  }
  const a = await delays(7);
  assert.equal(a.length, 6);
  a.forEach((d, i) => assert.ok(d >= 0 && d <= 1000 * 2 ** i, `full jitter: delay ${i + 1} is ${d}`));
  assert.deepEqual(await delays(7), a);
  assert.notDeepEqual(await delays(8), a);
});

test('advance() runs only the timers that fall due, in order; time moves only when the test moves it', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    const server = scriptServer()
      .attempt((a) => a.fail())
      .attempt((a) => a.open().send({ id: '1', data: 'x' }).stall());
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, jitter: 'none', baseMs: 1000 });
    const messages = [];
    es.onmessage = (e) => messages.push(e.data);
    await clock.settle();
    assert.equal(server.requests.length, 1);
    assert.equal(es.status, 'reconnecting');
    assert.equal(clock.pending, 1, 'the backoff wait');
    await clock.advance(999);
    assert.equal(server.requests.length, 1, 'not before 1000 ms');
    assert.equal(clock.now, 999);
    await clock.advance(1);
    assert.equal(server.requests.length, 2);
    assert.equal(es.status, 'open');
    assert.deepEqual(messages, ['x']);
    es.close();
    assert.equal(clock.pending, 0, 'close() leaves no timer');
    await clock.settle();
    assert.equal(server.requests[1].aborted, true, 'close() let go of the request');
  } finally {
    clock.uninstall();
  }
});

test('each step of a script: named events, comments, retry:, wait on the virtual clock, end, drop, 204, and the stall watchdog', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    const server = scriptServer()
      .attempt((a) => a.open().comment('hi').send({ event: 'tick', id: '1', data: 'line 1\nline 2' }).wait(5000).send({ id: '2', data: 'later' }).end())
      .attempt((a) => a.open().retry(2500).send({ id: '3', data: 'c' }).drop())
      .attempt((a) => a.open().send({ event: 'heartbeat', data: '{"heartbeatMs":10000}' }).stall())
      .attempt((a) => a.noContent());
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, jitter: 'none', baseMs: 1000 });
    const got = [];
    es.addEventListener('tick', (e) => got.push(['tick', e.data, e.lastEventId, clock.now]));
    es.onmessage = (e) => got.push(['message', e.data, e.lastEventId, clock.now]);
    const took = await clock.runUntil(() => es.status === 'closed');
    assert.deepEqual(got, [
      ['tick', 'line 1\nline 2', '1', 0],
      ['message', 'later', '2', 5000],
      ['message', 'c', '3', 6000],
    ]);
    assert.deepEqual(server.requests.map((r) => r.lastEventId), [null, '2', '3', '3']);
    // After the drop the server's retry: 2500 is the floor of the wait; the heartbeat's stream stalls, and
    // the watchdog gives up on it after about two heartbeats (20 s), and the next attempt gets a 204.
    assert.ok(took >= 5000 + 1000 + 2500 + 20000, `${took} virtual ms`);
    assert.equal(server.requests[2].aborted, true, 'the stalled stream was let go');
    assert.equal(clock.pending, 0);
  } finally {
    clock.uninstall();
  }
});

test('runUntil is bounded: a client that never gets there throws a RangeError after maxTimers, and no timer left is an Error', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    const server = scriptServer();
    for (let i = 0; i < 20; i++) server.attempt((a) => a.status(503));
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch });
    await assert.rejects(clock.runUntil(() => es.status === 'open', { maxTimers: 10 }), (e) => e instanceof RangeError && /maxTimers/.test(e.message));
    es.close();
    await assert.rejects(clock.runUntil(() => false), (e) => /no timer is armed/.test(e.message));
    await assert.rejects(clock.runUntil('open'), TypeError);
  } finally {
    clock.uninstall();
  }
});

test('an attempt past the script fails as a network error and is marked unscripted; bad scripts and options are TypeErrors and RangeErrors naming the problem', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    const server = scriptServer().attempt((a) => a.fail());
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, maxAttempts: 2 });
    await clock.runUntil(() => es.status === 'failed');
    assert.deepEqual(server.requests.map((r) => r.unscripted), [false, true, true]);
  } finally {
    clock.uninstall();
  }
  assert.throws(() => createVirtualClock({ seed: 'x' }), (e) => e instanceof TypeError && /seed/.test(e.message));
  assert.throws(() => createVirtualClock(null), TypeError);
  const s = scriptServer();
  assert.throws(() => s.attempt((a) => a.status(99)), (e) => e instanceof RangeError && /200 to 599/.test(e.message));
  assert.throws(() => s.attempt((a) => a.send('x')), (e) => e instanceof TypeError && /after open/.test(e.message));
  assert.throws(() => s.attempt((a) => a.open().send({ id: 'a\nb' })), (e) => e instanceof TypeError && /line break/.test(e.message));
  assert.throws(() => s.attempt((a) => a.open().end().send('x')), (e) => e instanceof TypeError && /ends the attempt/.test(e.message));
  assert.throws(() => s.attempt((a) => a.open().status(500)), (e) => e instanceof TypeError && /first step/.test(e.message));
  assert.throws(() => s.attempt((a) => a.open().wait(-1)), RangeError);
  assert.throws(() => s.attempt(() => {}), (e) => e instanceof TypeError && /must start with/.test(e.message));
  assert.throws(() => s.attempt('x'), TypeError);
  assert.equal(s.left, 0, 'a script that threw added no attempt');
});

test('uninstall() puts the page clock back: a client made after it waits real time', { skip }, async () => {
  const clock = createVirtualClock();
  clock.uninstall();
  clock.uninstall(); // twice is nothing
  const server = scriptServer().attempt((a) => a.fail()).attempt((a) => a.open().send('x'));
  const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, jitter: 'none', baseMs: 30 });
  const t0 = performance.now();
  await new Promise((resolve) => (es.onmessage = resolve));
  es.close();
  assert.ok(performance.now() - t0 >= 25, 'the backoff wait took real time');
  assert.equal(clock.pending, 0, 'nothing was armed on the virtual clock');
});

test("the README's testing recipe runs as it is written, under node --test", { skip }, async () => {
  const { readFileSync, writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const at = readme.indexOf('<!-- tests/node/testing.test.mjs runs this block as it is -->');
  assert.ok(at >= 0, 'the README marks its testing recipe');
  const block = readme.slice(at).match(/```js\n([^]*?)```/)[1];
  assert.ok(block.split('\n').filter((l) => l.startsWith('  ')).length < 20, 'the test itself is under 20 lines');
  // The package as a user's app resolves it: each entry's file in pkg/.
  const source = block.replace(/'managed-eventsource\/(\w+)'/g, (_, entry) => JSON.stringify(new URL(`../../pkg/${entry}.js`, import.meta.url).href));
  const dir = mkdtempSync(join(tmpdir(), 'readme-testing-'));
  try {
    const file = join(dir, 'recipe.test.mjs');
    writeFileSync(file, source);
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT; // a run of its own, reporting to its stdout, not to this runner
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8', timeout: 60_000, env });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^# pass 1$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("server.EventSource stands in for EventSource: the EventSource transport drops, resumes by its URL's id, tells a 503's failure, and the events' target is the client", { skip }, async () => {
  const { ManagedEventSource: Main } = await import(new URL('../../pkg/index.js', import.meta.url));
  const clock = createVirtualClock();
  const had = Object.getOwnPropertyDescriptor(globalThis, 'EventSource');
  try {
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', event: 'tick', data: 'b' }).drop())
      .attempt((a) => a.status(503))
      .attempt((a) => a.open().wait(1000).send('c').stall());
    globalThis.EventSource = server.EventSource;
    const es = new Main('https://api.example/feed', { lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 100 });
    const got = [];
    es.onmessage = (e) => got.push([e.type, e.data, e.lastEventId, e.target === es, clock.now]);
    es.addEventListener('tick', (e) => got.push([e.type, e.data, e.lastEventId, e.target === es, clock.now]));
    const statuses = [];
    es.onstatus = (s) => statuses.push(s);
    await clock.runUntil(() => got.length === 3);
    assert.deepEqual(got, [
      ['message', 'a', '41', true, 0],
      ['tick', 'b', '42', true, 0],
      ['message', 'c', '42', true, 100 + 200 + 1000],
    ]);
    assert.deepEqual(statuses, ['open', 'reconnecting', 'open']);
    assert.deepEqual(server.requests.map((r) => [r.url, r.lastEventId]), [
      ['https://api.example/feed', null],
      ['https://api.example/feed?lastEventId=42', '42'],
      ['https://api.example/feed?lastEventId=42', '42'],
    ]);
    const third = server.requests[2];
    es.close();
    assert.equal(third.aborted, true, 'close() closed the stand-in');
    assert.equal(clock.pending, 0);
  } finally {
    if (had) Object.defineProperty(globalThis, 'EventSource', had);
    else delete globalThis.EventSource;
    clock.uninstall();
  }
});

test('clocks stack: uninstalled in any order, the newest left (else the page clock) is in place; an uninstalled clock refuses to run', { skip }, async () => {
  const a = createVirtualClock();
  const b = createVirtualClock();
  a.uninstall(); // the older first: b stays in place
  const onB = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: scriptServer().attempt((s) => s.fail()).fetch, jitter: 'none', baseMs: 1000 });
  await b.settle();
  assert.equal(b.pending, 1, "the client's wait is on b");
  onB.close();
  b.uninstall();
  await assert.rejects(b.advance(10), /uninstalled/);
  await assert.rejects(a.next(), /uninstalled/);
  // Neither is in place: a client waits real time.
  const server = scriptServer().attempt((s) => s.fail()).attempt((s) => s.open().send('x'));
  const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, jitter: 'none', baseMs: 20 });
  await new Promise((resolve) => (es.onmessage = resolve));
  es.close();
  assert.equal(a.pending + b.pending, 0);
});

test('a wait step is let go with its request: close() during wait(60000) leaves no timer', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    const server = scriptServer().attempt((a) => a.open().send('x').wait(60_000).send('y'));
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch });
    await new Promise((resolve) => (es.onmessage = resolve));
    await clock.settle();
    assert.equal(clock.pending, 1, 'the wait step');
    es.close();
    await clock.settle();
    assert.equal(clock.pending, 0);
    assert.equal(server.requests[0].aborted, true);
  } finally {
    clock.uninstall();
  }
});

test('runUntil refuses a maxTimers that would not bound it', { skip }, async () => {
  const clock = createVirtualClock();
  try {
    for (const bad of [2.5, -1, NaN, Infinity]) await assert.rejects(clock.runUntil(() => true, { maxTimers: bad }), RangeError, String(bad));
    for (const bad of ['3', null]) await assert.rejects(clock.runUntil(() => true, { maxTimers: bad }), TypeError, String(bad));
    await assert.rejects(clock.runUntil(() => true, null), TypeError);
    assert.equal(await clock.runUntil(() => true, { maxTimers: 0 }), 0);
  } finally {
    clock.uninstall();
  }
});
