// The event log's topics and its authorize hook, over both stores (the memory store and a real redis-server
// on a free loopback port), through real HTTP on loopback: one log serving many streams by name, each with its
// own history, ids and recovery; a refusal that is a 401 or 403 and opens nothing; a topic let go when no one
// follows it, its history kept.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, readEvents } from './fixtures/http-streams.mjs';
import { redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('topics');
const { STORES } = fixture;
const { createEventLog, createGate } = server;

/** Waits for `predicate` to hold, checking as the event loop turns; fails after `ms`. */
async function until(predicate, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

for (const kind of ['memory', 'redis']) {
  describe(`${kind} store`, () => {
    test('topics are streams of their own: each client gets its topic alone, and resumes within it exactly', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
      const s = await listen((req, res) => {
        const topic = new URL(req.url, 'http://x').pathname.slice(1) || undefined;
        log.serve(req, res, { topic });
      });
      try {
        const room1 = log.topic('room:1');
        const room2 = log.topic('room:2');
        const ids = { main: [], 1: [], 2: [] };
        for (let i = 0; i < 4; i++) {
          ids.main.push(await log.append({ data: `main ${i}` }));
          ids[1].push(await room1.append({ data: `one ${i}` }));
          ids[2].push(await room2.append({ data: `two ${i}`, event: 'chat' }));
        }
        // A resume on each stream: its own events after its own id, nothing of the others.
        const one = await readEvents(`${s.url}/room:1`, { 'Last-Event-ID': ids[1][1] }, (e) => e.length >= 2);
        assert.deepEqual(one.events.map((e) => [e.id, e.data]), [[ids[1][2], 'one 2'], [ids[1][3], 'one 3']]);
        const two = await readEvents(`${s.url}/room:2?lastEventId=${ids[2][0]}`, {}, (e) => e.length >= 3);
        assert.deepEqual(two.events.map((e) => [e.event, e.data]), [['chat', 'two 1'], ['chat', 'two 2'], ['chat', 'two 3']]);
        const main = await readEvents(`${s.url}/`, { 'Last-Event-ID': ids.main[2] }, (e) => e.length >= 1);
        assert.deepEqual(main.events.map((e) => e.data), ['main 3']);

        // Live: a client on room:1 sees room:1's appends only, while all three streams get events.
        const live = readEvents(`${s.url}/room:1`, { 'Last-Event-ID': ids[1][3] }, (e) => e.some((x) => x.data === 'one end'));
        await until(() => room1.connections === 1);
        assert.equal(log.connections, 1);
        for (let i = 0; i < 20; i++) {
          await Promise.all([log.append({ data: `main live ${i}` }), room1.append({ data: `one live ${i}` }), room2.append({ data: `two live ${i}` })]);
        }
        await room1.append({ data: 'one end' });
        const got = (await live).events.map((e) => e.data);
        assert.deepEqual(got, [...Array.from({ length: 20 }, (_, i) => `one live ${i}`), 'one end']);

        // An id of another topic is not this topic's: a resume with it never replays from the wrong place.
        const wrong = await readEvents(`${s.url}/room:2`, { 'Last-Event-ID': ids.main[3] }, (e) => e.length >= 1);
        assert.ok(wrong.events.every((e) => !e.data.startsWith('main') && !e.data.startsWith('one')), JSON.stringify(wrong.events));
        assert.equal(log.stats.topics, 2);
      } finally {
        await s.close();
        await log.close();
      }
    });

    test('a topic no one follows is let go after topicIdleMs, and its history is still served after', async () => {
      const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0, topicIdleMs: 50 });
      const s = await listen((req, res) => log.serve(req, res, { topic: 'doc:7' }));
      try {
        const doc = log.topic('doc:7');
        const first = await doc.append({ data: 'a' });
        await doc.append({ data: 'b' });
        const r = await readEvents(s.url, { 'Last-Event-ID': first }, (e) => e.length >= 1);
        assert.deepEqual(r.events.map((e) => e.data), ['b']);
        await until(() => log.stats.topics === 0);
        assert.match(log.metrics(), /^managed_eventsource_topics 0$/m);
        // Appended while no log follows the topic: stored all the same, and replayed.
        await doc.append({ data: 'c' });
        const again = await readEvents(s.url, { 'Last-Event-ID': first }, (e) => e.length >= 2);
        assert.deepEqual(again.events.map((e) => e.data), ['b', 'c']);
      } finally {
        await s.close();
        await log.close();
      }
    });
  });
}

