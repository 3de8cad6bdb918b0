// Resumable streams told apart and served by a fleet (issue 53): an interrupted stream (its producer threw,
// went idle past idleTimeoutMs, or its node died) is answered 410 saying so, never the 204 of a finished one;
// cancel() stops a producer through its signal, on whichever node runs it; and on the Redis store (a real
// redis-server on a free loopback port) a node that did not start a stream serves its resume: what was missed,
// then the rest live, each frame once, in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redisForTests, server } from './fixtures/redis-stores.mjs';

const fixture = redisForTests('resumable');
const { createResumableStreams, createRedisStore } = server;

/** A producer the test steps by hand: `next()` lets one more chunk out; `fail()` makes it throw. Its signal
 * is kept, and whether it was let go (its finally ran). */
function steps(count = Infinity) {
  let wake = null;
  let permits = 0;
  let failing = null;
  const state = { signal: null, released: false, started: 0 };
  const permit = () => (permits > 0 ? (permits--, Promise.resolve()) : new Promise((r) => (wake = r)));
  state.produce = async function* ({ signal }) {
    state.started++;
    state.signal = signal;
    try {
      for (let i = 1; i <= count; i++) {
        await permit();
        if (failing) throw failing;
        yield `chunk ${i}`;
      }
    } finally {
      state.released = true;
    }
  };
  const go = () => (wake ? (wake(), (wake = null)) : permits++);
  state.next = go;
  state.fail = (error) => ((failing = error), go());
  return state;
}

/** Reads a Web Response's event stream as it comes: `frames` ([id, event, data]) and `ended`. */
function reader(response) {
  const got = { frames: [], ended: false, text: '' };
  const decoder = new TextDecoder();
  got.done = (async () => {
    for await (const bytes of response.body) {
      got.text += decoder.decode(bytes, { stream: true });
      let cut;
      while ((cut = got.text.indexOf('\n\n')) >= 0) {
        const block = got.text.slice(0, cut);
        got.text = got.text.slice(cut + 2);
        const field = (name) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        got.frames.push([field('id'), field('event') ?? 'message', field('data')]);
      }
    }
    got.ended = true;
  })();
  return got;
}

