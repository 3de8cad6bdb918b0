// The event log where its users and clients misbehave: a writer that throws, a client that goes before
// serve() is called, a resume that shares a read the window no longer joins, an event or a replay larger
// than maxBufferedBytes, a client that reads nothing, close() with clients attached, and options of the
// wrong type. Over both stores (a real redis-server on a free loopback port) and real HTTP clients on
// 127.0.0.1 (Node's fetch).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { bare, redisForTests, server } from './fixtures/redis-stores.mjs';
import { breaksAfterFirstWrite } from './fixtures/http-streams.mjs';

const fixture = redisForTests('faults');
const { STORES } = fixture;
const { createEventLog, createMemoryStore, createRedisStore, createGate, createResumableStreams } = server;

/** What a connection wrote, as `[event, data]` pairs (comments and heartbeats dropped). */
function parse(text) {
  return text
    .split('\n\n')
    .slice(0, -1)
    .map((block) => block.split('\n').filter((line) => !line.startsWith(':')))
    .filter((lines) => lines.length && lines[0] !== 'event: heartbeat') // the log's, written first on every stream
    .map((lines) => {
      const field = (name) => lines.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
      return [field('event')[0] ?? 'message', field('data').join('\n')];
    });
}

/** The first event (not the heartbeat) `reader` gives, as parse() gives it. */
async function firstEvent(reader) {
  const decoder = new TextDecoder();
  let text = '';
  while (parse(text).length === 0) text += decoder.decode((await reader.read()).value, { stream: true });
  return parse(text).slice(0, 1);
}

