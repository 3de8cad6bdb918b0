// The event log's topics when things fail (issue 52's second review), over the memory store (wrapped to fail
// on demand) and a real redis-server on a free loopback port: a topic whose store cannot deliver its live
// events says so (its status, onerror naming it, storeErrors, the topics_unavailable gauge); an append that
// the store refused on a topic not open here owes a gap marker, as one on an open topic does; gap markers are
// counted as the reload events they are; connect() during a drain is refused; a Web request aborted while it
// is authorized gives its gate place back; an append while its topic's opening fails still reaches the
// store; a topic's name is counted in characters, and no control character passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('topic-faults');
const { createEventLog, createMemoryStore, createRedisStore, createGate } = server;

/** Waits for `predicate`, checking as the event loop turns; fails naming `what` after `ms`. */
async function until(predicate, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** [event, data] of each frame in `text`. */
const frames = (text) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const field = (name) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      return [field('event') ?? 'message', field('data') ?? ''];
    });

/** A memory store whose appends (every topic's, gap markers included) are refused as unavailable while
 * `down` is set, and whose topics' openings fail while `failOpens` is above 0 (each failure takes one). */
function failingStore() {
  const inner = createMemoryStore();
  const control = { down: false, failOpens: 0, gapsStored: 0 };
  const refuse = () => Promise.reject(Object.assign(new Error('the store is down (on purpose)'), { code: 'STORE_UNAVAILABLE' }));
  const wrap = (store) =>
    new Proxy(store, {
      get(target, key) {
        if (key === 'append') return (entry) => (control.down ? refuse() : (entry.gap && control.gapsStored++, target.append(entry)));
        if (key === 'topic') return async (name) => wrap(await target.topic(name));
        if (key === 'open' && target !== inner)
          return async () => {
            await new Promise((r) => setTimeout(r, 20)); // an opening that takes a while
            if (control.failOpens > 0 && control.failOpens--) throw Object.assign(new Error('could not open (on purpose)'), { code: 'STORE_UNAVAILABLE' });
            return target.open?.();
          };
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return { store: wrap(inner), control };
}

test("redis: a topic whose feed Redis refuses says so (its status, onerror naming it, the gauge), the log's own stream unaffected; once it may, what it missed is delivered", async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const user = `topicnoread${process.pid}`;
  const key = fixture.key();
  // The log's own stream may be read blocking; a topic's (<key>:{<name>}) may not.
  await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>secret', '&*', '+@all', `~${key}`, `~{${key}}:*`, `(+@all -xread ~${key}:{*)`]);
  const errors = [];
  const log = createEventLog({
    store: await createRedisStore({ url: fixture.redis.url.replace('redis://', `redis://${user}:secret@`), key, blockMs: 300, commandTimeoutMs: 500, reconnect: { baseMs: 50, maxMs: 200 } }),
    heartbeatMs: 0,
    onerror: (e) => errors.push(e),
  });
  const seen = [];
  try {
    const conn = await log.topic('room').connect(null);
    conn.start((text) => seen.push(...frames(text).filter(([event]) => event === 'message')));
    await until(() => log.topic('room').status === 'unavailable', "the topic's status");
    assert.equal(log.status, 'ready', "the log's own stream still delivers");
    // Told once the log's own feed would have failed too were Redis down (blockMs + commandTimeoutMs).
    await until(() => errors.length === 1, 'onerror told');
    assert.match(errors[0].message, /topic "room" is unavailable/);
    assert.match(errors[0].message, /XREAD/);
    assert.equal(errors[0].code, 'STORE_UNAVAILABLE');
    assert.equal(log.stats.storeErrors, 1);
    assert.match(log.metrics(), /^managed_eventsource_topics_unavailable 1$/m);
    assert.match(await log.topic('room').append({ data: 'stored meanwhile' }), /_/);
    await admin.sendCommand(['ACL', 'SETUSER', user, '~*']); // every key, XREAD included
    await until(() => log.topic('room').status === 'ready', 'ready again');
    await until(() => seen.length === 1, 'the event appended meanwhile, delivered live');
    assert.deepEqual(seen, [['message', 'stored meanwhile']]);
    assert.match(log.metrics(), /^managed_eventsource_topics_unavailable 0$/m);
  } finally {
    await log.close();
    await admin.sendCommand(['ACL', 'DELUSER', user]).catch(() => {});
    await admin.close();
  }
});

test("redis: a topic whose feed's connection Redis refuses (maxclients) says so; it delivers once the connection is made", async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const errors = [];
  const log = createEventLog({
    store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), blockMs: 300, commandTimeoutMs: 500, reconnect: { baseMs: 50, maxMs: 200 } }),
    heartbeatMs: 0,
    onerror: (e) => errors.push(e),
  });
  const reply = await admin.sendCommand(['CONFIG', 'GET', 'maxclients']);
  const before = String(Array.isArray(reply) ? reply[1] : reply.maxclients);
  const seen = [];
  try {
    await until(() => log.status === 'ready', 'the store');
    // No room for one more connection: the topic's feed is refused.
    const clients = (await admin.sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length;
    await admin.sendCommand(['CONFIG', 'SET', 'maxclients', String(clients)]);
    const conn = await log.topic('full').connect(null);
    conn.start((text) => seen.push(...frames(text).filter(([event]) => event === 'message')));
    await until(() => log.topic('full').status === 'unavailable', "the topic's status");
    await until(() => errors.length === 1, 'onerror told');
    assert.match(errors[0]?.message ?? '', /topic "full" is unavailable: .*the feed's connection could not be made/);
    assert.equal(log.status, 'ready');
    await admin.sendCommand(['CONFIG', 'SET', 'maxclients', before]);
    await until(() => log.topic('full').status === 'ready', 'ready once connected', 10_000);
    await log.topic('full').append({ data: 'live' });
    await until(() => seen.length === 1, 'a live event');
  } finally {
    await admin.sendCommand(['CONFIG', 'SET', 'maxclients', before]).catch(() => {});
    await log.close();
    await admin.close();
  }
});

