// Issue 53: resume after a reload, for every stream (the lastEventIdKey option), in Chromium, Firefox and
// WebKit, on both transports, against managed-eventsource/server's event log (memory store). A page receives
// five events, leaves (its pagehide keeps the last id in sessionStorage), three events are appended while no
// page is there, and the page comes back in the same tab: its first connection resumes from the kept id, so
// it receives the three it missed, once, and none of the five again. Without the option (the control page)
// the same return starts live and misses them. close() forgets the id.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached, pageServer } from './browser.mjs';

const LIMIT_MS = 20_000;
let log = null;
/** Every /feed request: { client, lastEventId } (the header, or the URL's lastEventId). */
const requests = [];
const site = await pageServer((req, res, u) => {
  if (u.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return res.end('<!doctype html><meta charset="utf-8"><title>reload</title>');
  }
  if (u.pathname !== '/feed') return false;
  requests.push({ client: u.searchParams.get('c'), lastEventId: req.headers['last-event-id'] ?? u.searchParams.get('lastEventId') });
  log.serve(req, res);
});

before(async () => {
  const { createEventLog } = await import('../../pkg/server.js');
  log = createEventLog();
});
after(async () => {
  await log?.close();
  await site.close();
});

/** The page's script: a client of /feed for `name`, keeping its id under `key` (none for the control). */
const client = (name, transport, key) => `(() => {
  const r = (window.__r = { got: [], statuses: [] });
  import('/pkg/fetch.js').then(({ ManagedEventSource }) => {
    const feed = (window.feed = new ManagedEventSource('/feed?c=${name}', {
      transport: '${transport}', lastEventIdParam: 'lastEventId', ${key ? `lastEventIdKey: '${key}',` : ''}
    }));
    feed.onmessage = (e) => r.got.push([e.data, e.lastEventId]);
    feed.onstatus = (s) => r.statuses.push(s);
  });
  return 1;
})()`;

for (const transport of ['eventsource', 'fetch']) {
  inEachEngine(`${transport}: lastEventIdKey resumes after the page leaves and comes back: what it missed once, nothing twice; close() forgets it`, async (engine, page) => {
    const name = `${engine}-${transport}`;
    const key = `feed-${name}`;
    const open = async (who, withKey) => {
      await page.goto(`${site.url}/`);
      await page.evaluate(client(who, transport, withKey ? key : null));
      await pageReached(page, (r) => r.statuses.at(-1) === 'open', LIMIT_MS);
    };
    const requestsOf = (who) => requests.filter((q) => q.client === who);

    await open(name, true);
    const ids = [];
    for (let i = 1; i <= 5; i++) ids.push(await log.append({ data: `${name} ${i}` }));
    await pageReached(page, (r) => r.got.length === 5, LIMIT_MS);
    // The page leaves (a reload, a navigation away and back); three events come meanwhile.
    await page.goto('about:blank');
    for (let i = 6; i <= 8; i++) ids.push(await log.append({ data: `${name} ${i}` }));
    await open(name, true);
    const r = await pageReached(page, (r) => r.got.length >= 3, LIMIT_MS);
    assert.deepEqual(r.got, ids.slice(5).map((id, i) => [`${name} ${i + 6}`, id]), `${name}: what it missed, once, in order`);
    assert.equal(requestsOf(name).at(-1).lastEventId, ids[4], `${name}: the first connection after the return resumed from the kept id`);
    // close() forgets the id: the next return starts afresh.
    // (Forgotten after the task that closed it: a client made again in that task, as React StrictMode does, takes it on.)
    const stored = await page.evaluate(`(async () => { const before = sessionStorage.getItem('${key}'); window.feed.close(); await new Promise((r) => setTimeout(r, 0)); return [before, sessionStorage.getItem('${key}')]; })()`);
    assert.deepEqual(stored, [ids[4], null], `${name}: what the page kept as it left (never written per event), forgotten at close()`);

    // The control: the same return with no key starts live, and misses what came meanwhile.
    const control = `${name}-control`;
    await open(control, false);
    await page.goto('about:blank');
    await log.append({ data: `${control} missed` });
    await open(control, false);
    await log.append({ data: `${control} live` });
    const c = await pageReached(page, (r) => r.got.length >= 1, LIMIT_MS);
    assert.deepEqual(c.got.map(([data]) => data), [`${control} live`]);
    assert.equal(requestsOf(control).at(-1).lastEventId, null);
  });
}
