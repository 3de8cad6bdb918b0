// managed-eventsource/server's event log, over both stores: the memory store and a real redis-server started
// for this file on a free loopback port (scripts/redis-server.mjs; no mock of Redis anywhere). Replay then
// live with no gap and no duplicate while events are appended, the bounds, the reload rule, shared reads
// counted at the store, bad ids, Redis killed and restarted, two logs (two nodes) on one stream, and the
// node:http and Web Response front doors with a gate.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { bare, redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('test');
const { STORES } = fixture;
const { createEventLog, createMemoryStore, createRedisStore, createGate, ladderDelay, compareIds } = server;

/** Parses what a connection writes into events; `until(n)` resolves once n events (not comments) arrived. */
function reader() {
  let text = '';
  const events = [];
  const waits = [];
  const write = (chunk) => {
    text += chunk;
    let end;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const ev = { id: null, event: 'message', data: [] };
      let any = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const [field, ...rest] = line.split(': ');
        const value = rest.join(': ');
        any = true;
        if (field === 'id') ev.id = value;
        else if (field === 'event') ev.event = value;
        else if (field === 'data') ev.data.push(value);
      }
      if (!any) continue;
      ev.data = ev.data.join('\n');
      events.push(ev);
      for (const w of [...waits]) if (w.test()) waits.splice(waits.indexOf(w), 1) && w.resolve();
    }
  };
  const until = (test, ms = 10_000) =>
    new Promise((resolve, reject) => {
      if (test()) return resolve();
      const timer = setTimeout(() => reject(new Error(`timed out waiting; ${events.length} events so far`)), ms);
      waits.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
    });
  return { write, events, until, count: (n, ms) => until(() => events.length >= n, ms) };
}

const data = (r) => r.events.filter((e) => e.event === 'message').map((e) => e.data);

/** What every stream of serve() and response() writes first, at once, with `heartbeatMs: 0`: the heartbeat
 * event announcing the interval and where the log reads a reconnect's id (our client reads both). */
const HELLO = 'event: heartbeat\ndata: {"heartbeatMs":0,"lastEventIdParam":"lastEventId"}\n\n';