const until = async (test, what, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

async function listen(handler) {
  const s = http.createServer(handler);
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${s.address().port}/`, close: () => (s.closeAllConnections(), new Promise((r) => s.close(r))) };
}

for (const kind of ['memory', 'redis']) {
  describe(`${kind} store`, () => {
    test('a writer that throws is closed alone: the append resolves and every other connection gets the event', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
      const texts = ['', ''];
      (await log.connect(null)).start((t) => (texts[0] += t));
      const broken = (await log.connect(null)).start(() => {
        throw new Error('the socket under this writer is gone');
      });
      (await log.connect(null)).start((t) => (texts[1] += t));
      await log.append({ data: 'one' });
      await log.append({ data: 'two' });
      await until(() => texts.every((t) => t.includes('data: two')), 'both good connections get both events');
      assert.deepEqual(texts.map(parse), [
        [['message', 'one'], ['message', 'two']],
        [['message', 'one'], ['message', 'two']],
      ]);
      assert.equal(broken.open, false);
      assert.equal(log.connections, 2);
      await log.close();
    });

    test('a writer that appends as it is written to does not reorder what the other connections see', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
      let answered = null;
      (await log.connect(null)).start((t) => {
        if (t.includes('data: ping')) answered = log.append({ data: 'pong' });
      });
      let seen = '';
      (await log.connect(null)).start((t) => (seen += t));
      await log.append({ data: 'ping' });
      await until(() => answered !== null && seen.includes('data: pong'), 'the answer reaches the other connection');
      await answered;
      assert.deepEqual(parse(seen), [['message', 'ping'], ['message', 'pong']]);
      await log.close();
    });

    test('a given id of 0-0 is a RangeError in both stores (Redis takes no id at or below it)', async () => {
      const log = createEventLog({ store: await STORES[kind]({ maxAgeMs: Infinity }), heartbeatMs: 0 });
      await assert.rejects(log.append({ data: 'x', id: '0-0' }), (e) => e instanceof RangeError && /0-0/.test(e.message));
      assert.match(await log.append({ data: 'x', id: '0-1' }), /^0-1_[0-9a-z]+$/); // the id given, and the store's generation
      await log.close();
    });

    test('a given id older than maxAgeMs is a RangeError in both stores (Redis dropped it as it stored it, the memory store kept it)', async () => {
      const log = createEventLog({ store: await STORES[kind]({ maxAgeMs: 60_000 }), heartbeatMs: 0 });
      let text = '';
      (await log.connect(null)).start((t) => (text += t));
      await assert.rejects(log.append({ data: 'from 1970', id: '5-0' }), (e) => e instanceof RangeError && /maxAgeMs/.test(e.message));
      const recent = `${Date.now() - 1000}-0`;
      assert.equal(bare(await log.append({ data: 'a second ago', id: recent })), recent);
      await until(() => text.includes('data: a second ago'), 'the recent one is delivered');
      assert.deepEqual(parse(text), [['message', 'a second ago']]);
      await log.close();
    });

    test('a resume that shares a read the window no longer joins is told to reload, never left with a gap', async () => {
      // The store keeps 10 events and the log no recent window; 15 are appended between the shared read
      // and the second resume, so reading on from the shared snapshot finds it trimmed past.
      const log = createEventLog({ store: await STORES[kind]({ maxEvents: 10 }), recent: 0, heartbeatMs: 0, snapshotMs: 60_000 });
      const ids = [];
      for (let i = 0; i < 10; i++) ids.push(await log.append({ data: String(i) }));
      let first = '';
      const a = (await log.connect(ids[2])).start((t) => (first += t));
      for (let i = 10; i < 25; i++) ids.push(await log.append({ data: String(i) }));
      await until(() => first.includes('data: 24'), 'the first client is live up to the last event');
      let second = '';
      const b = (await log.connect(ids[2])).start((t) => (second += t));
      assert.equal(log.stats.sharedReads, 1, 'the second resume shared the first one read');
      const got = parse(second);
      const numbers = got.filter(([e]) => e === 'message').map(([, d]) => Number(d));
      const told = got.some(([e]) => e === 'reload');
      // Either every event after ids[2] arrives, or the client is told to reload: never 3..9 and then silence.
      assert.ok(told || numbers.join() === Array.from({ length: 22 }, (_, i) => i + 3).join(), `got ${JSON.stringify(got)}`);
      a.close();
      b.close();
      await log.close();
    });

    test('a resume the recent window holds is still held to maxReplay', async () => {
      const log = createEventLog({ store: await STORES[kind](), maxReplay: 3, recent: 100, heartbeatMs: 0 });
      const ids = [];
      for (let i = 0; i < 10; i++) ids.push(await log.append({ data: String(i) }));
      await until(() => log.stats.reads >= 0 && (kind === 'memory' || log.store.head === bare(ids[9])), 'the feed has delivered the last event');
      let text = '';
      (await log.connect(ids[0])).start((t) => (text += t));
      assert.deepEqual(parse(text), [['reload', 'too-far']]);
      let near = '';
      (await log.connect(ids[6])).start((t) => (near += t));
      assert.deepEqual(parse(near), [['message', '7'], ['message', '8'], ['message', '9']]);
      await log.close();
    });

    test('an event larger than maxBufferedBytes, and a replay larger than it, reach a client that reads', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0, maxBufferedBytes: 64 * 1024 });
      const s = await listen((req, res) => log.serve(req, res));
      try {
        const first = await log.append({ data: 'small' });
        const big = 'x'.repeat(1 << 20);
        await log.append({ data: big });
        for (let i = 0; i < 200; i++) await log.append({ data: String(i).padEnd(1000, '.') }); // a 200 kB replay
        const last = await log.append({ data: 'last' });
        await until(() => kind === 'memory' || log.store.head === bare(last), 'the feed has delivered the last event');
        const ac = new AbortController();
        const res = await fetch(s.url, { headers: { 'Last-Event-ID': first }, signal: ac.signal });
        let text = '';
        const decoder = new TextDecoder();
        try {
          for await (const chunk of res.body) {
            text += decoder.decode(chunk, { stream: true });
            if (text.endsWith('data: last\n\n')) break;
          }
        } catch {}
        ac.abort();
        const got = parse(text);
        assert.equal(got.length, 202, `${text.length} bytes in ${got.length} events, then the connection ended`);
        assert.equal(got[0][1], big);
      } finally {
        await s.close();
        await log.close();
      }
    });

    test('a Web Response carries an event larger than maxBufferedBytes', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0, maxBufferedBytes: 64 * 1024 });
      const first = await log.append({ data: 'small' });
      const big = 'y'.repeat(1 << 20);
      const last = await log.append({ data: big });
      await until(() => kind === 'memory' || log.store.head === bare(last), 'the feed has delivered the last event');
      const res = await log.response(new Request('http://x/', { headers: { 'Last-Event-ID': first } }));
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (parse(text).length === 0) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      assert.deepEqual(parse(text), [['message', big]]);
      await reader.cancel();
      await log.close();
    });
  });
}

test('a client that reads nothing is cut off: the server holds a bounded amount for it and stops feeding it', async () => {
  const log = createEventLog({ heartbeatMs: 0, maxBufferedBytes: 64 * 1024 });
  let response;
  const s = await listen((req, res) => ((response = res), log.serve(req, res)));
  const net = await import('node:net');
  const socket = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  socket.pause(); // reads nothing
  try {
    await until(() => log.connections === 1, 'the client is attached');
    const chunk = 'z'.repeat(16 * 1024);
    for (let i = 0; i < 2000 && log.connections === 1; i++) {
      await log.append({ data: chunk }); // 32 MB if nothing stopped it
      if (i % 16 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.equal(log.connections, 0, 'the slow client is no longer fed');
    assert.ok((response.writableLength ?? 0) < 2 * 1024 * 1024, `${response.writableLength} bytes held for it`);
  } finally {
    socket.destroy();
    await s.close();
    await log.close();
  }
});

test('serve() called after the client has gone (a slow middleware) holds no connection and no gate place', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const gate = createGate({ ratePerSec: 1000 });
  let served = () => {};
  const s = await listen(async (req, res) => {
    await new Promise((r) => req.socket.once('close', r)); // the client goes while a middleware awaits
    await log.serve(req, res, { gate });
    served();
  });
  try {
    const ac = new AbortController();
    const done = new Promise((r) => (served = r));
    fetch(s.url, { signal: ac.signal }).catch(() => {});
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    await done;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(log.connections, 0);
    assert.equal(gate.open, 0);
  } finally {
    await s.close();
    await log.close();
  }
});

test('HTTP/2: serve() called after the client has reset its stream holds no connection and no gate place', async () => {
  const http2 = await import('node:http2');
  const log = createEventLog({ heartbeatMs: 0 });
  const gate = createGate({ ratePerSec: 1000 });
  let served = () => {};
  const done = new Promise((r) => (served = r));
  const s = http2.createServer(async (req, res) => {
    await new Promise((r) => res.stream.once('close', r)); // the client goes while a middleware awaits
    await log.serve(req, res, { gate });
    served();
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const client = http2.connect(`http://127.0.0.1:${s.address().port}`);
  try {
    const req = client.request({ ':path': '/' });
    req.on('error', () => {});
    await new Promise((r) => setTimeout(r, 50));
    req.close();
    await done;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(log.connections, 0);
    assert.equal(gate.open, 0);
  } finally {
    client.close();
    await new Promise((r) => s.close(r));
    await log.close();
  }
});

