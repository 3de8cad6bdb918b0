// The `trace` option under Node, on the testing entry's virtual clock and scripted server: one record per
// attempt and per change of state, with what each attempt carried, what ended it, and the delay drawn with
// what set its size. Needs the built package (`npm test` builds it before this step).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

const testingEntry = new URL('../../pkg/testing.js', import.meta.url);
const fetchEntry = new URL('../../pkg/fetch.js', import.meta.url);
const mainEntry = new URL('../../pkg/index.js', import.meta.url);
const built = existsSync(testingEntry) && existsSync(fetchEntry);
const skip = built ? false : 'pkg/ is not built (run `npm run build`; `npm test` builds it before this step)';
const { createVirtualClock, scriptServer } = built ? await import(testingEntry) : {};
const { ManagedEventSource } = built ? await import(fetchEntry) : {};
const { ManagedEventSource: MainEventSource } = built ? await import(mainEntry) : {};

/** Runs `story(clock)` on a fresh virtual clock, uninstalled whatever happens. */
async function onClock(story, seed = 1) {
  const clock = createVirtualClock({ seed });
  try {
    return await story(clock);
  } finally {
    clock.uninstall();
  }
}

/** Runs `story()` with `server`'s stand-in as the global EventSource (and, with `fetch`, its fetch as the
 * global fetch, which a probe uses), each put back after. */
async function withStandIn(server, story, { fetch = false } = {}) {
  const had = Object.getOwnPropertyDescriptor(globalThis, 'EventSource');
  const hadFetch = globalThis.fetch;
  globalThis.EventSource = server.EventSource;
  if (fetch) globalThis.fetch = server.fetch;
  try {
    return await story();
  } finally {
    if (had) Object.defineProperty(globalThis, 'EventSource', had);
    else delete globalThis.EventSource;
    globalThis.fetch = hadFetch;
  }
}

/** A fetch-transport client of `server` whose trace keeps each record's type and calls close() (as `this`)
 * at a record of type `at`. */
function closingAt(server, at) {
  const types = [];
  const es = new ManagedEventSource('https://api.test/feed', {
    transport: 'fetch',
    fetch: server.fetch,
    trace(r) {
      types.push(r.type);
      if (r.type === at) this.close();
    },
  });
  return { es, types };
}

/** The records without their transport's words (a message says what the transport saw). */
const plain = (records) => records.map(({ message, ...r }) => r);

test('a traced outage: the attempts, what each carried, what ended it, and each wait with what set its size', { skip }, () =>
  onClock(async (clock) => {
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
      .attempt((a) => a.status(503, { retryAfter: 5 }))
      .attempt((a) => a.status(401));
    const records = [];
    const told = [];
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, trace: (r) => records.push(r) });
    es.onretry = ({ attempt, delayMs }) => told.push({ attempt, delayMs });
    await clock.runUntil(() => es.status === 'failed');
    es.close();
    const [first, second] = told;
    assert.deepEqual(plain(records), [
      { type: 'attempt', time: 0, attempt: 0, trigger: 'start', url: 'https://api.test/feed', lastEventId: '' },
      { type: 'open', time: 0, attempt: 0 },
      { type: 'ended', time: 0, cause: 'error' },
      { type: 'wait', time: 0, attempt: 1, delayMs: first.delayMs, ladderMs: first.delayMs, bound: 'ladder' },
      { type: 'attempt', time: first.delayMs, attempt: 1, trigger: 'timer', url: 'https://api.test/feed', lastEventId: '42' },
      { type: 'ended', time: first.delayMs, cause: 'status', status: 503, retryAfterMs: 5000 },
      { type: 'wait', time: first.delayMs, attempt: 2, delayMs: second.delayMs, ladderMs: second.delayMs - 5000, bound: 'retryAfter' },
      { type: 'attempt', time: first.delayMs + second.delayMs, attempt: 2, trigger: 'timer', url: 'https://api.test/feed', lastEventId: '42' },
      { type: 'ended', time: first.delayMs + second.delayMs, cause: 'status', status: 401 },
      { type: 'giveup', time: first.delayMs + second.delayMs, attempts: 2 },
      { type: 'closed', time: first.delayMs + second.delayMs, by: 'user' },
    ]);
    assert.match(records[2].message, /dropped/, 'the fetch transport says what ended the attempt');
    assert.match(records[5].message, /503/);
    assert.equal(server.requests.length, 3, 'one attempt record per request');
  }));

