// The `trace` option in Chromium, Firefox and WebKit, over real HTTP on loopback (a script served by the
// testing entry's server.handle): on both transports, one record per attempt and per change of state, each
// attempt's URL and resume id as the server received them, what ended each, the waits as onretry told
// them; and nothing recorded after close().
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine, pageReached, scriptedServer } from './browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { scriptServer } = await import(join(root, 'pkg', 'testing.js'));

const { server, scripted } = await scriptedServer('trace');

const LIMIT_MS = 30_000;

for (const transport of ['eventsource', 'fetch']) {
  inEachEngine(`${transport}: the trace of an end after id 42, a 503 with Retry-After: 1, then a resume`, async (engine, page) => {
    const name = `${engine}-${transport}`;
    const script = scriptServer()
      .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).end())
      .attempt((a) => a.status(503, { retryAfter: 1 }))
      .attempt((a) => a.open().send({ id: '43', data: 'c' }).stall());
    scripted.set(name, script);
    await page.goto(`${server.url}/`);
    await page.evaluate(`(() => {
      const r = (window.__r = { done: false, records: [], retries: [] });
      import(${JSON.stringify(transport === 'fetch' ? '/pkg/fetch.js' : '/pkg/index.js')}).then(({ ManagedEventSource }) => {
        const feed = new ManagedEventSource('/feed?c=${name}', {
          ${transport === 'fetch' ? "transport: 'fetch'," : ''}
          lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 50, maxMs: 100,
          trace(record) {
            r.records.push({ ...record, self: this === feed });
          },
        });
        feed.onretry = ({ attempt, delayMs }) => r.retries.push([attempt, delayMs]);
        feed.onmessage = (e) => {
          if (e.data !== 'c') return;
          feed.close();
          // Anything after close() would be recorded from here on.
          setTimeout(() => (r.done = true), 300);
        };
      });
      return 1;
    })()`);
    const r = await pageReached(page, () => false, LIMIT_MS);
    const records = r.records;
    const types = records.map((x) => x.type);
    const feed = `${server.url}/feed?c=${name}`;
    // The EventSource transport cannot read a status: the 503 is an error to it, and the wait is the ladder's.
    const refused = transport === 'fetch' ? { cause: 'status', status: 503, retryAfterMs: 1000 } : { cause: 'error' };
    assert.deepEqual(types, ['attempt', 'open', 'ended', 'wait', 'attempt', 'ended', 'wait', 'attempt', 'open', 'closed'], JSON.stringify(records));
    assert.ok(records.every((x) => x.self), 'this is the client');
    const attempts = records.filter((x) => x.type === 'attempt');
    assert.deepEqual(attempts.map((x) => [x.attempt, x.trigger, x.lastEventId]), [[0, 'start', ''], [1, 'timer', '42'], [2, 'timer', '42']]);
    // The URL each record names is the one the server received.
    assert.deepEqual(attempts.map((x) => x.url), script.requests.map((q) => q.url));
    assert.equal(attempts[1].url, `${feed}&lastEventId=42`);
    const ended = records.filter((x) => x.type === 'ended');
    assert.equal(ended[0].cause, 'error');
    assert.deepEqual({ cause: ended[1].cause, status: ended[1].status, retryAfterMs: ended[1].retryAfterMs }, { status: undefined, retryAfterMs: undefined, ...refused });
    const waits = records.filter((x) => x.type === 'wait');
    assert.deepEqual(waits.map((x) => [x.attempt, x.delayMs]), r.retries, 'each wait is the one onretry told');
    // The second cap (2 x 50 ms) reaches maxMs (100 ms).
    assert.deepEqual(waits.map((x) => x.bound), transport === 'fetch' ? ['ladder', 'retryAfter'] : ['ladder', 'maxMs']);
    if (transport === 'fetch') assert.equal(waits[1].delayMs, 1000 + waits[1].ladderMs);
    // Times are the page's performance.now(), in order; each wait ends when the next attempt begins.
    for (let i = 1; i < records.length; i++) assert.ok(records[i].time >= records[i - 1].time, `record ${i} goes back in time`);
    for (const w of waits) {
      const next = records[records.indexOf(w) + 1];
      // Within 2 ms: two readings of performance.now(), which Firefox coarsens to 1 ms, and its timers may
      // fire a little before their time (a full run read 98 ms of 100 there).
      assert.ok(next.time - w.time >= w.delayMs - 2, `${engine}: waited ${next.time - w.time} ms of ${w.delayMs}`);
    }
    assert.deepEqual(records.at(-1).by, 'user');
  });
}