test('serve and response work unbound, as route handlers (`app.get(path, log.serve)`, `export const GET = log.response`)', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const first = await log.append({ data: 'a' });
  await log.append({ data: 'b' });
  const { serve, response } = log;
  // Next.js calls a route handler with (request, context); Express with (req, res, next).
  const web = await response(new Request('http://x/', { headers: { 'Last-Event-ID': first } }), { params: {} });
  assert.equal(web.status, 200);
  const reader = web.body.getReader();
  assert.deepEqual(await firstEvent(reader), [['message', 'b']]);
  await reader.cancel();
  const s = await listen((req, res) => serve(req, res, () => {}));
  try {
    const ac = new AbortController();
    const res = await fetch(s.url, { headers: { 'Last-Event-ID': first }, signal: ac.signal });
    assert.equal(res.status, 200);
    const r = res.body.getReader();
    assert.deepEqual(await firstEvent(r), [['message', 'b']]);
    ac.abort();
  } finally {
    await s.close();
    await log.close();
  }
});

test('close() ends the streams serve() and response() hold, releases their gate places, and refuses resumes still in flight', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const gate = createGate({ ratePerSec: 1000 });
  const id = await log.append({ data: 'a' });
  const s = await listen((req, res) => log.serve(req, res, { gate }));
  try {
    const res = await fetch(s.url);
    const web = await log.response(new Request('http://x/'), { gate });
    const handle = await log.connect(null);
    handle.start(() => {});
    const inFlight = log.connect(id); // resolved after close(): the log holds nothing for it
    assert.equal(gate.open, 2);
    await log.close();
    // Each had its first line, the heartbeat, and nothing else.
    assert.match(await res.text(), /^event: heartbeat\ndata: \{[^\n]*\}\n\n$/, 'the node:http stream ends');
    assert.match(await web.text(), /^event: heartbeat\ndata: \{[^\n]*\}\n\n$/, 'the Web stream ends');
    assert.equal(handle.open, false);
    await assert.rejects(inFlight.then((h) => (h.open ? Promise.resolve('open') : Promise.reject(new Error('closed')))));
    await until(() => gate.open === 0, 'both gate places released');
    assert.equal(log.connections, 0);
  } finally {
    await s.close();
  }
});