for (const kind of ['memory', 'redis']) {
  describe(`${kind} store`, () => {
    test('replay then live: every event after the last id exactly once, in order, while appends go on', async () => {
      const log = createEventLog({ store: await STORES[kind](), recent: 50, heartbeatMs: 0 });
      const ids = [];
      const TOTAL = 600;
      let appended = 0;
      // The appender: one event a turn of the event loop, its ids in order.
      const appending = (async () => {
        for (; appended < TOTAL; appended++) {
          ids.push(await log.append({ data: String(appended) }));
          if (appended % 3 === 0) await new Promise((r) => setImmediate(r));
        }
      })();
      // Clients that join at different moments from different last ids: some in the window, some older,
      // some new (no id).
      const clients = [];
      while (appended < TOTAL - 50) {
        await new Promise((r) => setTimeout(r, 1));
        const known = ids.length;
        const pick = clients.length % 4 === 0 || known === 0 ? null : Math.floor(Math.random() * known);
        const r = reader();
        const expectedFrom = pick === null ? null : pick + 1; // the index of the first event it must get
        const c = { r, pick, expectedFrom, lastId: pick === null ? null : ids[pick], at: known };
        clients.push(c);
        log.connect(c.lastId).then((h) => ((c.handle = h), h.start(r.write)));
      }
      await appending;
      for (const c of clients) {
        if (c.pick === null) continue;
        await c.r.until(() => c.r.events.some((e) => e.data === String(TOTAL - 1)));
        const got = c.r.events.map((e) => e.id);
        assert.deepEqual(got, ids.slice(c.expectedFrom), `a client resuming after ${c.lastId} gets everything after it once, in order`);
        assert.deepEqual(data(c.r), ids.slice(c.expectedFrom).map((_, i) => String(c.expectedFrom + i)));
      }
      // New clients (no id) get a contiguous run up to the end, with no gap and no duplicate.
      for (const c of clients.filter((c) => c.pick === null)) {
        await c.r.until(() => c.r.events.some((e) => e.data === String(TOTAL - 1)));
        const got = c.r.events.map((e) => Number(e.data));
        assert.deepEqual(got, got.map((_, i) => got[0] + i));
      }
      assert.ok(clients.length >= 20, `${clients.length} clients joined while events were appended`);
      for (const c of clients) c.handle?.close();
      await log.close();
    });

    test('bounded by count: an id trimmed past gets the reload event, with the id to go on from', async () => {
      const log = createEventLog({ store: await STORES[kind]({ maxEvents: 10 }), heartbeatMs: 0 });
      const ids = [];
      for (let i = 0; i < 30; i++) ids.push(await log.append({ data: String(i) }));
      const old = reader();
      (await log.connect(ids[5])).start(old.write);
      assert.deepEqual(old.events, [{ id: ids[29], event: 'reload', data: 'unknown' }]);
      // (Redis's feed may deliver the last events a moment later: wait for them, then compare.)
      const kept = reader();
      (await log.connect(ids[19])).start(kept.write); // the last one trimmed: nothing after it is missing
      await kept.count(10);
      assert.deepEqual(data(kept), ['20', '21', '22', '23', '24', '25', '26', '27', '28', '29']);
      const inside = reader();
      (await log.connect(ids[25])).start(inside.write);
      await inside.count(4);
      assert.deepEqual(data(inside), ['26', '27', '28', '29']);
      await log.close();
    });

    test('bounded by age: events older than maxAgeMs are not replayed; the client is told to reload', async () => {
      // The memory store's clock is injected; Redis assigns ids by its own clock, so that run waits.
      let skew = 0;
      const now = () => Date.now() + skew;
      const maxAgeMs = kind === 'memory' ? 5000 : 300;
      const log = createEventLog({ store: await STORES[kind]({ maxAgeMs, now }), now, heartbeatMs: 0 });
      const first = await log.append({ data: 'old' });
      await log.append({ data: 'old too' });
      if (kind === 'memory') skew = 6000;
      else await new Promise((r) => setTimeout(r, maxAgeMs + 100));
      const fresh = await log.append({ data: 'new' });
      const r = reader();
      (await log.connect(first)).start(r.write);
      assert.deepEqual(r.events.map((e) => [e.event, e.id]), [['reload', fresh]]);
      const r2 = reader();
      (await log.connect(fresh)).start(r2.write);
      assert.deepEqual(r2.events, []);
      await log.append({ data: 'live' });
      await r2.count(1);
      assert.deepEqual(data(r2), ['live']);
      await log.close();
    });

    test('simultaneous reconnects share one read of the store; without sharing, each reads', async () => {
      for (const shareReads of [true, false]) {
        const store = await STORES[kind]();
        const log = createEventLog({ store, recent: 10, shareReads, heartbeatMs: 0 });
        const ids = [];
        for (let i = 0; i < 100; i++) ids.push(await log.append({ data: String(i) }));
        const readers = Array.from({ length: 200 }, () => reader());
        const before = store.reads;
        const handles = await Promise.all(readers.map(() => log.connect(ids[20])));
        handles.forEach((h, i) => h.start(readers[i].write));
        assert.equal(store.reads - before, shareReads ? 1 : 200, `store reads with shareReads ${shareReads}`);
        for (const r of readers) assert.deepEqual(data(r), ids.slice(21).map((_, i) => String(21 + i)));
        // Ids the recent window holds need no read at all.
        const inWindow = await Promise.all(Array.from({ length: 50 }, () => log.connect(ids[95])));
        assert.equal(store.reads - before, shareReads ? 1 : 200);
        // Live events after the shared snapshot reach every one of them once.
        const last = await log.append({ data: 'after' });
        for (const r of readers) await r.until(() => r.events.at(-1)?.id === last);
        for (const r of readers) assert.equal(r.events.length, 80);
        [...handles, ...inWindow].forEach((h) => h.close());
        await log.close();
      }
    });

    test('bad ids follow the documented rule and never throw: garbage, huge, future, never issued', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await log.append({ data: String(i) }));
      const head = ids[4];
      const cases = {
        garbage: ['8812', 'abc', '1-2-3', '-1-0', '01-0', '18446744073709551616-0', '1-', ' 1-0', 'x'.repeat(100_000)],
        // With no generation (taken as this one's), and with this generation's mark.
        future: ['99999999999999-0', `${bare(head).split('-')[0]}-${Number(bare(head).split('-')[1]) + 1}`, `99999999999999-0_${head.split('_')[1]}`],
      };
      for (const id of cases.garbage) {
        const r = reader();
        (await log.connect(id)).start(r.write);
        assert.deepEqual(r.events.map((e) => [e.event, e.data, e.id]), [['reload', 'invalid', head]], `garbage ${id.slice(0, 30)}`);
      }
      for (const id of cases.future) {
        const r = reader();
        (await log.connect(id)).start(r.write);
        assert.deepEqual(r.events.map((e) => [e.event, e.data, e.id]), [['reload', 'unknown', head]], `future ${id}`);
      }
      // An id the store never issued, between two it did: a position; what follows it is replayed.
      const [ms1] = bare(ids[1]).split('-');
      const [ms2] = bare(ids[2]).split('-');
      const between = ms1 === ms2 ? `${ms1}-${Number(bare(ids[1]).split('-')[1])}` : `${BigInt(ms1) + (BigInt(ms2) > BigInt(ms1) + 1n ? 1n : 0n)}-999`;
      const r = reader();
      (await log.connect(between)).start(r.write);
      assert.deepEqual(data(r), ['2', '3', '4']);
      // Before the first event of a log that never trimmed: it cannot vouch for it.
      const r2 = reader();
      (await log.connect('1-0')).start(r2.write);
      assert.deepEqual(r2.events.map((e) => e.event), ['reload']);
      // Bad appends are errors naming the problem.
      await assert.rejects(log.append({ data: 5 }), TypeError);
      await assert.rejects(log.append({ data: 'x', event: 'a\nb' }), TypeError);
      await assert.rejects(log.append({ data: 'x', id: 'nope' }), RangeError);
      await assert.rejects(log.append({ data: 'x', id: '1-0' }), RangeError); // not above the last
      const given = `${BigInt(bare(head).split('-')[0]) + 5n}-7`;
      assert.equal(await log.append({ data: 'given', id: given }), `${given}_${head.split('_')[1]}`);
      await log.close();
    });
  });
}