test('the EventSource transport: an attempt carries the id only in its URL, and a stall is the watchdog\'s verdict', { skip }, () =>
  onClock(async (clock) => {
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '7', data: 'a' }).drop())
      .attempt((a) => a.open().send({ id: '8', data: 'b' }).stall())
      .attempt((a) => a.open());
    await withStandIn(server, async () => {
      const records = [];
      // No lastEventIdParam: an EventSource made by us cannot send the header, so nothing carries the id.
      const es = new MainEventSource('https://api.test/feed', { jitter: 'none', baseMs: 100, stallTimeoutMs: 4000, trace: (r) => records.push(r) });
      await clock.runUntil(() => records.filter((r) => r.type === 'attempt').length === 3);
      const attempts = records.filter((r) => r.type === 'attempt');
      assert.deepEqual(attempts.map((r) => [r.trigger, r.lastEventId, r.url]), [
        ['start', '', 'https://api.test/feed'],
        ['timer', '', 'https://api.test/feed'],
        ['timer', '', 'https://api.test/feed'],
      ]);
      const stall = records.find((r) => r.cause === 'stalled');
      assert.equal(stall?.silentMs, 4000, JSON.stringify(records));
      assert.ok(stall.time >= 100 + 4000 && stall.time <= 100 + 5000, `noticed between the timeout and a quarter more: ${stall.time}`);
      es.close();
      assert.equal(records.at(-1).type, 'closed');
      assert.equal(clock.pending, 0);
    });
  }));

test('with lastEventIdParam the EventSource transport\'s reconnects carry the id, and the record says so', { skip }, () =>
  onClock(async (clock) => {
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '42', data: 'a' }).drop())
      .attempt((a) => a.open());
    await withStandIn(server, async () => {
      const records = [];
      const es = new MainEventSource('https://api.test/feed', { lastEventIdParam: 'lastEventId', trace: (r) => records.push(r) });
      await clock.runUntil(() => es.status === 'open' && server.requests.length === 2);
      const second = records.filter((r) => r.type === 'attempt')[1];
      assert.equal(second.lastEventId, '42');
      assert.equal(second.url, 'https://api.test/feed?lastEventId=42');
      assert.equal(server.requests[1].url, second.url, 'the URL the record names is the one requested');
      es.close();
    });
  }));

test('every told retry, status and give-up has its record, in the order the client tells them', { skip }, () =>
  onClock(async (clock) => {
    const server = scriptServer();
    for (let i = 0; i < 4; i++) server.attempt((a) => a.fail());
    server.attempt((a) => a.open().send('x'));
    const log = [];
    const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, maxAttempts: 3, trace: (r) => log.push(r.type) });
    es.onstatus = (s) => log.push('status ' + s);
    es.onretry = () => log.push('onretry');
    es.ongiveup = () => log.push('ongiveup');
    await clock.runUntil(() => es.status === 'failed');
    es.reconnectNow();
    await clock.runUntil(() => es.status === 'open');
    es.close();
    assert.deepEqual(log, [
      'attempt', 'ended', 'wait', 'status reconnecting', 'onretry',
      'attempt', 'ended', 'wait', 'onretry',
      'attempt', 'ended', 'wait', 'onretry',
      'attempt', 'ended', 'giveup', 'status failed', 'ongiveup',
      'attempt', 'status reconnecting', 'open', 'status open',
      'closed', 'status closed',
    ]);
  }));

test('a trace function that throws is reported and changes nothing; one that calls close() ends everything', { skip }, () =>
  onClock(async (clock) => {
    const reported = [];
    const had = globalThis.reportError;
    globalThis.reportError = (e) => reported.push(e);
    try {
      const server = scriptServer().attempt((a) => a.fail()).attempt((a) => a.open().send('x'));
      const es = new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: server.fetch, trace: () => { throw new Error('trace broke'); } });
      await clock.runUntil(() => es.status === 'open');
      assert.ok(reported.length >= 4 && reported.every((e) => e.message === 'trace broke'), `${reported.length} reported`);
      es.close();
    } finally {
      globalThis.reportError = had;
    }
    const server = scriptServer().attempt((a) => a.fail()).attempt((a) => a.open());
    const { es, types } = closingAt(server, 'wait');
    await clock.settle();
    await clock.runUntil(() => es.status === 'closed');
    assert.deepEqual(types, ['attempt', 'ended', 'wait', 'closed']);
    assert.equal(clock.pending, 0, 'the wait was disarmed');
    assert.equal(server.requests.length, 1, 'no attempt after close()');
  }));