test('options of the wrong type are TypeErrors or RangeErrors naming the option', async () => {
  const cases = [
    [{ now: 'yesterday' }, TypeError, /now/],
    [{ random: 5 }, TypeError, /random/],
    [{ maxReplay: 1.5 }, RangeError, /maxReplay/],
    [{ maxReplay: Infinity }, RangeError, /maxReplay/],
  ];
  for (const [options, type, name] of cases) {
    assert.throws(() => createEventLog(options), (e) => e instanceof type && name.test(e.message), JSON.stringify(options));
  }
  const redisCases = [
    [{ random: 'x' }, TypeError, /random/],
    [{ now: 1 }, TypeError, /now/],
    [{ onreconnect: 'log' }, TypeError, /onreconnect/],
    [{ reconnect: 'fast' }, TypeError, /reconnect/],
    [{ clientOptions: 'x' }, TypeError, /clientOptions/],
    [{ url: 'http://127.0.0.1:6379' }, TypeError, /url/],
    [{ url: 'redis://[not a host' }, TypeError, /url/],
    [{ commandTimeoutMs: 'soon' }, TypeError, /commandTimeoutMs/],
    [{ commandTimeoutMs: 0 }, RangeError, /commandTimeoutMs/],
    [{ commandTimeoutMs: 2 ** 31 }, RangeError, /commandTimeoutMs/],
    [{ maxPendingAppends: '1000' }, TypeError, /maxPendingAppends/],
    [{ maxPendingAppends: 0 }, RangeError, /maxPendingAppends/],
    [{ maxPendingAppends: 2.5 }, RangeError, /maxPendingAppends/],
    [{ maxPendingBytes: 'big' }, TypeError, /maxPendingBytes/],
    [{ maxPendingBytes: 0.5 }, RangeError, /maxPendingBytes/],
  ];
  for (const [options, type, name] of redisCases) {
    await assert.rejects(createRedisStore({ url: fixture.redis.url, ...options }), (e) => e instanceof type && name.test(e.message), String(Object.keys(options)));
  }
});

test('Redis restarted empty, whichever of the two connections comes back first: live clients get the gap marker every time', async () => {
  // The feed's connection and the command connection reconnect on independent draws of the ladder; the
  // check that the stream still vouches for the feed's position must not need the command connection.
  // Each round here is a coin toss between the two orders.
  for (let round = 0; round < 6; round++) {
    const store = await createRedisStore({ url: fixture.redis.url, key: `faults:${process.pid}:restart:${round}`, reconnect: { baseMs: 200, maxMs: 200 } });
    const log = createEventLog({ store, heartbeatMs: 0 });
    try {
      let text = '';
      (await log.connect(null)).start((t) => (text += t));
      await log.append({ data: 'before' });
      await until(() => text.includes('data: before'), 'the live client has the first event');
      await fixture.redis.kill();
      await fixture.redis.start(); // no persistence: the stream is gone
      await until(() => store.client.isReady && log.status === 'ready', 'the store is back');
      let id = null;
      while (id === null) id = await log.append({ data: 'after' }).catch(() => null);
      await until(() => text.includes('data: after'), 'the live client has the event appended after');
      await until(() => text.includes('data: gap'), 'the live client is told of the gap');
      // The marker comes after the events appended before the feed's check, if any: both orders say it.
      const got = parse(text).map(([event, data]) => `${event}:${data}`);
      assert.deepEqual([got[0], ...got.slice(1).sort()], ['message:before', 'message:after', 'reload:gap'], `round ${round}`);
    } finally {
      await log.close();
    }
  }
});

test('createRedisStore against an endpoint that accepts and never answers resolves, unavailable, after connectTimeout; close() returns', async () => {
  const net = await import('node:net');
  const mute = net.createServer((socket) => socket.on('data', () => {}));
  await new Promise((r) => mute.listen(0, '127.0.0.1', r));
  let timer;
  try {
    const started = Date.now();
    const store = await Promise.race([
      createRedisStore({ url: `redis://127.0.0.1:${mute.address().port}`, clientOptions: { socket: { connectTimeout: 300 } } }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('createRedisStore did not resolve in 5 s')), 5000))),
    ]);
    assert.equal(store.status, 'unavailable');
    assert.ok(Date.now() - started < 2000, `resolved after ${Date.now() - started} ms`);
    const log = createEventLog({ store, heartbeatMs: 0 });
    assert.equal(await log.append({ data: 'live only' }), null, 'an append while unavailable resolves null');
    await log.close();
  } finally {
    clearTimeout(timer);
    mute.close();
  }
});

