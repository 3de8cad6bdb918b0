// The log's generations (epochs), over both stores (the memory store and a real redis-server on a free
// loopback port): every id it hands out names the generation that issued it, and an id from another
// generation (another topic, another process's memory store, a Redis that lost its data) gets the reload
// event, never a replay from the wrong place, wherever its time part falls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bare, redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('epoch');
const { STORES } = fixture;
const { createEventLog, createRedisStore } = server;

/** What a connection for `lastEventId` writes at once: [event, data, id] of each frame. */
async function firstFrames(log, lastEventId, topic = null) {
  const conn = await (topic === null ? log.connect(lastEventId) : log.topic(topic).connect(lastEventId));
  let text = '';
  conn.start((t) => (text += t));
  conn.close();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const f = { event: 'message', data: '', id: null };
      for (const line of block.split('\n')) {
        const at = line.indexOf(': ');
        const [name, value] = [line.slice(0, at), line.slice(at + 2)];
        if (name === 'id') f.id = value;
        else if (name === 'event') f.event = value;
        else if (name === 'data') f.data = value;
      }
      return [f.event, f.data, f.id];
    });
}

/** Until the log's feeds (every topic's) have delivered `count` events in all: a Redis store's live feed
 * lags its appends. */
async function fed(log, count) {
  const until = Date.now() + 5000;
  while (log.stats.events < count) {
    if (Date.now() > until) throw new Error(`the feeds delivered ${log.stats.events} of ${count} events`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

for (const kind of ['memory', 'redis']) {
  test(`${kind}: an id names its generation; one from another topic, inside this topic's range, gets the reload event`, async () => {
    const log = createEventLog({ store: await STORES[kind](), heartbeatMs: 0 });
    try {
      // Interleaved in time: topic b's second id falls between topic a's first and last.
      const a = [];
      const b = [];
      for (let i = 0; i < 3; i++) {
        a.push(await log.topic('a').append({ data: `a${i}` }));
        await new Promise((r) => setTimeout(r, 3));
        b.push(await log.topic('b').append({ data: `b${i}` }));
        await new Promise((r) => setTimeout(r, 3));
      }
      // No one follows either topic yet: the appends went to the stores alone, and opening a topic reads them.
      const generationOf = (id) => id.slice(id.indexOf('_') + 1);
      assert.match(a[0], /^\d+-\d+_[0-9a-z]{7}$/);
      assert.equal(new Set(a.map(generationOf)).size, 1, 'one generation for a topic');
      assert.notEqual(generationOf(a[0]), generationOf(b[0]), 'each topic a generation of its own');
      // Its own topic's id: a position, the events after it.
      assert.deepEqual(await firstFrames(log, a[0], 'a'), [['message', 'a1', a[1]], ['message', 'a2', a[2]]]);
      // Topic b's id at topic a: its time part lies inside a's range, and still it is no position here.
      const wrong = await firstFrames(log, b[1], 'a');
      assert.deepEqual(wrong, [['reload', 'epoch', a[2]]]);
      assert.ok(bare(b[1]) > bare(a[0]) && bare(b[1]) < bare(a[2]), 'the foreign id falls inside the range');
      // The same position with no generation (an id from before generations, or made by hand) is taken as this one's.
      assert.deepEqual(await firstFrames(log, bare(b[1]), 'a'), [['message', 'a2', a[2]]]);
    } finally {
      await log.close();
    }
  });
}

test('memory: two processes with memory stores (two nodes with no shared store): an id from one is not a position at the other', async () => {
  const one = createEventLog({ heartbeatMs: 0 });
  const two = createEventLog({ heartbeatMs: 0 });
  try {
    const fromOne = [];
    const fromTwo = [];
    for (let i = 0; i < 3; i++) {
      fromTwo.push(await two.append({ data: `two ${i}` }));
      await new Promise((r) => setTimeout(r, 3));
      fromOne.push(await one.append({ data: `one ${i}` }));
      await new Promise((r) => setTimeout(r, 3));
    }
    // A client of node one, sent to node two by the balancer after a restart: told to reload, not given
    // node two's events after a time that means nothing there.
    assert.deepEqual(await firstFrames(two, fromOne[0]), [['reload', 'epoch', fromTwo[2]]]);
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
});

test('redis: a Redis that lost its data starts a new generation; an old id inside the new range gets the reload event', async () => {
  const key = fixture.key();
  const log = createEventLog({ store: await createRedisStore({ url: fixture.redis.url, key, reconnect: { baseMs: 50, maxMs: 200 } }), heartbeatMs: 0 });
  try {
    // The old generation's ids are a little ahead of the clock (another node's, say: up to 10 s is taken).
    const base = Date.now();
    const old = [];
    for (let i = 1; i <= 3; i++) old.push(await log.append({ data: `old ${i}`, id: `${base + 5000 + i * 10}-0` }));
    await fed(log, 3);
    await fixture.redis.kill();
    await fixture.redis.start(); // no persistence: the stream, its floor and its generation are gone
    // The new generation: its first events now (the feed's gap marker among them), its last given an id
    // past the old ones, so that the old ids fall inside its range.
    let first = null;
    const until = Date.now() + 15_000;
    while (first === null) {
      if (Date.now() > until) throw new Error('the store did not come back');
      first = await log.append({ data: 'new 0' }).catch(() => null); // null: Redis not back yet
      if (first === null) await new Promise((r) => setTimeout(r, 50));
    }
    const last = await log.append({ data: 'new 1', id: `${base + 9000}-0` });
    const fedBy = Date.now() + 5000;
    while (log.store.head !== bare(last) && Date.now() < fedBy) await new Promise((r) => setTimeout(r, 5));
    assert.notEqual(first.split('_')[1], old[0].split('_')[1], 'a new generation');
    const frames = await firstFrames(log, old[1]);
    assert.equal(frames.length, 1, JSON.stringify(frames));
    assert.deepEqual(frames[0].slice(0, 2), ['reload', 'epoch']);
    // Its id is the newest the log knows: 'new 1', or the gap marker the feed appends once it finds the data
    // gone, which may come after 'new 1' (XADD * then takes 'new 1''s time and the next sequence).
    const [ms, seq] = bare(frames[0][2]).split('-').map(Number);
    const [lastMs, lastSeq] = bare(last).split('-').map(Number);
    assert.ok(ms > lastMs || (ms === lastMs && seq >= lastSeq), `${frames[0][2]} at or after ${last}`);
    assert.equal(frames[0][2].split('_')[1], first.split('_')[1], 'an id of the new generation');
  } finally {
    await log.close();
  }
});