describe('redis store', () => {
  test('Redis killed mid-run: live events go on (with no id), the status says so, it reconnects on the ladder, and a resume across the outage is told to reload', async () => {
    const statuses = [];
    const retries = [];
    let retried = () => {};
    const ladder = { baseMs: 40, maxMs: 300, factor: 2 };
    const store = await createRedisStore({ url: fixture.redis.url, key: `test:${process.pid}:kill`, reconnect: ladder, onreconnect: (r) => (retries.push(r), retried()) });
    let statusChanged = () => {};
    const log = createEventLog({ store, heartbeatMs: 0, onstatus: (s) => (statuses.push(s), statusChanged(s)) });
    const waitStatus = (s) => new Promise((resolve) => (log.status === s ? resolve() : (statusChanged = (x) => x === s && resolve())));
    try {
      const r = reader();
      (await log.connect(null)).start(r.write);
      const before = await log.append({ data: 'before' });
      await r.count(1);
      const down = waitStatus('unavailable');
      await fixture.redis.kill();
      await down;
      assert.equal(log.status, 'unavailable');
      // The node keeps serving live events; they go out with no id.
      assert.equal(await log.append({ data: 'during 1' }), null);
      assert.equal(await log.append({ data: 'during 2' }), null);
      assert.deepEqual(r.events.slice(1).map((e) => [e.id, e.data]), [[null, 'during 1'], [null, 'during 2']]);
      // A resume the window holds is still served while Redis is down.
      const held = reader();
      (await log.connect(before)).start(held.write);
      assert.deepEqual(held.events, []);
      // A resume it cannot serve is a soft rejection, not an exception.
      await assert.rejects(log.connect('1-0'), (e) => e.code === 'STORE_UNAVAILABLE');
      // Let the ladder climb: wait for a third attempt in a row (each connection counts its own).
      const climbed = () => retries.some((x) => x.attempt >= 3);
      await new Promise((res) => (climbed() ? res() : (retried = () => climbed() && res())));
      const up = waitStatus('ready');
      await fixture.redis.start();
      await up;
      // The ladder: attempt n waited at most min(maxMs, baseMs * 2^(n-1)).
      assert.ok(retries.length >= 3, `${retries.length} reconnect attempts`);
      for (const { attempt, delayMs } of retries) assert.ok(delayMs >= 0 && delayMs <= Math.min(ladder.maxMs, ladder.baseMs * 2 ** (attempt - 1)), `attempt ${attempt}: ${delayMs} ms`);
      assert.ok(retries.some((x) => x.attempt >= 3));
      // Back: the outage is marked in the log (Redis came back empty, and events went out without ids), so
      // every connected client is told to reload, and live events have ids again.
      await r.until(() => r.events.some((e) => e.event === 'reload'));
      const after = await log.append({ data: 'after' });
      await r.until(() => r.events.at(-1)?.data === 'after');
      assert.equal(r.events.at(-1).id, after);
      // A client resuming from before the outage is told to reload, never given a silent gap.
      const late = reader();
      (await log.connect(before)).start(late.write);
      assert.equal(late.events[0].event, 'reload');
      assert.deepEqual(statuses, ['unavailable', 'ready']);
    } finally {
      await fixture.redis.start();
      await log.close();
    }
  });

  test('two logs (two nodes) on one stream: each serves live and replays what either appended', async () => {
    const key = `test:${process.pid}:fleet`;
    const a = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key }), heartbeatMs: 0 });
    const b = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key }), heartbeatMs: 0 });
    const onA = reader();
    const onB = reader();
    (await a.connect(null)).start(onA.write);
    (await b.connect(null)).start(onB.write);
    const ids = [];
    for (let i = 0; i < 40; i++) ids.push(await (i % 2 ? b : a).append({ data: String(i) }));
    await onA.count(40);
    await onB.count(40);
    assert.deepEqual(onA.events.map((e) => e.id), ids);
    assert.deepEqual(onB.events.map((e) => e.id), ids);
    for (const [node, other] of [[a, b], [b, a]]) {
      const r = reader();
      (await node.connect(ids[9])).start(r.write);
      assert.deepEqual(data(r), ids.slice(10).map((_, i) => String(10 + i)));
      void other;
    }
    await a.close();
    await b.close();
  });

  test('createRedisStore: bad options are errors naming the option', async () => {
    await assert.rejects(createRedisStore({ url: 5 }), /url/);
    await assert.rejects(createRedisStore({ key: '' }), /key/);
    await assert.rejects(createRedisStore({ maxEvents: 0 }), /maxEvents/);
    await assert.rejects(createRedisStore({ reconnect: { baseMs: -1 } }), /baseMs/);
  });
});

