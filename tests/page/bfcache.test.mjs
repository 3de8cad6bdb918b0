// Issue 26: a real back/forward-cache round trip, in each engine: a page with a client navigates away and
// comes back with the browser's Back. Where the engine restores the page from the cache (pageshow with
// persisted), the stream must reconnect at once, resuming after the last event it saw, whatever the
// engine fires on the way; where the engine does not cache the page (it may refuse pages with open
// connections), the page loads afresh and the test says so rather than pretending.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageServer } from './browser.mjs';

let server, url;
const attempts = new Map(); // client -> [{ at, from }]

const page = (c) => `<!doctype html><meta charset="utf-8"><title>a</title><script type="module">
  import { ManagedEventSource } from '/pkg/index.js';
  window.__r = { ids: [], statuses: [], restored: 0, errors: 0 };
  addEventListener('pageshow', (e) => { if (e.persisted) window.__r.restored++; });
  const es = new ManagedEventSource('/stream?c=${c}', { lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 60000 });
  es.onmessage = (e) => window.__r.ids.push(Number(e.lastEventId));
  es.onstatus = (s) => window.__r.statuses.push(s);
  es.onerror = () => window.__r.errors++;
</script>`;

before(async () => {
  server = await pageServer((req, res, u) => {
    if (u.pathname === '/stream') {
      const c = u.searchParams.get('c');
      const from = Number(u.searchParams.get('lastEventId') ?? 0);
      if (!attempts.has(c)) attempts.set(c, []);
      attempts.get(c).push({ at: Date.now(), from });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      let n = from;
      const tick = () => res.write(`id: ${++n}\ndata: ${n}\n\n`);
      tick();
      const t = setInterval(tick, 100);
      res.on('close', () => clearInterval(t));
      return;
    }
    if (u.pathname === '/a') {
      res.writeHead(200, { 'Content-Type': 'text/html' }); // no no-store: the page may be cached
      return res.end(page(u.searchParams.get('c')));
    }
    if (u.pathname === '/b') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end('<!doctype html><title>b</title><p>elsewhere');
    }
    return false;
  });
  url = server.url;
});
after(async () => {
  await server?.close();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Away and back; returns what the page and the server saw. `nav` drives one engine. */
async function roundTrip(engine, nav) {
  const c = `bf-${engine}`;
  await nav.go(`${url}/a?c=${c}`);
  for (let i = 0; i < 100 && !((await nav.read())?.ids.length >= 3); i++) await sleep(50);
  const before = await nav.read();
  await nav.go(`${url}/b`);
  await sleep(1500);
  const back = Date.now();
  await nav.back();
  let r;
  for (let i = 0; i < 100; i++) {
    r = await nav.read();
    if (r && r.statuses.at(-1) === 'open' && (attempts.get(c)?.length ?? 0) >= 2) break;
    await sleep(50);
  }
  return { before, after: r, attempts: attempts.get(c) ?? [], back };
}

function judge(engine, { before, after, attempts, back }) {
  assert.ok(before.ids.length >= 3, `${engine}: streaming before leaving`);
  if (after.restored === 0) {
    // Not cached: a fresh page, which starts a fresh client (the engine's choice, reported as such).
    console.log(`[figure] ${engine}: back/forward cache not used for a page with a stream (a fresh load)`);
    return;
  }
  assert.equal(attempts.length, 2, `${engine}: one new connection after the restore: ${JSON.stringify(attempts)}`);
  const last = after.ids.find((id, i) => i > 0 && id <= after.ids[i - 1]);
  assert.equal(last, undefined, `${engine}: ids in order, none twice: ${after.ids}`);
  assert.ok(attempts[1].from >= before.ids.at(-1), `${engine}: resumed after the last id seen (${attempts[1].from})`);
  const wait = attempts[1].at - back;
  assert.ok(wait < 30000, `${engine}: at once, not after the 60 s ladder (${wait} ms)`);
  console.log(`[figure] ${engine}: restored from the back/forward cache; reconnected ${wait} ms after Back, resuming from id ${attempts[1].from}; error events on the way: ${after.errors}`);
}

inEachEngine('back/forward cache round trip', async (engine, page) => {
  const label = { chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKit' }[engine];
  judge(label, await roundTrip(label, { go: page.goto, back: page.back, read: () => page.evaluate('window.__r ?? null') }));
});