test('option trace must be a function', { skip }, () => {
  assert.throws(() => new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: () => new Promise(() => {}), trace: 'yes' }), {
    name: 'TypeError',
    message: /option trace must be a function/,
  });
  assert.throws(() => new ManagedEventSource('https://api.test/feed', { transport: 'fetch', fetch: () => new Promise(() => {}), tarce: () => {} }), /did you mean 'trace'/);
});

test("the first attempt's record, told while the constructor runs, finds the client's members working", { skip }, () =>
  onClock(async (clock) => {
    await clock.settle(); // the module compiled: a constructor then starts its client at once
    const server = scriptServer().attempt((a) => a.open());
    const seen = [];
    const es = new ManagedEventSource('https://api.test/feed', {
      transport: 'fetch',
      fetch: server.fetch,
      trace(r) {
        seen.push([r.type, this.status, this.url]);
        if (r.type === 'attempt') this.close();
      },
    });
    assert.deepEqual(seen, [
      ['attempt', 'connecting', 'https://api.test/feed'],
      ['closed', 'closed', 'https://api.test/feed'],
    ]);
    assert.equal(es.status, 'closed');
    await clock.settle();
    assert.equal(clock.pending, 0);
    assert.ok(server.requests.every((q) => q.aborted), 'no request left open');
  }));

test('with probe, the EventSource transport\'s failure is probed: the records show the probe, the status it saw, and a wait on its Retry-After', { skip }, () =>
  onClock(async (clock) => {
    // The stand-in's attempt answers 503 (an EventSource sees only an error); the probe, a fetch of the
    // same URL, is the script's next attempt.
    const server = scriptServer()
      .attempt((a) => a.status(503))
      .attempt((a) => a.status(503, { retryAfter: 2 }))
      .attempt((a) => a.open());
    await withStandIn(server, async () => {
      const records = [];
      const es = new MainEventSource('https://api.test/feed', { probe: true, trace: (r) => records.push(r) });
      await clock.runUntil(() => es.status === 'open');
      es.close();
      assert.deepEqual(plain(records).map(({ time, ...r }) => r), [
        { type: 'attempt', attempt: 0, trigger: 'start', url: 'https://api.test/feed', lastEventId: '' },
        { type: 'ended', cause: 'error' },
        { type: 'probe' },
        { type: 'probed', status: 503 },
        { type: 'wait', attempt: 1, delayMs: records[4].delayMs, ladderMs: records[4].delayMs - 2000, bound: 'retryAfter' },
        { type: 'attempt', attempt: 1, trigger: 'timer', url: 'https://api.test/feed', lastEventId: '' },
        { type: 'open', attempt: 1 },
        { type: 'closed', by: 'user' },
      ]);
    }, { fetch: true });
  }));

test('close() from a callback stops the trace there: nothing the machine had queued is recorded after it, and no probe goes out', { skip }, async () => {
  for (const at of ['ended', 'onerror']) {
    await onClock(async (clock) => {
      const server = scriptServer().attempt((a) => a.open().send('x').drop()).attempt((a) => a.open());
      const { es, types } = closingAt(server, at);
      es.onerror = () => at === 'onerror' && es.close();
      let told = 0;
      es.onretry = () => told++;
      await clock.settle();
      assert.equal(es.status, 'closed');
      assert.deepEqual(types, ['attempt', 'open', 'ended', 'closed'], `close() at ${at}`);
      assert.equal(told, 0, 'no retry told after close()');
      assert.equal(clock.pending, 0);
    });
  }
  // The EventSource transport with probe: close() in onerror, while the probe is queued.
  await onClock(async (clock) => {
    const server = scriptServer().attempt((a) => a.status(503)).attempt((a) => a.open());
    await withStandIn(server, async () => {
      const types = [];
      const es = new MainEventSource('https://api.test/feed', { probe: true, trace: (r) => types.push(r.type) });
      es.onerror = () => es.close();
      await clock.settle();
      await clock.settle();
      assert.deepEqual(types, ['attempt', 'ended', 'closed']);
      assert.equal(server.requests.length, 1, 'no probe request after close()');
    }, { fetch: true });
  });
});