describe('authorize', () => {
  test('node:http: 401 and 403 refuse with nothing opened and the gate released; true admits; the hook sees the request and the topic', async () => {
    const seen = [];
    const log = createEventLog({
      heartbeatMs: 0,
      authorize: async (req, topic) => {
        seen.push([req.headers.authorization ?? null, topic]);
        const user = req.headers.authorization?.slice('Bearer '.length);
        if (!user) return 401;
        if (topic === null) return true;
        return topic === `user:${user}` || (user === 'bob' ? false : 403);
      },
    });
    const gate = createGate({ ratePerSec: 1000, maxStreams: 10 });
    const s = await listen((req, res) => {
      const topic = new URL(req.url, 'http://x').searchParams.get('topic') ?? undefined;
      log.serve(req, res, { topic, gate });
    });
    try {
      await log.topic('user:ann').append({ data: 'for ann' });
      const none = await fetch(`${s.url}/?topic=user:ann`);
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('cache-control'), 'no-store');
      assert.equal(await none.text(), '');
      const other = await fetch(`${s.url}/?topic=user:ann`, { headers: { authorization: 'Bearer eve' } });
      assert.equal(other.status, 403);
      await other.text();
      const falsy = await fetch(`${s.url}/?topic=user:ann`, { headers: { authorization: 'Bearer bob' } });
      assert.equal(falsy.status, 403);
      await falsy.text();
      assert.equal(log.connections, 0);
      await until(() => gate.open === 0);
      const ok = await readEvents(`${s.url}/?topic=user:ann&lastEventId=0-1`, { authorization: 'Bearer ann' }, (e) => e.length >= 1);
      assert.equal(ok.status, 200);
      const own = await readEvents(`${s.url}/`, { authorization: 'Bearer ann' }, () => true);
      assert.equal(own.status, 200);
      assert.deepEqual(seen, [
        [null, 'user:ann'],
        ['Bearer eve', 'user:ann'],
        ['Bearer bob', 'user:ann'],
        ['Bearer ann', 'user:ann'],
        ['Bearer ann', null],
      ]);
      await until(() => gate.open === 0 && log.connections === 0);
    } finally {
      await s.close();
      await log.close();
    }
  });

  test('a hook that throws or answers nonsense is not a refusal: a soft rejection, and onerror names it', async () => {
    const errors = [];
    let answer = () => {
      throw new Error('session store down');
    };
    const log = createEventLog({ heartbeatMs: 0, unavailableRetryMs: 100, authorize: () => answer(), onerror: (e) => errors.push(e) });
    const s = await listen((req, res) => log.serve(req, res, { topic: 'x' }));
    try {
      // Seed 001's soft rejection: a 200 whose body is only `retry:` (a refusal would end the client for good).
      const thrown = await fetch(s.url);
      assert.equal(thrown.status, 200);
      assert.match(await thrown.text(), /^retry: \d+\n\n: come back in/);
      answer = () => 'yes';
      const nonsense = await fetch(s.url);
      assert.match(await nonsense.text(), /^retry: \d+\n\n: come back in/);
      assert.deepEqual(errors.map((e) => [e.constructor.name, /session store down|must return true, false, 401 or 403/.test(e.message)]), [['Error', true], ['TypeError', true]]);
      assert.equal(log.connections, 0);
      const web = await log.response(new Request('http://x/'), { topic: 'x' });
      assert.match(await web.text(), /^retry: \d+\n\n: come back in/);
      assert.equal(errors.length, 3);
    } finally {
      await s.close();
      await log.close();
    }
  });

  test('a Web Response: 401 and 403 with nothing opened, true streams the topic', async () => {
    const log = createEventLog({ heartbeatMs: 0, authorize: (request, topic) => (request.headers.get('x-user') === null ? 401 : topic === 'open') });
    const gate = createGate({ ratePerSec: 1000, maxStreams: 2 });
    try {
      const before = await log.topic('open').append({ data: 'before' });
      const id = await log.topic('open').append({ data: 'hello' });
      assert.equal((await log.response(new Request('http://x/'), { topic: 'open', gate })).status, 401);
      assert.equal((await log.response(new Request('http://x/', { headers: { 'x-user': 'a' } }), { topic: 'closed', gate })).status, 403);
      assert.equal(gate.open, 0);
      assert.equal(log.connections, 0);
      const ok = await log.response(new Request('http://x/', { headers: { 'x-user': 'a', 'Last-Event-ID': before } }), { topic: 'open', gate });
      assert.equal(ok.status, 200);
      const reader = ok.body.getReader();
      let text = '';
      const deadline = setTimeout(() => reader.cancel(), 5000); // a stream that never says hello fails the test
      while (!text.includes('data: hello')) {
        const { value, done } = await reader.read();
        assert.ok(!done, `the stream ended before its replay: ${JSON.stringify(text)}`);
        text += new TextDecoder().decode(value);
      }
      clearTimeout(deadline);
      assert.match(text, new RegExp(`id: ${id}\ndata: hello\n\n$`));
      await reader.cancel();
      assert.equal(gate.open, 0);
    } finally {
      await log.close();
    }
  });
});

