// A replay burst and a `for await` loop, in Chromium, Firefox and WebKit, on both transports, against the
// package's own event log (pkg/server.js, a memory store) on 127.0.0.1.
//
// - A client that reconnects after missing 50,000 events is sent all of them in one write (the log's
//   replay). Engines hand a loop's listeners thousands of them in one task, in which the loop cannot take a
//   single one; a loop that keeps up, with the default options, must still take every event, in order.
// - A loop that really stalls (it awaits the client's end) while the log streams events in batches still
//   ends at the default bound, 10,000 behind, with a RangeError after the events it had queued, and its
//   connection is closed at the server.
// - With `overflow: 'drop-oldest'` and `max: 100`, a loop that stalls while 100,000 events stream, 1,000
//   every 10 ms, finds no more than 100 queued when it goes on: what an iteration holds stays bounded, also
//   where Chromium runs the loop's turns only a few times a second under such a stream (tens of thousands
//   of events between turns). The server streams past the first batch only once the page says the loop
//   has stalled: a loaded engine may otherwise hand over all 100,000 before the loop's first turn, a burst
//   the bound rightly does not count.
// Each page also measures the largest run of events its listeners were handed before a task posted after
// the first of them could run (what the loop sees as one burst), printed as a figure.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine, pageReached, pageServer } from './browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createEventLog, createMemoryStore } = await import(join(root, 'pkg', 'server.js'));

const REPLAY = 50_000;
/** The most events /live streams to a client that never goes (the stall test's loop ends long before). */
const LIVE_CAP = 200_000;
const BATCH = 500;
/** What /live streams to the drop-oldest test, in batches of DROP_BATCH. */
const DROP_LIVE = 100_000;
const DROP_BATCH = 1000;
/** How long a page may take to report: a defect fails the test, it does not hang it. */
const PAGE_LIMIT_MS = 90_000;

/** Per client name: its event log, the attempts it made, and what the server saw. */
const clients = new Map();
function clientOf(name) {
  if (!clients.has(name)) {
    const log = createEventLog({ store: createMemoryStore({ maxEvents: REPLAY + 10 }), maxReplay: REPLAY + 10 });
    let appended;
    let stalled;
    clients.set(name, {
      log, attempts: 0, lastIds: [], closed: 0,
      appended: new Promise((r) => (appended = r)), markAppended: () => appended(),
      stalled: new Promise((r) => (stalled = r)), markStalled: () => stalled(),
    });
  }
  return clients.get(name);
}

/** Appends `n` numbered events from `from`, pipelined, and resolves when all are stored. */
const appendNumbered = (log, from, n) => Promise.all(Array.from({ length: n }, (_, i) => log.append({ data: String(from + i) })));

/** /replay: the first attempt gets event 0 live, then its response ends; 50,000 more are appended once it
 * has gone, and the client's next attempt is served (a replay of all of them in one write). */
async function replay(req, res, c) {
  c.attempts++;
  c.lastIds.push(c.log.lastEventId(req));
  res.on('close', () => c.closed++);
  if (c.attempts === 1) {
    await c.log.serve(req, res);
    await c.log.append({ data: '0' });
    res.end();
    if (!res.closed) await once(res, 'close');
    await appendNumbered(c.log, 1, REPLAY);
    c.markAppended();
    return;
  }
  await c.appended;
  await c.log.serve(req, res);
}

/** How long /live waits for a page to say its loop stalled (then it streams on, and the test fails). */
const STALL_WAIT_MS = 20_000;

/** /live?n=N&b=B[&stall]: served live, then N events appended in batches of B (default 500), a timer's turn
 * apart, until the client goes; with `stall`, the batches after the first wait for the page's /stalled. */