test('an append the store refused on a topic not open here owes a gap marker, written once the store takes it; each reload a client is sent is counted', async () => {
  const { store, control } = failingStore();
  const log = createEventLog({ store, heartbeatMs: 0 });
  try {
    const before = await log.topic('offline').append({ data: 'before' });
    control.down = true;
    assert.equal(await log.topic('offline').append({ data: 'lost' }), null, 'refused: null, as documented');
    control.down = false;
    // The marker is tried again once a second until the store takes it.
    const resumed = [];
    await until(() => control.gapsStored === 1, 'the gap marker stored', 3000);
    const after = await log.topic('offline').append({ data: 'after' });
    const conn = await log.topic('offline').connect(before);
    conn.start((text) => resumed.push(...frames(text)));
    assert.deepEqual(resumed, [['reload', 'gap'], ['message', 'after']], 'the client that crosses it reloads');
    assert.equal(log.stats.reloads, 1, 'the reload it was sent is counted');
    assert.match(log.metrics(), /^managed_eventsource_reload_events_total 1$/m);
    assert.ok(after);
    // Live: an open topic's refused append goes out with no id, and its marker reaches the client live.
    control.down = true;
    assert.equal(await log.topic('offline').append({ data: 'no id' }), null);
    control.down = false;
    await until(() => resumed.length === 4, 'the live gap marker', 3000);
    assert.deepEqual(resumed.slice(2), [['message', 'no id'], ['reload', 'gap']]);
    assert.equal(log.stats.reloads, 2);
  } finally {
    await log.close();
  }
});

test('connect() during a drain is refused (code DRAINING, with when to come back), so that the drain ends every connection on the node', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const held = await log.connect(null);
  held.start(() => {});
  const drained = log.drain({ overMs: 300 });
  const timeout = setTimeout(() => assert.fail('still refused 2 s after a 300 ms drain'), 2000);
  timeout.unref();
  await assert.rejects(log.connect(null), (e) => e.code === 'DRAINING' && e.retryAfterMs >= 250 && /draining/.test(e.message));
  await assert.rejects(log.topic('t').connect(null), (e) => e.code === 'DRAINING');
  assert.equal(await drained, 1);
  assert.equal(log.connections, 0, 'the drain ended every connection on the node');
  // Refused until the window is over, then admitted.
  let after = null;
  while (after === null) {
    after = await log.connect(null).catch((e) => (assert.equal(e.code, 'DRAINING'), null));
    if (after === null) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(after.open, true);
  clearTimeout(timeout);
  await log.close();
});