async function until(predicate, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const post = (lastEventId) => new Request('http://127.0.0.1/chat', { method: 'POST', headers: lastEventId ? { 'Last-Event-ID': lastEventId } : {} });

test('a producer that throws mid-answer: its live client gets an error event and its end, and the resume is a 410 saying the stream was interrupted, not a 204', async () => {
  const errors = [];
  const streams = createResumableStreams({ onerror: (e) => errors.push(e) });
  const p = steps();
  const live = reader(await streams.response(post(), p.produce));
  p.next();
  await until(() => live.frames.length === 2, 'the first chunk');
  p.fail(new Error('the model API answered 529'));
  await live.done;
  assert.deepEqual(live.frames.slice(1).map(([, event, data]) => [event, data]), [['message', 'chunk 1'], ['error', 'the stream failed on the server']]);
  assert.equal(errors.length, 1, 'onerror hears what the producer threw');
  const resume = await streams.response(post(live.frames.at(-1)[0]), () => assert.fail('a resume starts nothing'));
  assert.equal(resume.status, 410);
  assert.match(await resume.text(), /interrupted \(its producer threw\)/);
  // A client that had only the first chunk is sent the rest (the error event), and then its resume is the 410.
  const behind = await streams.response(post(live.frames[1][0]), () => assert.fail());
  assert.equal(behind.status, 200);
  assert.match(await behind.text(), /event: error\n/);
  // A finished stream is still a 204.
  const q = steps(1);
  const done = reader(await streams.response(post(), q.produce));
  q.next();
  await done.done;
  assert.equal((await streams.response(post(done.frames.at(-1)[0]), () => assert.fail())).status, 204);
});

test('idleTimeoutMs: a producer that gives nothing for that long is stopped (its signal aborts, its finally runs) and the stream is interrupted', async () => {
  const streams = createResumableStreams({ idleTimeoutMs: 100 });
  const p = steps();
  const live = reader(await streams.response(post(), p.produce));
  p.next();
  await live.done;
  assert.equal(p.signal.aborted, true);
  assert.equal(p.signal.reason.name, 'TimeoutError');
  assert.deepEqual(live.frames.at(-1).slice(1), ['error', 'the producer gave nothing for 100 ms (idleTimeoutMs)']);
  p.next(); // an async generator runs return() once its await is over
  await until(() => p.released, "the producer's finally");
  const resume = await streams.response(post(live.frames.at(-1)[0]), () => assert.fail());
  assert.equal(resume.status, 410);
  assert.match(await resume.text(), /interrupted \(the producer gave nothing for 100 ms/);
});

test('cancel(id) stops the producer through its signal, and the stream ends as finished with what it has (a resume is a 204)', async () => {
  const streams = createResumableStreams();
  const p = steps();
  const live = reader(await streams.response(post(), p.produce));
  p.next();
  await until(() => live.frames.length === 2, 'the first chunk');
  const id = live.frames[0][2];
  await assert.rejects(streams.cancel('nope'), TypeError);
  assert.equal(await streams.cancel(id), true);
  await live.done;
  assert.equal(p.signal.aborted, true);
  assert.equal(live.frames.length, 2, 'no error event: a cancel is a finish');
  assert.equal((await streams.response(post(live.frames.at(-1)[0]), () => assert.fail())).status, 204);
  assert.equal(await streams.cancel(id), false, 'an ended stream is not running');
});

/** A stream started at `node` by a producer stepped by hand (steps()), once its first chunk has come:
 * { p, first (its reader), id }. */
async function firstChunk(node) {
  const p = steps();
  const first = reader(await node.streams.response(post(), p.produce));
  p.next();
  await until(() => first.frames.length === 2, 'the first chunk');
  return { p, first, id: first.frames[0][2] };
}

/** Two nodes of a fleet on one Redis: each its own store (connections) and its own streams. */
async function fleet(options = {}) {
  const key = fixture.key();
  const nodes = [];
  for (let i = 0; i < 2; i++) {
    const store = await createRedisStore({ url: fixture.redis.url, key, commandTimeoutMs: 1000, reconnect: { baseMs: 50, maxMs: 200 } });
    const errors = [];
    nodes.push({ store, errors, key, streams: createResumableStreams({ store, onerror: (e) => errors.push(e), ...options }) });
  }
  return { nodes, close: () => Promise.all(nodes.map((n) => n.store.close())) };
}

test('redis: a resume that reaches another node is served there: what was missed, then the rest live as the first node produces it, each once; then a 204', async () => {
  const { nodes, close } = await fleet();
  try {
    const [a, b] = nodes;
    const p = steps(6);
    const first = reader(await a.streams.response(post(), p.produce));
    for (let i = 0; i < 3; i++) p.next();
    await until(() => first.frames.length === 4, 'three chunks at the first node');
    const id = first.frames[0][2];
    // The client dropped after chunk 1; its resume reaches node b.
    const resumed = reader(await b.streams.response(post(`${id}:1`), () => assert.fail('a resume starts nothing')));
    await until(() => resumed.frames.length === 2, 'what was missed, from the store');
    for (let i = 0; i < 3; i++) p.next();
    await resumed.done;
    assert.deepEqual(resumed.frames.map(([fid, , data]) => [fid, data]), [2, 3, 4, 5, 6].map((n) => [`${id}:${n}`, `chunk ${n}`]));
    assert.equal((await b.streams.response(post(`${id}:6`), () => assert.fail())).status, 204);
    // A late joiner at b after the end gets it all, from the stream's first event.
    const late = await b.streams.response(post(`${id}:0`), () => assert.fail());
    assert.equal((await late.text()).match(/data: chunk/g).length, 6);
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await close();
  }
});

test("redis: when the producing node dies mid-answer, the other node's live client is ended within the lease, and the resume is a 410 saying it was interrupted", async () => {
  const { nodes, close } = await fleet({ leaseMs: 300 });
  try {
    const [a, b] = nodes;
    const { p, first, id } = await firstChunk(a);
    const follower = reader(await b.streams.response(post(`${id}:0`), () => assert.fail()));
    await until(() => follower.frames.length === 1, 'the first chunk at b');
    // Node a dies: its connections go, and its producer never says anything again.
    await a.store.close();
    const t0 = Date.now();
    await follower.done;
    assert.ok(Date.now() - t0 < 3000, `ended after ${Date.now() - t0} ms`);
    const resume = await b.streams.response(post(`${id}:1`), () => assert.fail());
    assert.equal(resume.status, 410);
    assert.match(await resume.text(), /interrupted \(the node producing it stopped renewing its lease\)/);
  } finally {
    await close();
  }
});

test('redis: cancel on the other node stops the producer within a second; its clients end and a resume is a 204', async () => {
  const { nodes, close } = await fleet();
  try {
    const [a, b] = nodes;
    const { p, first, id } = await firstChunk(a);
    const t0 = Date.now();
    assert.equal(await b.streams.cancel(id), true);
    await until(() => p.signal.aborted, "the producer's signal", 1000);
    assert.ok(Date.now() - t0 < 1000);
    await first.done;
    assert.equal(first.frames.length, 2, 'no error event: a cancel is a finish');
    // The end reaches the store just after the producer stops: a resume then is a 204 at either node.
    for (const node of [b, a]) {
      let status = 0;
      const end = Date.now() + 2000;
      while (status !== 204 && Date.now() < end) {
        const r = await node.streams.response(post(`${id}:1`), () => assert.fail());
        status = r.status;
        await r.body?.cancel();
      }
      assert.equal(status, 204);
    }
    assert.equal(await b.streams.cancel(id), false);
  } finally {
    await close();
  }
});

test("redis: a live client at the other node gets every frame once, in order, while that node's watch reads Redis beside the live frames (a review's race: frames repeated, then lost)", async () => {
  const { nodes, close } = await fleet({ leaseMs: 100 }); // the watch reads every 50 ms
  try {
    const [a, b] = nodes;
    const CHUNKS = 600;
    const produce = async function* () {
      for (let i = 1; i <= CHUNKS; i++) {
        await new Promise((r) => setTimeout(r, 1));
        yield `c${i}`;
      }
    };
    const results = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const first = reader(await a.streams.response(post(), produce));
        await until(() => first.frames.length >= 3, 'the first chunks');
        const id = first.frames[0][2];
        const followed = reader(await b.streams.response(post(`${id}:1`), () => assert.fail()));
        await Promise.all([first.done, followed.done]);
        return { id, ids: followed.frames.map(([fid]) => fid) };
      }),
    );
    for (const { id, ids } of results) assert.deepEqual(ids, Array.from({ length: CHUNKS - 1 }, (_, i) => `${id}:${i + 2}`));
  } finally {
    await close();
  }
});