test('ladderDelay: full jitter, uniform in [0, min(maxMs, baseMs * factor^(n-1))]', () => {
  const ladder = { baseMs: 100, maxMs: 1000, factor: 2 };
  assert.equal(ladderDelay(1, ladder, () => 0.999999) <= 100, true);
  assert.equal(ladderDelay(3, ladder, () => 0.5), 200);
  assert.equal(ladderDelay(10, ladder, () => 0.5), 500);
  assert.equal(ladderDelay(4, ladder, () => 0), 0);
  assert.throws(() => ladderDelay(0, ladder), RangeError);
});

test('compareIds orders ids as two unsigned integers', () => {
  const sorted = ['0-0', '0-1', '9-0', '10-0', '10-2', '10-10', '1796290297770-0', '18446744073709551615-0'];
  const shuffled = [...sorted].sort(() => Math.random() - 0.5);
  assert.deepEqual(shuffled.sort(compareIds), sorted);
});

describe('front doors', () => {
  async function listen(handler) {
    const s = http.createServer(handler);
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${s.address().port}`, close: () => (s.closeAllConnections(), new Promise((r) => s.close(r))) };
  }

  /** Reads a streamed response until `done(text)` is true, then aborts it. */
  async function readUntil(url, init, done) {
    const ac = new AbortController();
    const res = await fetch(url, { ...init, signal: ac.signal });
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      text += decoder.decode(chunk, { stream: true });
      if (done(text)) break;
    }
    ac.abort();
    return { status: res.status, text };
  }

  test('node:http with a gate: a refused client gets retry:, an admitted one its replay, from the header or the query parameter', async () => {
    const log = createEventLog({ heartbeatMs: 0 });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await log.append({ data: String(i) }));
    let t = 0;
    const gate = createGate({ ratePerSec: 1, burst: 2, pace: true, spreadMs: 0, now: () => t });
    const s = await listen((req, res) => log.serve(req, res, { gate, hintEvent: 'retry-hint' }));
    try {
      const a = await readUntil(`${s.url}/`, { headers: { 'Last-Event-ID': ids[0] } }, (x) => x.includes('data: 2'));
      assert.equal(a.status, 200);
      assert.equal(a.text, `${HELLO}id: ${ids[1]}\ndata: 1\n\nid: ${ids[2]}\ndata: 2\n\n`);
      const b = await readUntil(`${s.url}/?lastEventId=${ids[1]}`, {}, (x) => x.includes('data: 2'));
      assert.equal(b.text, `${HELLO}id: ${ids[2]}\ndata: 2\n\n`);
      const refused = await fetch(`${s.url}/`, { headers: { 'Last-Event-ID': ids[0] } });
      assert.equal(await refused.text(), 'retry: 1000\nevent: retry-hint\ndata: 1000\n\n: come back in 1000 ms\n\n');
      // A huge query parameter is an invalid id, not an exception.
      t += 10_000;
      const huge = await readUntil(`${s.url}/?lastEventId=${'9'.repeat(8000)}`, {}, (x) => x.includes('invalid\n\n'));
      assert.equal(huge.status, 200);
      assert.match(huge.text.slice(HELLO.length), /^id: \S+\nevent: reload\ndata: invalid\n\n/);
    } finally {
      await s.close();
      await log.close();
    }
  });

  test('a Web Response: replay, then live, and the gate released when the body is cancelled', async () => {
    const log = createEventLog({ heartbeatMs: 0 });
    const first = await log.append({ data: 'a' });
    await log.append({ data: 'b' });
    const gate = createGate({ ratePerSec: 1000, maxStreams: 1 });
    const response = await log.response(new Request('http://x/events', { headers: { 'Last-Event-ID': first } }), { gate });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type'), /^text\/event-stream/);
    assert.equal(gate.open, 1);
    const refused = await log.response(new Request('http://x/events'), { gate });
    assert.match(await refused.text(), /^retry: \d+\n/);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    const live = log.append({ data: 'c' });
    while (!text.includes('data: c')) text += decoder.decode((await reader.read()).value);
    assert.equal(text.replace(/id: \S+\n/g, ''), `${HELLO}data: b\n\ndata: c\n\n`);
    await live;
    await reader.cancel();
    assert.equal(gate.open, 0);
    assert.equal(log.connections, 0);
    await log.close();
  });
});

test('the server module loads where `redis` is not installed, and createRedisStore says what is missing', async () => {
  // The module as the package ships it, bundled into a folder with no node_modules above it.
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(join(tmpdir(), 'server-without-redis-'));
  try {
    const out = join(dir, 'server.mjs');
    const root = new URL('../../', import.meta.url).pathname;
    const r = spawnSync(join(root, 'node_modules/.bin/esbuild'), [join(root, 'src/server/index.js'), '--bundle', '--platform=node', '--format=esm', '--external:redis', '--log-level=warning', `--outfile=${out}`]);
    assert.equal(r.status, 0, String(r.stderr));
    const alone = await import(out);
    const log = alone.createEventLog({ heartbeatMs: 0 });
    assert.match(await log.append({ data: 'works' }), /^\d+-\d+_[0-9a-z]{7}$/);
    await assert.rejects(alone.createRedisStore({ url: fixture.redis.url }), (e) => /npm install redis/.test(e.message) && /optional peer dependency/.test(e.message));
    await log.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('node:http: a client with nothing to replay sees the headers and a first line at once, then live events', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const s = http.createServer((req, res) => log.serve(req, res));
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  try {
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${s.address().port}/`, { signal: ac.signal }); // resolves on the headers
    assert.equal(res.status, 200);
    // nginx with its default proxy_buffering on streams a response that says so.
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    const reader = res.body.getReader();
    // A byte of the body before any event: a proxy that forwards headers only with one (Vite's) opens now.
    assert.equal(new TextDecoder().decode((await reader.read()).value), HELLO);
    const id = await log.append({ data: 'live' });
    assert.equal(new TextDecoder().decode((await reader.read()).value), `id: ${id}\ndata: live\n\n`);
    ac.abort();
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
    await log.close();
  }
});