test("a Web request aborted while authorize has not answered gives its gate place back at once, and opens nothing", async () => {
  const gate = createGate({ ratePerSec: 1000, maxStreams: 1 });
  let answer;
  const log = createEventLog({ heartbeatMs: 0, authorize: () => new Promise((r) => (answer = r)) });
  try {
    const aborted = new AbortController();
    const first = log.response(new Request('http://x/', { signal: aborted.signal }), { gate });
    await until(() => answer, 'the hook asked');
    aborted.abort();
    // The one place is free: the next request reaches the hook (it was turned away before).
    answer = null;
    const second = log.response(new Request('http://x/'), { gate });
    await until(() => answer, 'the second request authorized', 1000);
    answer(true);
    assert.equal((await second).status, 200);
    assert.equal(log.connections, 1, 'the aborted request opened nothing'); // its hook never answers
    void first;
  } finally {
    await log.close();
  }
});

test("an append made while its topic's opening fails still reaches the store (resolves to an id)", async () => {
  const { store, control } = failingStore();
  control.failOpens = 1;
  const log = createEventLog({ store, heartbeatMs: 0 });
  try {
    const opening = log.topic('t').connect(null).then(() => 'opened', (e) => e.code);
    const id = await log.topic('t').append({ data: 'x' });
    assert.equal(await opening, 'STORE_UNAVAILABLE');
    assert.match(id, /^\d+-\d+_[0-9a-z]{7}$/);
  } finally {
    await log.close();
  }
});

test("a topic's name is 1 to 256 characters counted as characters (an emoji is one), and no C0, DEL or C1 control passes", async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  try {
    assert.equal(log.topic('\u{1F600}'.repeat(256)).name.length, 512);
    for (const name of ['\u{1F600}'.repeat(257), 'a'.repeat(257), 'x'.repeat(100_000), 'a\u0085b', 'a\u009fb', 'a\u007fb', 'a\nb', '']) {
      assert.throws(() => log.topic(name), RangeError, JSON.stringify(name.slice(0, 20)));
    }
  } finally {
    await log.close();
  }
});

test("redis: a topic's keys expire once its events are past the age bound with no append since: each key the store writes has an expiry (its generation's a day later)", async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const key = fixture.key();
  const maxAgeMs = 200;
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key, maxAgeMs }), heartbeatMs: 0, recent: 0 });
  try {
    const first = await log.topic('once').append({ data: 'a' });
    await log.append({ data: 'the log’s own' });
    await new Promise((r) => setTimeout(r, maxAgeMs + 50)); // past the age bound: a read trims, and writes the floor
    await log.topic('once').append({ data: 'b' });
    const resumed = [];
    (await log.topic('once').connect(first)).start((text) => resumed.push(...frames(text)));
    assert.deepEqual(resumed, [['message', 'b']], "the read trimmed 'a' and wrote the floor, at the client's id");
    const keys = [...(await admin.sendCommand(['KEYS', `${key}*`])), ...(await admin.sendCommand(['KEYS', `{${key}}*`]))].sort();
    assert.deepEqual(keys, [key, `${key}:{once}`, `${key}:{once}:epoch`, `${key}:{once}:floor`, `{${key}}:epoch`].sort());
    const DAY = 86_400_000;
    for (const k of keys) {
      const ttl = Number(await admin.sendCommand(['PTTL', k]));
      // A generation outlives its stream by a day: while it is there, a stream gone expired, not lost.
      const [least, most] = k.endsWith(':epoch') ? [maxAgeMs + DAY, maxAgeMs + 70_000 + DAY] : [maxAgeMs, maxAgeMs + 70_000];
      assert.ok(ttl > least && ttl <= most, `${k}: expires in ${ttl} ms`);
    }
  } finally {
    await log.close();
    await admin.close();
  }
});