test('Redis connected but answering nothing (CLIENT PAUSE): an append rejects with STORE_TIMEOUT and is not sent live, a resume is refused, close() returns; once Redis answers, the feed delivers the append that was stored, once', async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const key = fixture.key();
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key, commandTimeoutMs: 400 }), heartbeatMs: 0, recent: 1 });
  const web = await listen((req, res) => log.serve(req, res));
  const seen = [];
  const live = await log.connect('');
  live.start((text) => seen.push(...parse(text)));
  let paused = false;
  try {
    const first = await log.append({ data: 'before' });
    await log.append({ data: 'second' });
    await log.append({ data: 'third' });
    await until(() => seen.length === 3, 'the live connection has the three events');
    await admin.sendCommand(['CLIENT', 'PAUSE', '3000', 'WRITE']);
    paused = true;
    const started = Date.now();
    const error = await log.append({ data: 'during' }).then(() => null, (e) => e);
    assert.equal(error?.code, 'STORE_TIMEOUT', String(error));
    assert.match(error.message, /commandTimeoutMs/);
    assert.ok(Date.now() - started < 2000, `the append settled after ${Date.now() - started} ms`);
    assert.deepEqual(seen.map(([, d]) => d), ['before', 'second', 'third'], 'nothing was sent live for it');
    // A resume after the first event needs the store (the recent window holds the last one): refused softly,
    // in time.
    const t0 = Date.now();
    const answer = await fetch(web.url, { headers: { 'Last-Event-ID': first }, signal: AbortSignal.timeout(5000) });
    const body = await answer.text();
    assert.match(body, /^retry: \d+/m, `a soft refusal: ${answer.status} ${body}`);
    assert.ok(Date.now() - t0 < 2000, `answered after ${Date.now() - t0} ms`);
    // When Redis answers again, what the paused append stored comes through the feed, once.
    await until(() => seen.length === 4, 'the stored append delivered by the feed', 10_000);
    assert.deepEqual(seen.map(([, d]) => d), ['before', 'second', 'third', 'during']);
    paused = false;
  } finally {
    live.close();
    if (paused) await admin.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => {});
    const t1 = Date.now();
    await log.close();
    assert.ok(Date.now() - t1 < 2000, `close() took ${Date.now() - t1} ms`);
    await web.close();
    await admin.close();
  }
});

test('close() with Redis answering nothing returns within commandTimeoutMs', async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), commandTimeoutMs: 300 }), heartbeatMs: 0 });
  try {
    await log.append({ data: 'one' });
    await admin.sendCommand(['CLIENT', 'PAUSE', '3000', 'ALL']);
    const pending = log.append({ data: 'two' }).catch((e) => e);
    const t0 = Date.now();
    await log.close();
    assert.ok(Date.now() - t0 < 1500, `close() took ${Date.now() - t0} ms`);
    assert.ok((await pending) instanceof Error, 'the pending append settled');
  } finally {
    await admin.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => {});
    await admin.close();
  }
});

test('a Redis that refuses the blocking XREAD (an ACL without @blocking): the store says unavailable, naming why, appends and replays still work, and live events flow again once it may', async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const user = `noblock${process.pid}`;
  await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-@blocking']);
  const statuses = [];
  const errors = [];
  const url = fixture.redis.url.replace('redis://', `redis://${user}:secret@`);
  const log = createEventLog({
    store: await createRedisStore({ url, key: fixture.key(), commandTimeoutMs: 500, reconnect: { baseMs: 50, maxMs: 200 } }),
    heartbeatMs: 0,
    recent: 0,
    onstatus: (s, e) => statuses.push([s, e?.message ?? null]),
    onerror: (e) => errors.push(e),
  });
  const seen = [];
  try {
    await until(() => log.status === 'unavailable', 'the store says it cannot deliver live events', 5000);
    assert.match(statuses[0][1], /XREAD/, statuses[0][1]);
    assert.match(statuses[0][1], /NOPERM|blocking/i, statuses[0][1]);
    assert.equal(errors.length, 1, 'onerror told once, not at every try');
    const live = await log.connect('');
    live.start((text) => seen.push(...parse(text)));
    const id = await log.append({ data: 'stored' });
    assert.match(id, /^\d+-\d+_[0-9a-z]+$/, 'an append is still stored');
    // Let it block: the feed comes back on its ladder (at most 200 ms here), and delivers what it missed.
    await admin.sendCommand(['ACL', 'SETUSER', user, '+@blocking']);
    await until(() => log.status === 'ready', 'ready again', 5000);
    await until(() => seen.length === 1, 'the event appended meanwhile, delivered live', 5000);
    assert.deepEqual(seen, [['message', 'stored']]);
  } finally {
    await log.close();
    await admin.sendCommand(['ACL', 'DELUSER', user]).catch(() => {});
    await admin.close();
  }
});