test("connect()'s handle works unbound, as a socket's listener or destructured: start, close and open", async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  try {
    const conn = await log.connect('');
    const { start } = conn;
    let got = '';
    assert.equal(start((t) => (got += t)), conn, 'start returns the handle');
    await log.append({ data: 'one' });
    const socket = new (await import('node:events')).EventEmitter();
    socket.on('close', conn.close); // as a WebSocket server's 'close' listener is written
    socket.emit('close');
    assert.equal(conn.open, false);
    assert.equal(log.connections, 0);
    await log.append({ data: 'two' });
    assert.match(got, /data: one/);
    assert.doesNotMatch(got, /data: two/, 'nothing is written after close');
    const { close } = await log.connect('');
    close();
    assert.equal(log.connections, 0);
    assert.deepEqual(Object.keys(conn), [], "the handle shows nothing of the log's own state");
  } finally {
    await log.close();
  }
});

test('the heartbeat is a named event an EventSource delivers, at the start and every heartbeatMs, saying the interval and the id parameter', async () => {
  const frames = (text) => text.split('\n\n').filter(Boolean);
  for (const [options, hello] of [
    [{ heartbeatMs: 120 }, 'event: heartbeat\ndata: {"heartbeatMs":120,"lastEventIdParam":"lastEventId"}'],
    [{ heartbeatMs: 120, heartbeatEvent: 'beat', lastEventIdParam: null }, 'event: beat\ndata: {"heartbeatMs":120}'],
    [{ heartbeatMs: 120, lastEventIdParam: 'since' }, 'event: heartbeat\ndata: {"heartbeatMs":120,"lastEventIdParam":"since"}'],
  ]) {
    const log = createEventLog(options);
    const s = http.createServer((req, res) => log.serve(req, res));
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    try {
      const ac = new AbortController();
      const res = await fetch(`http://127.0.0.1:${s.address().port}/`, { signal: ac.signal });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const started = Date.now();
      // Three heartbeats: the first at once, then one every 120 ms (a test's bound: 5 s).
      while (frames(text).length < 3 && Date.now() - started < 5000) text += decoder.decode((await reader.read()).value);
      assert.deepEqual(frames(text).slice(0, 3), [hello, hello, hello], JSON.stringify(options));
      assert.doesNotMatch(text, /^:/m, 'no comment lines: an EventSource never shows them');
      ac.abort();
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
      await log.close();
    }
  }
  assert.throws(() => createEventLog({ heartbeatEvent: 'a\nb' }), TypeError);
});