test("redis: a feed's connection dropped and made again is not told as an error; Redis restarted with 20 topics open is told once, by the log's own status", async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const errors = [];
  const statuses = [];
  const log = createEventLog({
    store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), commandTimeoutMs: 500, reconnect: { baseMs: 50, maxMs: 200 } }),
    heartbeatMs: 0,
    onerror: (e) => errors.push(e.message),
    onstatus: (s) => statuses.push(s),
  });
  const feeds = () => feedIds(admin);
  try {
    await until(() => log.status === 'ready', 'the store');
    for (let i = 0; i < 20; i++) (await log.topic(`t${i}`).connect(null)).start(() => {});
    let ids = [];
    const end = Date.now() + 5000;
    while ((ids = await feeds()).length < 21 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ids.length, 21, 'a feed for the log and each topic');
    // Only the feeds' connections drop: each comes back; nothing to tell.
    for (const id of ids) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    while ((await feeds()).length < 21) await new Promise((r) => setTimeout(r, 20));
    await log.topic('t0').append({ data: 'after the feeds came back' });
    assert.deepEqual([errors, statuses], [[], []], 'no error and no status for a drop the feeds came back from');
    // Every connection drops (Redis restarted, say): told once, by the log's own status.
    await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
    await until(() => statuses.includes('unavailable'), 'the log unavailable');
    await until(() => log.status === 'ready' && [...Array(20).keys()].every((i) => log.topic(`t${i}`).status === 'ready'), 'every topic ready again', 10_000);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(log.stats.storeErrors, 1);
  } finally {
    await log.close();
    await admin.close();
  }
});

/** The ids of the Redis connections blocked in XREAD now: the logs' feeds. */
const feedIds = async (admin) => (await admin.sendCommand(['CLIENT', 'LIST'])).split('\n').filter((l) => / cmd=xread/.test(l)).map((l) => l.match(/^id=(\d+)/)[1]);

/** Redis: a log (maxAgeMs 300) whose topic `name` had one event, 'A', delivered live to a client of it, and
 * has been quiet past its age bound since; `seen` is what the client received, `keys` the topic's. */
async function quietTopic(name) {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const key = fixture.key();
  const maxAgeMs = 300;
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key, maxAgeMs, reconnect: { baseMs: 50, maxMs: 200 } }), heartbeatMs: 0 });
  const close = async () => (await log.close(), await admin.close());
  const seen = [];
  try {
    (await log.topic(name).connect(null)).start((text) => seen.push(...frames(text)));
    await log.topic(name).append({ data: 'A' });
    await until(() => seen.length === 1, 'A live');
    await new Promise((r) => setTimeout(r, maxAgeMs + 50));
  } catch (error) {
    await close();
    throw error;
  }
  const keys = { stream: `${key}:{${name}}`, floor: `${key}:{${name}}:floor`, epoch: `${key}:{${name}}:epoch` };
  return { admin, log, seen, keys, close };
}

test("redis: an open topic quiet past its age bound whose keys expired carries on after its feed reconnects: no reload, no gap marker, its next event live", async () => {
  const { admin, log, seen, keys, close } = await quietTopic('quiet');
  try {
    // What the keys' expiry does after maxAgeMs + 70 s (the generation stays a day longer), now; then the
    // feed's connection drops and comes back.
    await admin.sendCommand(['DEL', keys.stream, keys.floor]);
    for (const id of await feedIds(admin)) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    const end = Date.now() + 5000;
    while ((await feedIds(admin)).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200)); // the feed's check on coming back
    await log.topic('quiet').append({ data: 'B' });
    await until(() => seen.length >= 2, 'B live');
    assert.deepEqual(seen, [['message', 'A'], ['message', 'B']]);
    assert.equal(Number(await admin.sendCommand(['XLEN', keys.stream])), 1, 'no gap marker in the stream');
  } finally {
    await close();
  }
});

test('a gap marker an open topic owes is written after the topic is let go, by the log', async () => {
  const { store, control } = failingStore();
  const log = createEventLog({ store, heartbeatMs: 0, topicIdleMs: 30 });
  try {
    const conn = await log.topic('brief').connect(null);
    conn.start(() => {});
    conn.close();
    control.down = true;
    assert.equal(await log.topic('brief').append({ data: 'lost' }), null);
    await until(() => log.stats.topics === 0, 'the topic let go');
    control.down = false;
    await until(() => control.gapsStored === 1, 'the gap marker stored', 3000);
  } finally {
    await log.close();
  }
});