test("a slow stream's recent window lets go of the events it aged out: 30 days at one event a minute hold about an hour's, not all 43,200", async () => {
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const log = createEventLog({ store: createMemoryStore({ now }), now, heartbeatMs: 0 });
  let id = null;
  for (let minute = 0; minute < 30 * 24 * 60; minute++) {
    t += 60_000;
    id = await log.append({ data: String(minute) });
    if (minute % 60 === 0) (await log.connect(id)).close(); // an hourly resume, as clients come and go
  }
  const { recentHeld } = log.stats;
  assert.ok(recentHeld <= 2 * 60 + 1024 + 1, `the window holds ${recentHeld} events in memory for 60 within maxAgeMs`);
  await log.close();
});

test("response() removes its listener from the request's signal when the stream ends otherwise (a signal may outlive many streams)", async () => {
  const { getEventListeners } = await import('node:events');
  const log = createEventLog({ heartbeatMs: 0 });
  const ac = new AbortController();
  const requests = Array.from({ length: 3 }, () => new Request('http://x/', { signal: ac.signal }));
  const responses = [];
  for (const request of requests) responses.push(await log.response(request));
  assert.equal(getEventListeners(requests[0].signal, 'abort').length, 1, 'listening while the stream runs');
  for (const r of responses) await r.body.cancel();
  for (const request of requests) assert.equal(getEventListeners(request.signal, 'abort').length, 0, 'a cancelled body');
  const last = new Request('http://x/', { signal: ac.signal });
  const ended = await log.response(last);
  await log.close();
  await ended.text();
  assert.equal(getEventListeners(last.signal, 'abort').length, 0, 'a stream the log ended');
});

test('a given id whose time part is ahead of the clock is a RangeError in both stores (every later id would inherit it, and never age out)', async () => {
  for (const kind of ['memory', 'redis']) {
    const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
    try {
      for (const id of [`${Date.now() + 60_000}-0`, '9007199254740993-0']) {
        await assert.rejects(log.append({ data: 'x', id }), (e) => e instanceof RangeError && /ahead of the clock/.test(e.message), `${kind} ${id}`);
      }
      const near = `${Date.now() + 1000}-0`; // another node's clock, a second ahead
      assert.equal(bare(await log.append({ data: 'x', id: near })), near, kind);
    } finally {
      await log.close();
    }
  }
});

