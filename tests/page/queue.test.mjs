// What an iteration's queue holds in memory, measured: a `for await` loop with `overflow: 'drop-oldest'` that
// stays behind for the whole stream (the case that mode exists for) holds `max` events, and its queue's array
// holds slots for about that many, not one slot per event the stream ever sent.
//
// The page's client is open on a stream that sends nothing; events are handed to its listeners with
// dispatchEvent, 100 a task, while the loop takes one a task, so it never catches up. Before the loop takes
// its last, the page's heap is measured after a full collection, and compared with the lower of the heap
// before the stream and the heap once the loop has ended (Chromium, through DevTools' protocol: neither
// Firefox's nor WebKit's driver can force a collection or read the heap). The build before kept one slot
// per event for as long as the loop stayed behind: after 300,000 events the heap had grown 1.5 MB, holding
// 100 live events. The heap before the stream varies by up to 5 MB between runs (what loading left), so
// Chromium's run hands over 1,000,000 events; the others, 300,000. In every engine the loop must get its events in order, the newest last, with
// what it missed counted in `dropped`.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached, pageServer } from './browser.mjs';

/** The events handed over where the heap is measured, and elsewhere. */
const MEASURED_EVENTS = 1_000_000, EVENTS = 300_000;
const PER_TASK = 100;
const MAX = 100;
/** How much the heap may grow while the loop is behind: a few hundred slots' worth, not 300,000. */
const HEAP_GROWTH_LIMIT = 256 * 1024;
/** How long a page may take: a defect fails the test, it does not hang it. */
const PAGE_LIMIT_MS = 60_000;

const server = await pageServer((req, res, u) => {
  if (u.pathname === '/quiet') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    return void res.write(': open\n\n');
  }
  if (u.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return void res.end('<!doctype html><meta charset="utf-8"><title>queue</title>');
  }
  return false;
});
after(() => server.close());

/** Starts the page's stream and loop; the loop waits, behind, once every event is handed over (r.held). */
const start = (transport, events) => `
  (() => {
    const r = (window.__r = { ready: false, held: false, done: false, taken: 0, inOrder: true, last: -1, dropped: 0, error: null });
    import(${JSON.stringify(transport === 'fetch' ? '/pkg/fetch.js' : '/pkg/index.js')}).then(async ({ ManagedEventSource }) => {
      const es = new ManagedEventSource('/quiet', ${transport === 'fetch' ? "{ transport: 'fetch' }" : '{}'});
      await new Promise((open) => (es.onopen = open));
      // A task's turn (a MessageChannel's, which timers' clamping does not slow).
      const channel = new MessageChannel(), turns = [];
      channel.port1.onmessage = () => turns.shift()();
      const yieldTask = () => new Promise((go) => (turns.push(go), channel.port2.postMessage(null)));
      const it = es.events('message', { max: ${MAX}, overflow: 'drop-oldest' });
      let release;
      const held = new Promise((go) => (release = go));
      window.__release = release;
      let handedOver = false;
      // 100 events a task, as a fast stream hands them to the listeners.
      (async () => {
        for (let i = 0; i < ${events}; i += ${PER_TASK}) {
          for (let j = i; j < i + ${PER_TASK}; j++) es.dispatchEvent(new MessageEvent('message', { data: String(j) }));
          await yieldTask();
        }
        handedOver = true;
      })();
      r.ready = true;
      try {
        for await (const ev of it) {
          const id = Number(ev.data);
          r.inOrder &&= id > r.last;
          r.last = id;
          r.taken++;
          if (id === ${events - 1}) break;
          // One event a task: always behind. Once all are handed over, it waits behind until measured.
          if (handedOver && !r.held) (r.held = true), await held;
          else await yieldTask();
        }
      } catch (e) {
        r.error = e.name + ': ' + e.message;
      }
      r.dropped = it.dropped;
      r.status = es.status;
      channel.port1.close();
      r.done = true;
    });
    return 'started';
  })()`;

/** Waits, at most PAGE_LIMIT_MS, until the page's state has `key` set (or is done). */
const waitFor = (page, key) => pageReached(page, (r) => r[key], PAGE_LIMIT_MS);

for (const transport of ['eventsource', 'fetch']) {
  inEachEngine(`${transport}: a drop-oldest loop that stays behind through a stream holds ${MAX} of its events, and its queue about as many slots`, async (engine, page) => {
    const events = page.heapUsed ? MEASURED_EVENTS : EVENTS;
    await page.goto(`${server.url}/`);
    // The module and the client first, so that the baseline holds them.
    await page.evaluate(start(transport, events));
    await waitFor(page, 'ready');
    const before = await page.heapUsed?.();
    const held = await waitFor(page, 'held');
    assert.equal(held.error, null, held.error);
    assert.ok(held.held, `the loop fell behind and waited: ${JSON.stringify(held)}`);
    const behind = await page.heapUsed?.();
    await page.evaluate('window.__release()');
    const r = await waitFor(page, 'done');
    // The heap once the loop has ended, which lets go of the iteration: a second baseline, the lower of the
    // two counting (what loading left may be collected only later).
    const ended = await page.heapUsed?.();
    if (before !== undefined) {
      const growth = behind - Math.min(before, ended);
      console.log(`[figure] ${engine} ${transport}: heap growth while a drop-oldest loop (max ${MAX}) is behind after ${events} events = ${growth} bytes`);
      assert.ok(growth < HEAP_GROWTH_LIMIT, `the heap grew ${growth} bytes while the loop held ${MAX} events`);
    }
    assert.equal(r.error, null, r.error);
    assert.ok(r.inOrder, 'in order');
    assert.equal(r.last, events - 1, 'the newest last');
    assert.ok(r.taken < events / 2, `it fell behind and dropped: took ${r.taken}`);
    assert.equal(r.taken + r.dropped, events, `taken ${r.taken} + dropped ${r.dropped}`);
    assert.equal(r.status, 'closed', 'the loop closed the client when it broke');
  });
}