async function live(req, res, c, u) {
  const n = Number(u.searchParams.get('n'));
  const batch = Number(u.searchParams.get('b') ?? BATCH);
  c.attempts++;
  res.on('close', () => c.closed++);
  await c.log.serve(req, res);
  for (let from = 0; from < n && !res.closed; from += batch) {
    await appendNumbered(c.log, from, batch);
    if (from === 0 && u.searchParams.has('stall')) await Promise.race([c.stalled, new Promise((r) => setTimeout(r, STALL_WAIT_MS))]);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** /stalled: the page's loop has taken its first event and stalls. */
function stalled(req, res, c) {
  c.markStalled();
  res.writeHead(204, { 'Cache-Control': 'no-store' }).end();
}

const server = await pageServer((req, res, u) => {
  const route = { '/replay': replay, '/live': live, '/stalled': stalled }[u.pathname];
  if (route) return void route(req, res, clientOf(u.searchParams.get('c')), u);
  if (u.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return res.end('<!doctype html><meta charset="utf-8"><title>burst</title>');
  }
  return false;
});
after(async () => {
  for (const c of clients.values()) await c.log.close();
  await server.close();
});

/** The page's script: a client on `transport` at `path`, read by `loop` (a function's source). */
const script = (transport, path, name, loop) => `
  (() => {
    const r = (window.__r = { taken: 0, firstWrong: null, error: null, status: null, done: false, burst: 0, result: null });
    const entry = ${JSON.stringify(transport === 'fetch' ? '/pkg/fetch.js' : '/pkg/index.js')};
    import(entry).then(async ({ ManagedEventSource }) => {
      const es = new ManagedEventSource(${JSON.stringify(`${path}${path.includes('?') ? '&' : '?'}c=${name}`)}, {
        lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 50, maxMs: 100,
        ${transport === 'fetch' ? "transport: 'fetch'," : ''}
      });
      // The largest run of events handed to listeners before a task posted after the first could run.
      let run = 0, posted = false;
      const runs = [];
      const tick = new MessageChannel();
      tick.port1.onmessage = () => (runs.push(run), (r.burst = Math.max(r.burst, run)), (run = 0), (posted = false));
      /** How many of these turns have run: they run beside the loop's. */
      const turns = () => runs.length;
      es.addEventListener('message', () => {
        run++;
        if (!posted) (posted = true), tick.port2.postMessage(null);
      });
      const closed = new Promise((resolve) => (es.onstatus = (s) => s === 'closed' && resolve()));
      let count = 0;
      try {
        const tellStalled = () => fetch(${JSON.stringify(`/stalled?c=${name}`)});
        r.result = await (${loop})(es, closed, turns, (ev) => {
          if (r.firstWrong === null && ev.data !== String(count)) r.firstWrong = { at: count, data: ev.data };
          count++;
        }, tellStalled);
      } catch (e) {
        r.error = { name: e.name, message: e.message };
      }
      r.taken = count;
      r.burst = Math.max(r.burst, run);
      r.status = es.status;
      r.done = true;
      tick.port1.close();
    });
    return 'started';
  })()`;

/** Runs `script` in the page and waits (at most PAGE_LIMIT_MS) for it to report. */
async function runPage(page, source) {
  await page.evaluate(source);
  return pageReached(page, () => false, PAGE_LIMIT_MS);
}

/** A loop that keeps up: takes every event until it has had 50,001 (event 0 and the replay), then breaks. */
const keepsUp = `async (es, closed, turns, take) => {
  let n = 0;
  for await (const ev of es) {
    take(ev);
    if (++n === ${REPLAY + 1}) break;
  }
}`;

/** A loop that stalls on its first event until the client is closed, then goes on taking what it queued. */
const stalls = `async (es, closed, turns, take) => {
  let first = true;
  for await (const ev of es) {
    take(ev);
    if (first) (first = false), await closed;
  }
}`;

/** A loop that keeps the newest 100 (drop-oldest) and stalls on its first event until all have arrived (it
 * tells the server, which streams the rest only then); it tells how many events had arrived when it
 * stalled, how many of the page's turns ran while it stalled and how many events it found queued after. */
const dropsWhileStalled = `async (es, closed, turns, take, tellStalled) => {
  let arrived = 0, allArrived;
  const all = new Promise((resolve) => (allArrived = resolve));
  es.addEventListener('message', () => ++arrived === ${DROP_LIVE} && allArrived());
  const it = es.events('message', { max: 100, overflow: 'drop-oldest' });
  let taken = 0, last = -1, inOrder = true, turnsWhileStalled = 0, arrivedAtStall = 0;
  for await (const ev of it) {
    const id = Number(ev.data);
    inOrder &&= id > last;
    last = id;
    if (++taken === 1) {
      const before = turns();
      arrivedAtStall = arrived;
      tellStalled();
      await all;
      turnsWhileStalled = turns() - before;
    }
    if (id === ${DROP_LIVE - 1}) break;
  }
  return { taken, found: taken - 1, last, inOrder, dropped: it.dropped, turnsWhileStalled, arrivedAtStall };
}`;

for (const transport of ['eventsource', 'fetch']) {
  inEachEngine(`${transport}: a replay of ${REPLAY} events after a reconnect is taken whole, in order, by a for await loop at the default options`, async (engine, page) => {
    const name = `${engine}-${transport}-replay`;
    await page.goto(`${server.url}/`);
    const r = await runPage(page, script(transport, '/replay', name, keepsUp));
    const c = clients.get(name);
    console.log(`[figure] ${engine} ${transport}: most events handed over before the loop's turn, of a ${REPLAY}-event replay over loopback = ${r.burst}`);
    assert.equal(r.error, null, `the loop ended with ${JSON.stringify(r.error)} after ${r.taken} events`);
    assert.equal(r.firstWrong, null, 'every event in order, none lost');
    assert.equal(r.taken, REPLAY + 1);
    assert.equal(r.status, 'closed', 'the loop closed the client when it broke');
    assert.equal(c.attempts, 2, 'one reconnect');
    assert.equal(c.lastIds[0], null, 'the first attempt asked for no replay');
    assert.match(c.lastIds[1], /^\d+-\d+_[0-9a-z]{7}$/, 'the reconnect resumed from event 0 (an id of the log: its generation named)');
    // The burst is the point of the test: with fewer than the bound in one task, it tests nothing.
    assert.ok(r.burst > 10_000, `the engine handed over ${r.burst} events at most in one task`);
  });

  inEachEngine(`${transport}: a loop that stalls while events stream still ends 10000 events behind, with a RangeError after what it had queued`, async (engine, page) => {
    const name = `${engine}-${transport}-stall`;
    await page.goto(`${server.url}/`);
    const r = await runPage(page, script(transport, `/live?n=${LIVE_CAP}`, name, stalls));
    const c = clients.get(name);
    assert.equal(r.error?.name, 'RangeError', JSON.stringify(r.error));
    assert.match(r.error.message, /fell 10000 events behind/);
    assert.equal(r.firstWrong, null, 'the events before the error in order, none lost');
    assert.ok(r.taken >= 10_000 && r.taken < LIVE_CAP, `taken ${r.taken}`);
    assert.equal(r.status, 'closed');
    for (let i = 0; i < 50 && c.closed < c.attempts; i++) await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(c.closed, c.attempts, 'no connection left open at the server');
  });

  inEachEngine(`${transport}: with drop-oldest and max 100, a loop that stalls while ${DROP_LIVE} events stream finds at most 100 queued`, async (engine, page) => {
    const name = `${engine}-${transport}-drop`;
    await page.goto(`${server.url}/`);
    const t0 = Date.now();
    const r = await runPage(page, script(transport, `/live?n=${DROP_LIVE}&b=${DROP_BATCH}&stall`, name, dropsWhileStalled));
    console.log(`[figure] ${engine} ${transport}: ${DROP_LIVE} events streamed to a stalled drop-oldest loop, page done in ${Date.now() - t0} ms`);
    assert.equal(r.error, null, JSON.stringify(r.error));
    const { taken, found, last, inOrder, dropped, turnsWhileStalled, arrivedAtStall } = r.result;
    assert.ok(inOrder, 'in order');
    assert.equal(last, DROP_LIVE - 1, 'the newest event is kept');
    assert.equal(taken + dropped, DROP_LIVE, `taken ${taken}, dropped ${dropped}: every event taken or counted`);
    // The loop stalled while the stream went on (the server waited for it), and the bound holds from the
    // first turn that finds it busy, which must have come.
    assert.ok(arrivedAtStall <= DROP_BATCH, `${arrivedAtStall} events had arrived when the loop stalled`);
    assert.ok(turnsWhileStalled >= 1, `no turn ran while the loop stalled`);
    assert.ok(found <= 100, `the stalled loop found ${found} queued (${turnsWhileStalled} turns while it stalled)`);
  });
}