test("a resumable stream's producer error reaches the client only as 'failed on the server', and its message goes to onerror; a listener that throws is dropped alone, no unhandled rejection", async () => {
  const errors = [];
  const streams = createResumableStreams({ onerror: (e) => errors.push(e) });
  const response = await streams.response(new Request('http://x/', { method: 'POST' }), async function* () {
    yield 'one';
    throw new Error('password=hunter2 at db.internal:5432');
  });
  const text = await response.text();
  assert.doesNotMatch(text, /hunter2|db\.internal/);
  assert.match(text, /event: error\ndata: the stream failed on the server\n\n/);
  assert.equal(errors[0].message, 'password=hunter2 at db.internal:5432');
  // A response whose write throws once the stream is under way (a framework's adapter, a socket gone bad).
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    let release;
    const gate = new Promise((r) => (release = r));
    // The first write (what the stream had: one write) goes through, the first live one throws.
    const { res } = breaksAfterFirstWrite();
    streams.serve({ headers: {}, url: '/' }, res, async function* () {
      yield 'a';
      await gate;
      yield 'b';
      yield 'c';
    });
    release();
    await until(() => errors.length === 2, 'the throwing write told to onerror');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(errors[1].message, 'this response cannot be written to any more');
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('drain({ overMs }) ends every connection over the window, spread evenly (never a wave), each after a short retry:, and turns new clients away softly until it ends', async () => {
  const N = 200;
  const OVER = 1000;
  const log = createEventLog({ heartbeatMs: 0 });
  const s = await listen((req, res) => log.serve(req, res));
  try {
    const ends = [];
    const texts = [];
    for (let i = 0; i < N; i++) {
      const conn = await log.connect('');
      const k = i;
      texts[k] = '';
      conn.start((t) => (texts[k] += t), () => ends.push(Date.now()));
    }
    const t0 = Date.now();
    const draining = log.drain({ overMs: OVER });
    // A client arriving meanwhile is told to come back after the window, not admitted.
    const refused = await (await fetch(s.url)).text();
    const wait = Number(/^retry: (\d+)/.exec(refused)?.[1]);
    assert.ok(wait >= OVER - 200, `told to wait ${wait} ms: ${refused}`);
    assert.equal(await draining, N);
    assert.equal(ends.length, N);
    assert.equal(log.connections, 0);
    assert.ok(texts.every((t) => /^retry: \d+\n\n$/.test(t) && Number(t.slice(7)) <= 1000), texts.find((t) => !/^retry: \d+\n\n$/.test(t)));
    // Spread: in each tenth of the window, about a tenth of the ends (stratified: 20 each, give or take the
    // timers' lateness on a busy machine), never the wave close() makes.
    const buckets = Array(10).fill(0);
    for (const t of ends) buckets[Math.min(9, Math.floor(((t - t0) / OVER) * 10))]++;
    assert.ok(Math.max(...buckets) <= N / 10 + 12, `ends per tenth of the window: ${buckets}`);
    assert.ok(ends.at(-1) - t0 >= OVER * 0.9, `the last ended after ${ends.at(-1) - t0} ms`);
    // Once the window is over, clients are admitted again (a drain is not a close).
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + OVER + 10 - Date.now())));
    const ac = new AbortController();
    const again = await fetch(s.url, { signal: ac.signal });
    const reader = again.body.getReader();
    assert.match(new TextDecoder().decode((await reader.read()).value), /^event: heartbeat/);
    ac.abort();
  } finally {
    await s.close();
    await log.close();
  }
});

test('close() during a drain ends what is left at once, and the drain resolves', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  for (let i = 0; i < 10; i++) (await log.connect('')).start(() => {});
  const draining = log.drain({ overMs: 60_000 });
  await log.close();
  assert.equal(await draining, 0);
  assert.equal(log.connections, 0);
});

test('metrics(): Prometheus text of what the log did, and the handlers serve it unbound', async () => {
  let t = 1_800_000_000_000;
  const now = () => t;
  const log = createEventLog({ store: createMemoryStore({ now }), now, heartbeatMs: 0, recent: 2 });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await log.append({ data: String(i) }));
  t += 30; // the next event is delivered 30 ms after its id's time (a given id, as another node's would be)
  await log.append({ data: 'late', id: `${t - 30}-99` });
  const live = await log.connect('');
  live.start(() => {});
  (await log.connect(ids[4])).start(() => {}); // from the window
  (await log.connect(ids[0])).start(() => {}); // from the store
  (await log.connect('garbage')).start(() => {}); // a reload event
  await log.drain({ overMs: 10 });
  const text = log.metrics({ node: 'a"1' });
  const value = (line) => {
    const m = text.split('\n').find((l) => l.startsWith(line + ' '));
    assert.ok(m, `no sample ${line} in:\n${text}`);
    return Number(m.slice(line.length + 1));
  };
  assert.equal(value('managed_eventsource_connections{node="a\\"1"}'), 0);
  assert.equal(value('managed_eventsource_connections_total{node="a\\"1"}'), 4);
  assert.equal(value('managed_eventsource_resumes_total{node="a\\"1"}'), 3);
  assert.equal(value('managed_eventsource_replays_total{node="a\\"1",from="window"}'), 1);
  assert.equal(value('managed_eventsource_reload_events_total{node="a\\"1"}'), 1);
  assert.equal(value('managed_eventsource_store_up{node="a\\"1"}'), 1);
  assert.equal(value('managed_eventsource_events_total{node="a\\"1"}'), 6);
  assert.equal(value('managed_eventsource_drained_total{node="a\\"1"}'), 4);
  assert.equal(value('managed_eventsource_delivery_lag_seconds_count{node="a\\"1"}'), 6);
  assert.equal(value('managed_eventsource_delivery_lag_seconds_bucket{node="a\\"1",le="0.025"}'), 5, 'five delivered at once');
  assert.equal(value('managed_eventsource_delivery_lag_seconds_bucket{node="a\\"1",le="0.05"}'), 6, 'one 30 ms late');
  assert.match(text, /^# TYPE managed_eventsource_delivery_lag_seconds histogram$/m);
  assert.throws(() => log.metrics({ 'bad-name': 1 }), TypeError);
  // Unbound, as route handlers.
  const { serveMetrics, metricsResponse } = log;
  const web = metricsResponse();
  assert.match(web.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  assert.match(await web.text(), /^managed_eventsource_events_total 6$/m);
  const s = await listen(serveMetrics);
  try {
    assert.match(await (await fetch(s.url)).text(), /^managed_eventsource_connections_total 4$/m);
  } finally {
    await s.close();
    await log.close();
  }
});

test("a reload event's id is the newest the log knows as it is written, not a shared read's older head, and nothing it includes follows it", async () => {
  for (const kind of ['memory', 'redis']) {
    const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0, snapshotMs: 60_000, recent: 100 });
    try {
      const first = await log.append({ data: 'a' });
      // Client A's unusable id reads the head (a read that later ones share for snapshotMs).
      const a = await log.connect('garbage');
      let textA = '';
      a.start((t) => (textA += t));
      assert.deepEqual(parse(textA), [['reload', 'invalid']]);
      assert.match(textA, new RegExp(`^id: ${first}\\n`));
      const later = [];
      for (let i = 0; i < 3; i++) later.push(await log.append({ data: `b${i}` }));
      await until(() => kind === 'memory' || log.store.head === bare(later[2]), 'the feed has the three events');
      // Client B's unusable id shares A's read: its head is `first`, three events old.
      const b = await log.connect('also garbage');
      let textB = '';
      b.start((t) => (textB += t));
      assert.deepEqual(parse(textB), [['reload', 'invalid']], `${kind}: the reload alone, not the events it includes: ${textB}`);
      assert.match(textB, new RegExp(`^id: ${later[2]}\\n`), `${kind}: ${textB}`);
      await log.append({ data: 'c' });
      await until(() => parse(textB).length === 2, 'the next event, live');
      assert.deepEqual(parse(textB)[1], ['message', 'c']);
      assert.ok(log.stats.sharedReads >= 1, 'B shared the read');
    } finally {
      await log.close();
    }
  }
});

