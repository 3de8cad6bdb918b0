// The event log on the Redis store when the server is too busy to reach Redis in time (issue 61): thousands
// of appends at once while every turn of the event loop does 250 ms of synchronous work (what a large
// fan-out does to a loop), then the same with Redis paused (SIGSTOP). Against a real redis-server on a free
// loopback port of this file's own. What must hold: every append resolves with an id, in the order the
// appends were made, or rejects to its publisher with a code that says whether Redis may have stored it;
// nothing goes out live without an id while the store is 'ready'; the Redis Stream, a live client and a
// client that resumes agree, event for event; and an append past the backpressure bound is refused at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bare, redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('load');
const { createEventLog, createRedisStore, compareIds } = server;

const BURST = 3000;
const TURN_MS = 250;
const PAYLOAD = 'x'.repeat(90); // about 100 bytes an event, as in the reproduction

/** What a connection wrote, as { id, event, data } (id null when the frame had none; comments dropped). */
function frames(text) {
  const out = [];
  for (const block of text.split('\n\n').slice(0, -1)) {
    const lines = block.split('\n').filter((l) => l && !l.startsWith(':'));
    if (!lines.length) continue;
    const field = (name) => lines.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
    out.push({ id: field('id')[0] ?? null, event: field('event')[0] ?? 'message', data: field('data').join('\n') });
  }
  return out;
}

/** A connection's frames, read as they come (a frame may be split across writes only at '\n\n'). */
async function attach(log, lastEventId) {
  const conn = await log.connect(lastEventId);
  let text = '';
  conn.start((t) => (text += t));
  return { close: () => conn.close(), frames: () => frames(text) };
}

const until = async (check, what, ms) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Every turn of the event loop does `ms` of synchronous work until stop() is called. */
function busyLoop(ms) {
  let on = true;
  const spin = () => {
    if (!on) return;
    const end = Date.now() + ms;
    while (Date.now() < end);
    setImmediate(spin);
  };
  setImmediate(spin);
  return { stop: () => (on = false) };
}

/** `count` appends made at once, numbered from `from`: each settles to { n, id } or { n, code, ms }. */
function burst(log, from, count, payload = PAYLOAD) {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const t0 = Date.now();
    return log.append({ data: `${n} ${payload}` }).then(
      (id) => ({ n, id }),
      (error) => ({ n, code: error?.code ?? String(error), ms: Date.now() - t0 }),
    );
  });
}

/** The Redis Stream's entries as { id, data }, read on a connection of the test's own. */
async function streamOf(key) {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  try {
    const entries = await admin.sendCommand(['XRANGE', key, '-', '+']);
    // Each id as the log hands it out: with the generation its entry carries (field p).
    const field = (fields, name) => fields.find((f, i) => i % 2 === 0 && f === name) && fields[fields.findIndex((f, i) => i % 2 === 0 && f === name) + 1];
    return entries.map(([id, fields]) => ({ id: field(fields, 'p') ? `${id}_${field(fields, 'p')}` : id, data: field(fields, 'd') ?? null, gap: field(fields, 'g') !== undefined }));
  } finally {
    await admin.close();
  }
}

/**
 * What every outcome must agree with: no append resolved null (sent live with no id); each rejection names a
 * code the reference documents; the ids came in the order the appends were made; the stream holds every
 * resolved append and none of those refused as never sent; the live client and a client resuming from
 * `first` were each sent exactly the stream's entries after `first`, in order, once, all with ids.
 */