describe('topic names', () => {
  test('a bad topic is a TypeError or RangeError from topic(), and a 400 naming the problem from serve() and response()', async () => {
    const log = createEventLog({ heartbeatMs: 0 });
    assert.throws(() => log.topic(42), (e) => e instanceof TypeError && /a topic must be a string, not/.test(e.message));
    assert.throws(() => log.topic(''), RangeError);
    assert.throws(() => log.topic('a\nb'), RangeError);
    assert.throws(() => log.topic('x'.repeat(257)), RangeError);
    const s = await listen((req, res) => log.serve(req, res, { topic: 'x'.repeat(300) }));
    try {
      const res = await fetch(s.url);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /a topic must be 1 to 256 characters/);
      const web = await log.response(new Request('http://x/'), { topic: 7 });
      assert.equal(web.status, 400);
      assert.match(await web.text(), /a topic must be a string/);
      assert.equal(log.connections, 0);
    } finally {
      await s.close();
      await log.close();
    }
  });

  test('a store with no topics: a topic is refused, with an error that says what the store lacks', async () => {
    const errors = [];
    const bare = server.createMemoryStore();
    const store = { kind: 'custom', status: 'ready', head: null, append: (e) => bare.append(e), read: (a, l) => bare.read(a, l), attach: (l) => bare.attach(l) };
    const log = createEventLog({ store, heartbeatMs: 0, unavailableRetryMs: 100, onerror: (e) => errors.push(e) });
    try {
      await assert.rejects(log.topic('t').append({ data: 'x' }), (e) => e instanceof TypeError && /has no topics/.test(e.message));
      const refused = await log.response(new Request('http://x/'), { topic: 't' });
      assert.match(await refused.text(), /^retry: \d+\n/);
      assert.equal(errors.length, 1);
      assert.match(errors[0].message, /has no topics/);
    } finally {
      await log.close();
    }
  });
});

test('drain and metrics span every topic: each connection ended once, the per-topic gauge counts each topic', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const conns = [];
  const ended = [];
  for (const name of ['a', 'a', 'b', null]) {
    const conn = await (name === null ? log.connect(null) : log.topic(name).connect(null));
    conn.start(() => {}, () => ended.push(name));
    conns.push(conn);
  }
  assert.equal(log.connections, 4);
  const text = log.metrics({ node: 'n1' });
  assert.match(text, /^managed_eventsource_topic_connections\{node="n1",topic="a"\} 2$/m);
  assert.match(text, /^managed_eventsource_topic_connections\{node="n1",topic="b"\} 1$/m);
  assert.match(text, /^managed_eventsource_connections\{node="n1"\} 4$/m);
  assert.equal(await log.drain({ overMs: 20 }), 4);
  assert.deepEqual(ended.sort(), ['a', 'a', 'b', null].sort());
  assert.equal(log.connections, 0);
  await log.close();
});