test('redis: a running stream that Redis lost (a restart without its data) is pushed again by its node, and the other node keeps its live client meanwhile', async () => {
  const { nodes, close } = await fleet({ leaseMs: 300 });
  try {
    const [a, b] = nodes;
    const { p, first, id } = await firstChunk(a);
    const follower = reader(await b.streams.response(post(`${id}:0`), () => assert.fail()));
    await until(() => follower.frames.length === 1, 'the first chunk at b');
    // Redis loses every key (as a restart without persistence does); the producer is thinking meanwhile.
    const { createClient } = await import('redis');
    const admin = createClient({ url: fixture.redis.url });
    await admin.connect();
    await admin.flushAll();
    await new Promise((r) => setTimeout(r, 600)); // two leases: the node has pushed the stream again
    assert.equal(follower.ended, false, "b's live client stays");
    assert.equal(await admin.lLen(`{${a.key}:resumable:${id}}:frames`), 2, 'the stream and its first chunk are in Redis again');
    await admin.close();
    p.next();
    await until(() => follower.frames.length === 2, 'the next chunk at b');
    assert.deepEqual(follower.frames.map(([, , data]) => data), ['chunk 1', 'chunk 2']);
  } finally {
    await close();
  }
});

test('redis: a keepMs shorter than the renewals does not let a running stream expire (a review: resumes alternated between 200 and a 410 "not held")', async () => {
  const { nodes, close } = await fleet({ keepMs: 200, leaseMs: 1000 });
  try {
    const [a, b] = nodes;
    const { p, first, id } = await firstChunk(a);
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 300)); // past keepMs each time, between renewals (every 333 ms)
      const resumed = await b.streams.response(post(`${id}:0`), () => assert.fail());
      assert.equal(resumed.status, 200, `at ${(i + 1) * 300} ms`);
      await resumed.body.cancel();
    }
  } finally {
    await close();
  }
});