async function agree({ key, first, outcomes, live, log }) {
  const nulls = outcomes.filter((o) => o.id === null);
  assert.equal(nulls.length, 0, `${nulls.length} appends resolved null: sent live with no id while the store was ready`);
  const codes = new Set(outcomes.filter((o) => o.code).map((o) => o.code));
  for (const code of codes) assert.ok(['STORE_BUSY', 'STORE_NOT_SENT', 'STORE_TIMEOUT'].includes(code), `an append rejected with ${code}`);
  const stored = outcomes.filter((o) => o.id);
  for (let i = 1; i < stored.length; i++) {
    assert.ok(compareIds(bare(stored[i - 1].id), bare(stored[i].id)) < 0, `append ${stored[i].n} got ${stored[i].id}, not above append ${stored[i - 1].n}'s ${stored[i - 1].id}`);
  }
  const stream = (await streamOf(key)).filter((e) => compareIds(bare(e.id), bare(first)) > 0);
  assert.equal(stream.filter((e) => e.gap).length, 0, 'no gap marker: the store never went unavailable');
  const inStream = new Map(stream.map((e) => [Number(e.data.split(' ')[0]), e.id]));
  for (const o of stored) assert.equal(inStream.get(o.n), o.id, `append ${o.n} resolved ${o.id}; the stream has ${inStream.get(o.n)}`);
  for (const o of outcomes) {
    if (o.code === 'STORE_BUSY' || o.code === 'STORE_NOT_SENT') assert.ok(!inStream.has(o.n), `append ${o.n} was refused with ${o.code} (never sent), yet the stream holds it`);
  }
  const expected = stream.map((e) => `${e.id} ${e.data}`);
  const last = stream.at(-1)?.id;
  await until(() => live.frames().at(-1)?.id === last, `the live client reaches the stream's last entry ${last}`, 20_000);
  const seen = live.frames();
  assert.equal(seen.filter((f) => f.id === null).length, 0, 'the live client was sent events with no id');
  assert.deepEqual(seen.slice(1).map((f) => `${f.id} ${f.data}`), expected, 'the live client was sent exactly the stream after the first event, in order, once');
  assert.equal(seen[0].id, first);
  const resumed = await attach(log, first);
  try {
    await until(() => resumed.frames().at(-1)?.id === last, 'the resuming client reaches the last entry', 20_000);
    assert.deepEqual(resumed.frames().map((f) => `${f.id} ${f.event === 'message' ? f.data : f.event}`), expected, 'a client resuming from the first id is sent exactly the stream, no reload');
  } finally {
    resumed.close();
  }
  return { stored: stored.length, stream: stream.length, codes: Object.fromEntries([...codes].map((c) => [c, outcomes.filter((o) => o.code === c).length])) };
}

/**
 * A log on a fresh Redis store (`storeOptions` beside the fixture's url and key), a live client attached, a
 * first event appended, and then every turn of the event loop doing TURN_MS of work while `body` runs;
 * all of it stopped and closed after, however `body` ends.
 */
async function underLoad(storeOptions, body) {
  const key = fixture.key();
  const statuses = [];
  const store = await createRedisStore({ url: fixture.redis.url, key, ...storeOptions });
  const log = createEventLog({ store, heartbeatMs: 0, onstatus: (s) => statuses.push(s) });
  const live = await attach(log, '');
  let loop = null;
  try {
    const first = await log.append({ data: `-1 ${PAYLOAD}` });
    loop = busyLoop(TURN_MS);
    return await body({ key, store, log, live, statuses, first, loop });
  } finally {
    loop?.stop();
    live.close();
    await log.close();
  }
}

test(`${BURST} appends at once while each turn of the event loop does ${TURN_MS} ms of work: each gets an id in order or a rejection, the stream and the clients agree, and the appends past the bound are refused at once`, { timeout: 60_000 }, () =>
  underLoad({}, async ({ key, log, live, statuses, first, loop }) => {
    const outcomes = await Promise.all(burst(log, 0, BURST));
    loop.stop();
    const busy = outcomes.filter((o) => o.code === 'STORE_BUSY');
    assert.ok(busy.length >= BURST - log.store.maxPendingAppends, `${busy.length} refused as busy: the bound holds ${log.store.maxPendingAppends}`);
    // Refused before any turn of work ran: a publisher faster than Redis learns it in milliseconds.
    assert.ok(Math.max(...busy.map((o) => o.ms)) < TURN_MS, `a busy refusal took ${Math.max(...busy.map((o) => o.ms))} ms`);
    const figures = await agree({ key, first, outcomes, live, log });
    assert.deepEqual(statuses, [], 'the store stayed ready');
    console.log(`# busy loop: ${JSON.stringify(figures)}`);
  }));