test('a connection not started yet holds at most maxBufferedBytes of live events: past it, it is let go, and start() ends it', async () => {
  const log = createEventLog({ heartbeatMs: 0, maxBufferedBytes: 64 * 1024 });
  try {
    const idle = await log.connect(''); // start() not called
    const big = 'z'.repeat(8 * 1024);
    for (let i = 0; i < 20; i++) await log.append({ data: big }); // 160 KB
    assert.equal(log.connections, 0, 'let go');
    assert.equal(idle.open, false);
    let written = '';
    let ended = 0;
    idle.start((t) => (written += t), () => ended++);
    assert.equal(written, '');
    assert.equal(ended, 1, 'its end is called, so its owner lets go too');
  } finally {
    await log.close();
  }
});

test('a client cut for being behind that then takes in nothing is disconnected after 30 s, not 60 (node:http let its own timeout pass once)', { timeout: 60_000 }, async () => {
  const log = createEventLog({ heartbeatMs: 0, maxBufferedBytes: 64 * 1024 });
  let closedAt = null;
  let cutAt = null;
  const s = http.createServer((req, res) => {
    res.once('close', () => (closedAt = Date.now()));
    log.serve(req, res);
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const socket = net.connect(s.address().port, '127.0.0.1');
  try {
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => socket.once('data', r));
    socket.pause(); // reads nothing from here on: the kernel's buffers fill, then the server's
    const chunk = 'x'.repeat(256 * 1024);
    // Appends until the log cuts it (more than maxBufferedBytes unsent as the next one comes).
    for (let i = 0; i < 400 && log.connections > 0; i++) {
      await log.append({ data: chunk });
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(log.connections, 0, 'the log cut the client that read nothing');
    cutAt = Date.now();
    while (closedAt === null && Date.now() - cutAt < 50_000) await new Promise((r) => setTimeout(r, 250));
    assert.ok(closedAt !== null, 'the stalled connection was closed');
    const after = closedAt - cutAt;
    console.log(`[figure] a cut client that takes in nothing is disconnected ${Math.round(after / 100) / 10} s after the cut (STALLED_MS 30 s)`);
    assert.ok(after >= 29_000 && after < 40_000, `disconnected ${after} ms after the cut`);
  } finally {
    socket.destroy();
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
    await log.close();
  }
});
