// The testing entry (pkg/testing.js) in Chromium, Firefox and WebKit:
// - in the page, the virtual clock and the scripted server as the fetch transport's `fetch`: the outage story
//   (a drop after id 42, a 503 with Retry-After, a 401) plays in virtual time, the same in every engine;
// - over real HTTP on loopback, the same kind of script served by `server.handle` (node:http, in this
//   process) to a real page's client on both transports: what a Playwright test of an app does.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inEachEngine, pageReached, scriptedServer } from './browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { scriptServer } = await import(join(root, 'pkg', 'testing.js'));

const { server, scripted } = await scriptedServer('testing');

const LIMIT_MS = 30_000;

inEachEngine('the outage story on the virtual clock in the page: a drop after id 42, a 503 with Retry-After, a 401', async (engine, page) => {
  await page.goto(`${server.url}/`);
  await page.evaluate(`(() => {
    const r = (window.__r = { done: false });
    Promise.all([import('/pkg/testing.js'), import('/pkg/fetch.js')]).then(async ([{ createVirtualClock, scriptServer }, { ManagedEventSource }]) => {
      const clock = createVirtualClock({ seed: 1 });
      const server = scriptServer()
        .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
        .attempt((a) => a.status(503, { retryAfter: 5 }))
        .attempt((a) => a.status(401));
      const feed = new ManagedEventSource('/api/feed', { transport: 'fetch', fetch: server.fetch });
      const statuses = [], delays = [], got = [];
      feed.onstatus = (s) => statuses.push(s);
      feed.onretry = ({ delayMs }) => delays.push(delayMs);
      feed.onmessage = (e) => got.push([e.data, e.lastEventId, e.target === feed]);
      const t0 = performance.now();
      r.took = await clock.runUntil(() => feed.status === 'failed');
      r.ms = performance.now() - t0;
      Object.assign(r, { statuses, delays, got, ids: server.requests.map((q) => [q.url, q.lastEventId]), pending: clock.pending, done: true });
      clock.uninstall();
    }).catch((e) => Object.assign(r, { error: String(e), done: true }));
    return 1;
  })()`);
  const r = await pageReached(page, () => false, LIMIT_MS);
  assert.equal(r.error, undefined);
  console.log(`[figure] ${engine}: the outage story, ${r.took} virtual ms, in ${r.ms.toFixed(1)} ms of the page's time`);
  assert.deepEqual(r.statuses, ['open', 'reconnecting', 'failed']);
  assert.deepEqual(r.got, [['a', '41', true], ['b', '42', true]]);
  assert.deepEqual(r.ids, [[`${server.url}/api/feed`, null], [`${server.url}/api/feed`, '42'], [`${server.url}/api/feed`, '42']]);
  // The seed's draws are the engine's arithmetic alone: the same delays in every engine (and in Node's test).
  assert.deepEqual(r.delays, [15, 6846]);
  assert.equal(r.took, 6861);
  assert.equal(r.pending, 0);
  assert.ok(r.ms < 1000, `${r.ms} ms`);
});

for (const transport of ['eventsource', 'fetch']) {
  // The server ends the first stream (a cut connection right after bytes is each engine's own to read:
  // Chromium's fetch reader errors before it hands over what came just before the cut).
  inEachEngine(`${transport}: a script served over HTTP on loopback by server.handle: an end after id 42, a 503, then a resume`, async (engine, page) => {
    const name = `${engine}-${transport}`;
    const script = scriptServer()
      .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', event: 'tick', data: 'b' }).end())
      .attempt((a) => a.status(503))
      .attempt((a) => a.open().send({ id: '43', data: 'c' }).stall());
    scripted.set(name, script);
    await page.goto(`${server.url}/`);
    await page.evaluate(`(() => {
      const r = (window.__r = { done: false, got: [], statuses: [] });
      import(${JSON.stringify(transport === 'fetch' ? '/pkg/fetch.js' : '/pkg/index.js')}).then(({ ManagedEventSource }) => {
        const feed = new ManagedEventSource('/feed?c=${name}', { ${transport === 'fetch' ? "transport: 'fetch'," : ''} lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 50, maxMs: 100 });
        const take = (e) => {
          r.got.push([e.type, e.data, e.lastEventId]);
          if (r.got.length === 3) (feed.close(), (r.done = true));
        };
        feed.onmessage = take;
        feed.addEventListener('tick', take);
        feed.onstatus = (s) => r.statuses.push(s);
      });
      return 1;
    })()`);
    const r = await pageReached(page, () => false, LIMIT_MS);
    assert.deepEqual(r.got, [['message', 'a', '41'], ['tick', 'b', '42'], ['message', 'c', '43']]);
    assert.equal(r.statuses[0], 'open');
    assert.equal(r.statuses.at(-1), 'closed');
    // The fetch transport resumes by the Last-Event-ID header (its URL unchanged), the EventSource one by
    // the URL's parameter: either way the script's request says 42.
    assert.deepEqual(script.requests.map((q) => q.lastEventId), [null, '42', '42']);
    for (let i = 0; i < 50 && !script.requests[2].aborted; i++) await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(script.requests[2].aborted, true, 'close() ended the request at the server');
  });
}