test('the same load with Redis paused (SIGSTOP) midway: appends sent before the pause may be stored, none sent after it is, nothing goes out without an id, and once Redis runs again the stream and the clients agree', { timeout: 60_000 }, () =>
  underLoad({ commandTimeoutMs: 2000 }, async ({ key, log, live, statuses, first, loop }) => {
    let stopped = false;
    try {
      const before = burst(log, 0, BURST / 2);
      // Pause Redis once a few of the first half are answered, while the rest are queued or in flight.
      let answered = 0;
      for (const p of before) p.then((o) => o.id && answered++);
      await until(() => answered >= 50, 'the first answers', 20_000);
      process.kill(fixture.redis.pid, 'SIGSTOP');
      stopped = true;
      const t0 = Date.now();
      const outcomes = await Promise.all([...before, ...burst(log, BURST / 2, BURST / 2)]);
      const settledMs = Date.now() - t0;
      loop.stop();
      process.kill(fixture.redis.pid, 'SIGCONT');
      stopped = false;
      // Every append settled within the deadline (and a turn or two of work), none waited on the pause.
      assert.ok(settledMs < 2000 + 4 * TURN_MS + 1000, `the appends settled ${settledMs} ms after the pause`);
      assert.ok(outcomes.some((o) => o.code === 'STORE_TIMEOUT'), 'appends in flight at the pause time out as "may still"');
      const figures = await agree({ key, first, outcomes, live, log });
      assert.deepEqual(statuses, [], 'the store stayed ready');
      console.log(`# SIGSTOP: ${JSON.stringify(figures)}`);
    } finally {
      if (stopped) process.kill(fixture.redis.pid, 'SIGCONT');
    }
  }));

test('a store that fails an append as unavailable while it still says ready: the event goes out with no id, and every client gets the gap marker after it, as a store outage gives', async () => {
  // A store of a user's own over the memory store: its append fails once, as a store whose client dropped
  // a command behind its back would, and its status never leaves 'ready'.
  const inner = server.createMemoryStore();
  let failNext = false;
  const store = {
    ...inner,
    status: 'ready',
    get head() {
      return inner.head;
    },
    attach: (log) => inner.attach(log),
    read: (id, limit) => inner.read(id, limit),
    append(entry) {
      if (failNext && !entry.gap) {
        failNext = false;
        return Promise.reject(Object.assign(new Error('dropped behind the store'), { code: 'STORE_UNAVAILABLE' }));
      }
      return inner.append(entry);
    },
  };
  const log = createEventLog({ store, heartbeatMs: 0, recent: 0 });
  const live = await attach(log, '');
  try {
    const first = await log.append({ data: 'one' });
    failNext = true;
    assert.equal(await log.append({ data: 'two' }), null);
    await log.append({ data: 'three' });
    await until(() => live.frames().some((f) => f.data === 'three'), 'the live client has the third event', 5000);
    assert.deepEqual(live.frames().map((f) => [f.id === null ? 'no id' : 'id', f.event, f.data]), [
      ['id', 'message', 'one'],
      ['no id', 'message', 'two'],
      ['id', 'reload', 'gap'],
      ['id', 'message', 'three'],
    ]);
    const resumed = await attach(log, first);
    assert.deepEqual(resumed.frames().map((f) => [f.event, f.data]), [['reload', 'gap'], ['message', 'three']], 'a resume across the event is told to reload');
    resumed.close();
  } finally {
    live.close();
    await log.close();
  }
});