describe('redis store topics', () => {
  test("a topic's stream and floor are hash-tagged by the topic; its feed has a connection of its own, closed when the topic is let go", async () => {
    const { createClient } = await import('redis');
    const admin = createClient({ url: fixture.redis.url });
    await admin.connect();
    const key = fixture.key();
    const store = await server.createRedisStore({ url: fixture.redis.url, key, maxEvents: 2 });
    const log = createEventLog({ store, heartbeatMs: 0, topicIdleMs: 50 });
    const clients = async () => (await admin.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length;
    try {
      const before = await clients();
      const room = log.topic('room:{7}%');
      for (let i = 0; i < 3; i++) await room.append({ data: String(i) });
      for (let i = 0; i < 3; i++) await log.append({ data: String(i) });
      // Appending to a topic no one here follows opens no feed: no connection more, no topic open.
      assert.equal(await clients(), before);
      assert.equal(log.stats.topics, 0);
      const keys = (await admin.sendCommand(['KEYS', `${key}*`])).concat(await admin.sendCommand(['KEYS', `{${key}}*`])).sort();
      const tagged = `${key}:{room:%7B7%7D%25}`;
      assert.deepEqual(keys, [key, tagged, `${tagged}:floor`, `${tagged}:epoch`, `{${key}}:floor`, `{${key}}:epoch`].sort());
      // Each stream keeps its own bounds and ids: two of three held, and its floor is its own.
      assert.equal(await admin.sendCommand(['XLEN', tagged]), 2);
      const conn = await room.connect(null);
      conn.start(() => {});
      assert.equal(await clients(), before + 1, 'a client opens the topic: its feed has a connection of its own');
      conn.close();
      await room.append({ data: 'after the client left' }); // an append does not keep it open
      const deadline = Date.now() + 5000;
      while ((await clients()) !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await clients(), before, 'the topic feed connection closed once the topic was let go');
      assert.equal(log.stats.topics, 0);
    } finally {
      await log.close();
      await admin.close();
    }
  });
});

describe("topics' edges", { timeout: 20_000 }, () => {
  test('a drain that begins while a client is authorized (or its topic opens) turns it away softly, not left out of the drain', async () => {
    const waiting = [];
    const log = createEventLog({ heartbeatMs: 0, authorize: () => new Promise((r) => waiting.push(r)) });
    const s = await listen((req, res) => log.serve(req, res, { topic: 'slow' }));
    try {
      const node = fetch(s.url);
      const web = log.response(new Request('http://x/'), { topic: 'slow' });
      await until(() => waiting.length === 2);
      const drained = log.drain({ overMs: 1000 });
      for (const admit of waiting) admit(true);
      const res = await node;
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^retry: \d+\n\n: come back in/);
      assert.match(await (await web).text(), /^retry: \d+\n/);
      assert.equal(log.connections, 0);
      assert.equal(await drained, 0);
    } finally {
      await s.close();
      await log.close();
    }
  });

  test('close() while a Redis topic opens leaves no connection behind', async () => {
    const { createClient } = await import('redis');
    const admin = createClient({ url: fixture.redis.url });
    await admin.connect();
    const clients = async () => (await admin.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length;
    try {
      const before = await clients();
      for (let round = 0; round < 5; round++) {
        const log = createEventLog({ store: await STORES.redis(), heartbeatMs: 0 });
        const opening = log.topic(`t${round}`).connect(null).catch((e) => e);
        await new Promise((r) => setTimeout(r, round)); // at several points of the opening
        await log.close();
        await opening;
      }
      const deadline = Date.now() + 5000;
      while ((await clients()) !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await clients(), before);
    } finally {
      await admin.close();
    }
  });

  test('appends to Redis topics not open here hold no memory: the store made for each is let go (it held about 3.6 kB each)', async () => {
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
    const log = createEventLog({ store: await STORES.redis(), heartbeatMs: 0 });
    try {
      for (let i = 0; i < 200; i++) await log.topic(`warm:${i}`).append({ data: 'x' });
      const before = heap();
      const N = 5000;
      for (let i = 0; i < N; i++) await log.topic(`user:${i}`).append({ data: 'x' });
      const perAppend = (heap() - before) / N;
      console.log(`[figure] heap kept per append to a Redis topic not open here: ${Math.round(perAppend)} bytes`);
      assert.ok(perAppend < 500, `${Math.round(perAppend)} bytes kept per append`);
      assert.equal(log.stats.topics, 0);
    } finally {
      await log.close();
    }
  });

  test('an append to a topic not open, while Redis is unavailable, resolves to null as any append does', async () => {
    const store = await server.createRedisStore({ url: 'redis://127.0.0.1:9', clientOptions: { socket: { connectTimeout: 200 } }, reconnect: { baseMs: 1000, maxMs: 1000 } });
    const log = createEventLog({ store, heartbeatMs: 0 });
    try {
      assert.equal(log.status, 'unavailable');
      assert.equal(await log.topic('offline').append({ data: 'x' }), null);
      assert.equal(await log.append({ data: 'x' }), null);
    } finally {
      await log.close();
    }
  });

  test('names Redis would store alike are refused: a lone surrogate is a RangeError and a 400', async () => {
    const log = createEventLog({ heartbeatMs: 0 });
    try {
      for (const name of ['user:\ud800', 'user:\udfff', '\udc00x']) assert.throws(() => log.topic(name), (e) => e instanceof RangeError && /well-formed/.test(e.message));
      assert.equal(log.topic('user:\ufffd').name, 'user:\ufffd');
      assert.equal((await log.response(new Request('http://x/'), { topic: 'a\ud800' })).status, 400);
    } finally {
      await log.close();
    }
  });

  test('maxTopics: a client of a topic past it is turned away softly until one is let go', async () => {
    const log = createEventLog({ heartbeatMs: 0, maxTopics: 2, topicIdleMs: 30, unavailableRetryMs: 10 });
    try {
      const held = [];
      for (const name of ['a', 'b']) {
        const conn = await log.topic(name).connect(null);
        conn.start(() => {});
        held.push(conn);
      }
      const refused = await log.response(new Request('http://x/'), { topic: 'c' });
      assert.match(await refused.text(), /^retry: \d+\n/);
      await assert.rejects(log.topic('c').connect(null), (e) => e.code === 'STORE_UNAVAILABLE' && /maxTopics/.test(e.message));
      // An append to a topic not open needs no room.
      assert.match(await log.topic('c').append({ data: 'x' }), /_/);
      held[0].close();
      await until(() => log.stats.topics === 1);
      const ok = await log.topic('c').connect(null);
      assert.equal(ok.open, true);
    } finally {
      await log.close();
    }
  });
});