test('a connect() handle the log ended (a drain, close()) before its start gets its end called at start', async () => {
  const log = createEventLog({ heartbeatMs: 0 });
  const early = await log.connect(null);
  assert.equal(await log.drain({ overMs: 20 }), 1);
  let ended = false;
  const written = [];
  early.start((text) => written.push(text), () => (ended = true));
  assert.equal(ended, true);
  assert.deepEqual(written, []);
  await log.close();
});

test('redis: a maxAgeMs reaching back before 1970 (a big number meant as for ever) trims nothing and fails nothing', async () => {
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), maxAgeMs: Number.MAX_SAFE_INTEGER }), heartbeatMs: 0 });
  try {
    const first = await log.append({ data: 'a' });
    assert.match(first, /_/);
    await new Promise((r) => setTimeout(r, 1100)); // the next append trims by age (once a second)
    assert.match(await log.append({ data: 'b' }), /_/);
    const replay = [];
    (await log.connect(first)).start((text) => replay.push(...frames(text)));
    assert.deepEqual(replay, [['message', 'b']]);
  } finally {
    await log.close();
  }
});

test('a Web request already aborted when response() is called gives its gate place back', async () => {
  const gate = createGate({ ratePerSec: 1000, maxStreams: 1 });
  for (const authorize of [undefined, async () => true]) {
    const log = createEventLog({ heartbeatMs: 0, authorize });
    try {
      const aborted = new AbortController();
      aborted.abort();
      await log.response(new Request('http://x/', { signal: aborted.signal }), { gate });
      const next = await log.response(new Request('http://x/'), { gate });
      const reader = next.body.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^event: heartbeat\n/, `the one place is free, not a refusal: ${JSON.stringify(first)}`);
      await reader.cancel();
    } finally {
      await log.close();
    }
  }
});

test('redis: a quiet topic past its age bound whose data Redis lost (its generation with it) is told to reload when its feed comes back: events appended meanwhile were lost', async () => {
  const { admin, seen, keys, close } = await quietTopic('lost');
  try {
    // Redis loses the topic's data, generation and all (a restart without persistence, a failover to a
    // replica behind), while the feed's connection is down.
    await admin.sendCommand(['DEL', keys.stream, keys.floor, keys.epoch]);
    for (const id of await feedIds(admin)) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    await until(() => seen.length === 2, 'the reload', 5000);
    assert.deepEqual(seen, [['message', 'A'], ['reload', 'gap']]);
  } finally {
    await close();
  }
});

test('redis: a silent Redis (paused) with 10 topics open is told once, by the log\'s own status, not by each topic', async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  const errors = [];
  const log = createEventLog({
    store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), blockMs: 300, commandTimeoutMs: 500, reconnect: { baseMs: 50, maxMs: 200 } }),
    heartbeatMs: 0,
    onerror: (e) => errors.push(e.message),
  });
  try {
    await until(() => log.status === 'ready', 'the store');
    for (let i = 0; i < 10; i++) (await log.topic(`p${i}`).connect(null)).start(() => {});
    await new Promise((r) => setTimeout(r, 100)); // every feed blocking
    await admin.sendCommand(['CLIENT', 'PAUSE', '2500', 'ALL']);
    await until(() => log.status === 'unavailable', 'the log unavailable', 3000);
    await until(() => log.status === 'ready' && [...Array(10).keys()].every((i) => log.topic(`p${i}`).status === 'ready'), 'every feed back', 10_000);
    await new Promise((r) => setTimeout(r, 1000)); // a topic's report would have come by now
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.match(errors[0], /XREAD/);
  } finally {
    await log.close();
    await admin.close();
  }
});

test("a connect() handle's end that throws when start finds it ended goes to onerror, as the log's own ends do", async () => {
  const errors = [];
  const log = createEventLog({ heartbeatMs: 0, onerror: (e) => errors.push(e.message) });
  const early = await log.connect(null);
  await log.close();
  assert.doesNotThrow(() => early.start(() => {}, () => { throw new Error('boom'); }));
  assert.deepEqual(errors, ['boom']);
});

test('redis: a maxAgeMs past what Redis can expire (1e19) keeps its keys for ever and fails no append', async () => {
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key: fixture.key(), maxAgeMs: 1e19 }), heartbeatMs: 0 });
  try {
    assert.match(await log.append({ data: 'a' }), /_/);
  } finally {
    await log.close();
  }
});