test('the same load with the store\'s connections cut (CLIENT KILL) midway: what was never written goes out live with no id and is not in the stream, nothing is sent twice, and every client gets the gap marker', { timeout: 60_000 }, async () => {
  const { createClient } = await import('redis');
  const admin = createClient({ url: fixture.redis.url });
  await admin.connect();
  try {
    await underLoad({ reconnect: { baseMs: 100, maxMs: 200 } }, async ({ key, store, log, live, statuses, first, loop }) => {
      const pending = burst(log, 0, store.maxPendingAppends);
      let answered = 0;
      for (const p of pending) p.then((o) => o.id && answered++);
      await until(() => answered >= 50, 'the first answers', 20_000);
      await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
      const outcomes = await Promise.all(pending);
      loop.stop();
      const unsent = outcomes.filter((o) => o.id === null);
      assert.ok(unsent.length > 0, 'appends still queued when the connection failed were sent live');
      for (const o of outcomes) assert.ok(o.id !== undefined || ['STORE_TIMEOUT', 'STORE_NOT_SENT', 'STORE_BUSY'].includes(o.code), `append ${o.n}: ${o.code}`);
      await until(() => statuses.at(-1) === 'ready', 'the store is back', 10_000);
      const stream = (await streamOf(key)).filter((e) => compareIds(bare(e.id), bare(first)) > 0);
      const held = new Set(stream.filter((e) => !e.gap).map((e) => Number(e.data.split(' ')[0])));
      for (const o of unsent) assert.ok(!held.has(o.n), `append ${o.n} went out live with no id, and the stream holds it too`);
      for (const o of outcomes) if (o.id) assert.ok(held.has(o.n), `append ${o.n} resolved ${o.id} and is not in the stream`);
      assert.ok(stream.some((e) => e.gap), 'the gap marker is in the stream');
      const last = stream.at(-1).id;
      await until(() => live.frames().at(-1)?.id === last, 'the live client reaches the gap marker', 20_000);
      const seen = live.frames().slice(1);
      const withId = seen.filter((f) => f.id !== null);
      assert.deepEqual(withId.map((f) => f.id), stream.map((e) => e.id), 'the live client has every stored event and the marker, in order, once');
      assert.deepEqual(seen.filter((f) => f.id === null).map((f) => f.data), unsent.map((o) => `${o.n} ${PAYLOAD}`), 'and every event sent with no id, in order, once');
      assert.equal(seen.at(-1).event, 'reload', 'the gap marker comes after every event sent with no id');
      const resumed = await attach(log, first);
      try {
        await until(() => resumed.frames().at(-1)?.id === last, 'the resume reaches the marker', 20_000);
        assert.equal(resumed.frames().at(-1).event, 'reload', 'a resume across the events sent with no id is told to reload');
      } finally {
        resumed.close();
      }
      console.log(`# CLIENT KILL: ${JSON.stringify({ stored: outcomes.filter((o) => o.id).length, live: unsent.length, timedOut: outcomes.filter((o) => o.code === 'STORE_TIMEOUT').length, stream: stream.length })}`);
    });
  } finally {
    await admin.close();
  }
});

test("with clientOptions.pingInterval, node-redis's own PING timing out behind the appends is not an outage: every append gets an id, none goes out live, the store stays ready", { timeout: 60_000 }, () =>
  // 500 events of 1 kB under the busy loop take longer to write than node-redis's 5 s PING timeout.
  underLoad({ commandTimeoutMs: 30_000, clientOptions: { pingInterval: 200 } }, async ({ key, store, log, live, statuses, first, loop }) => {
    const pingErrors = [];
    store.client.on('error', (e) => pingErrors.push(e));
    const outcomes = await Promise.all(burst(log, 0, 500, 'y'.repeat(1000)));
    loop.stop();
    assert.ok(pingErrors.length > 0, "node-redis's PING timed out behind the appends (else this test shows nothing)");
    assert.equal(outcomes.filter((o) => o.id).length, 500, JSON.stringify(outcomes.find((o) => !o.id)));
    await agree({ key, first, outcomes, live, log });
    assert.deepEqual(statuses, [], 'the store stayed ready');
  }));

test("an append node-redis refuses before sending (clientOptions.commandsQueueMaxLength) is refused as never sent, STORE_BUSY", async () => {
  const key = fixture.key();
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key, clientOptions: { commandsQueueMaxLength: 5 } }), heartbeatMs: 0 });
  try {
    const outcomes = await Promise.all(burst(log, 0, 20));
    const refused = outcomes.filter((o) => o.code);
    assert.ok(refused.length > 0, 'the queue of 5 refused some of 20');
    for (const o of refused) assert.equal(o.code, 'STORE_BUSY', `append ${o.n}: ${o.code}`);
    const held = new Set((await streamOf(key)).map((e) => Number(e.data.split(' ')[0])));
    for (const o of refused) assert.ok(!held.has(o.n), `append ${o.n} was refused, yet the stream holds it`);
    for (const o of outcomes) if (o.id) assert.ok(held.has(o.n));
  } finally {
    await log.close();
  }
});
