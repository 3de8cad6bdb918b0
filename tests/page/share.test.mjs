// Issue 14: one connection for all tabs. Four pages of one origin in one browser share a stream: the
// server sees one connection, every page gets every event, closing the leader's page produces exactly one
// new connection that resumes from the last id, and `leader` is true on exactly one page at a time. Then
// connections at the server for 1, 4 and 16 tabs, shared and not. Chromium (playwright) and Firefox
// (WebDriver windows).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './browser.mjs';
import { firefox, haveFirefox } from './webdriver.mjs';
import { startServer } from '../server/sse-server.mjs';

let server, chromium;
before(async () => {
  server = await startServer();
  chromium = await launch();
});
after(async () => {
  await chromium?.close();
  await server?.close();
});

const get = async (path) => (await fetch(`${server.url}${path}`)).json();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(ms, cond) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await cond()) return true;
    await sleep(50);
  }
  return cond();
}

/** What each page runs: a shared client that records ids and whether it leads. */
const client = (c, share, streams = 'location.origin', entry = 'index', more = '') => `
  window.__c = { ids: [], statuses: [] };
  // The share entry makes \`share\` work for every entry's class of the page.
  import('/pkg/share.js').then(() => import('/pkg/${entry}.js')).then(({ ManagedEventSource }) => {
    const es = new ManagedEventSource(${streams} + '/sse?c=${c}', { share: ${share}, lastEventIdParam: 'lastEventId', baseMs: 50, maxMs: 200${more} });
    es.onmessage = (e) => window.__c.ids.push(Number(e.lastEventId));
    es.onstatus = (s) => window.__c.statuses.push(s);
    window.__c.es = es;
  });`;
const state = `return { ids: window.__c.ids, leader: window.__c.es?.leader ?? null, status: window.__c.es?.status ?? null }`;

/** Reads every tab, one after another (WebDriver has one current window at a time). */
async function readAll(tabs, list = tabs.list) {
  const out = [];
  for (const t of list) out.push(await tabs.read(t));
  return out;
}

/** Contiguous from the first id seen: no gap, no repeat. */
const contiguous = (ids) => ids.every((id, i) => i === 0 || id === ids[i - 1] + 1);

/** Four tabs, the leader's closed: the same steps with either browser, through `tabs`. */
async function fourTabs(tabs, name, viaFetch = false) {
  await get(`/plan?c=${name}&then=stream`);
  for (const tab of tabs.list) await tabs.run(tab, viaFetch ? client(name, true, 'location.origin', 'fetch', ", transport: 'fetch'") : client(name, true));
  assert.ok(await until(10000, async () => (await readAll(tabs)).every((s) => s.ids.length >= 20)), 'every tab gets events');
  let states = await readAll(tabs);
  let log = await get(`/log?c=${name}`);
  assert.equal(log.attempts.length, 1, 'the server sees one connection');
  assert.equal(log.maxOpen, 1);
  assert.equal(states.filter((s) => s.leader).length, 1, 'exactly one leader');
  for (const s of states) assert.ok(contiguous(s.ids), `a tab missed or repeated an event: ${s.ids}`);
  const leader = tabs.list[states.findIndex((s) => s.leader)];
  await tabs.close(leader);
  const rest = tabs.list.filter((t) => t !== leader);
  const seenBefore = await readAll(tabs, rest);
  assert.ok(
    await until(10000, async () => (await readAll(tabs, rest)).every((s, i) => s.ids.length >= seenBefore[i].ids.length + 20)),
    'the stream goes on after the leader went',
  );
  states = await readAll(tabs, rest);
  log = await get(`/log?c=${name}`);
  assert.equal(log.attempts.length, 2, 'exactly one new connection');
  assert.match(log.attempts[1].url, /lastEventId=\d+/, 'it resumes from the last id');
  assert.equal(states.filter((s) => s.leader).length, 1, 'exactly one leader again');
  for (const s of states) assert.ok(contiguous(s.ids), `a tab missed or repeated an event across the failover: ${s.ids.join(',')}`);
  const resumed = Number(log.attempts[1].url.match(/lastEventId=(\d+)/)[1]);
  // The fetch transport also sends the header a native reconnect would.
  if (viaFetch) assert.equal(log.attempts[1].lastEventIdHeader, String(resumed));
  return { resumed, took: log.attempts[1].t - log.attempts[0].t };
}

test('Chromium: four tabs share one connection; the leader closes, one takes over, no event lost', async () => {
  const context = await chromium.newContext();
  const pages = await Promise.all([0, 1, 2, 3].map(() => context.newPage()));
  for (const p of pages) await p.goto(`${server.url}/tests/browser/harness.html?suite=none`);
  const r = await fourTabs(
    {
      list: pages,
      run: (p, js) => p.evaluate(js),
      read: (p) => p.evaluate(new Function(state)),
      close: (p) => p.close(),
    },
    'share-chromium',
  );
  console.log(`[figure] Chromium: after the leader's tab closed, one new connection resumed after id ${r.resumed}`);
  await context.close();
});

test('Chromium, fetch transport: four tabs share one fetch (the leader holds it), with the same failover', async () => {
  const context = await chromium.newContext();
  const pages = await Promise.all([0, 1, 2, 3].map(() => context.newPage()));
  for (const p of pages) await p.goto(`${server.url}/tests/browser/harness.html?suite=none`);
  const r = await fourTabs(
    { list: pages, run: (p, js) => p.evaluate(js), read: (p) => p.evaluate(new Function(state)), close: (p) => p.close() },
    'share-fetch',
    true,
  );
  console.log(`[figure] Chromium, fetch transport: after the leader's tab closed, one new connection resumed after id ${r.resumed}`);
  await context.close();
});

test('Firefox: four windows share one connection, with the same failover', { skip: haveFirefox() ? false : 'no Firefox' }, async () => {
  const ff = await firefox();
  try {
    const handles = [];
    for (let i = 0; i < 4; i++) {
      const h = i === 0 ? (await ff.currentHandle()) : await ff.newWindow();
      await ff.switchTo(h);
      await ff.goto(`${server.url}/tests/browser/harness.html?suite=none`);
      handles.push(h);
    }
    let current = null;
    const on = async (h) => {
      if (current !== h) await ff.switchTo(h);
      current = h;
    };
    await fourTabs(
      {
        list: handles,
        run: async (h, js) => (await on(h), ff.run(js)),
        read: async (h) => (await on(h), ff.run(state)),
        close: async (h) => (await on(h), await ff.closeWindow(), (current = null)),
      },
      'share-firefox',
    );
  } finally {
    await ff.close();
  }
});

test('connections at the server for 1, 4 and 16 tabs, shared and not', async () => {
  const rows = [];
  for (const tabs of [1, 4, 16]) {
    for (const share of [false, true]) {
      const name = `count-${tabs}-${share}`;
      await get(`/plan?c=${name}&then=stream`);
      const context = await chromium.newContext();
      const pages = await Promise.all(Array.from({ length: tabs }, () => context.newPage()));
      // The pages come from localhost and the streams from 127.0.0.1: browsers allow six HTTP/1.1
      // connections per host, and unshared streams beyond six would also starve the pages' own requests.
      const pagesAt = server.url.replace('127.0.0.1', 'localhost');
      for (const p of pages) {
        await p.goto(`${pagesAt}/tests/browser/harness.html?suite=none`);
        await p.evaluate(client(name, share, JSON.stringify(server.url)));
      }
      // Every tab that can is heard from (a loaded machine may take seconds over 16 tabs), or the time is up.
      const expected = share ? tabs : Math.min(tabs, 6);
      let live = 0;
      await until(15000, async () => {
        const states = await Promise.all(pages.map((p) => p.evaluate(new Function(state))));
        live = states.filter((s) => s.ids.length > 0).length;
        return live >= expected;
      });
      const log = await get(`/log?c=${name}`);
      rows.push({ tabs, share, connections: log.maxOpen, live });
      await context.close();
      await sleep(200);
    }
  }
  const table = rows.map((r) => `| ${r.tabs} | ${r.share ? 'shared' : 'one each'} | ${r.connections} | ${r.live} of ${r.tabs} |`).join('\n');
  console.log(`[figure] connections by tabs:\n| tabs | share | connections at the server | tabs receiving events |\n| ---: | --- | ---: | ---: |\n${table}`);
  for (const r of rows) {
    if (r.share) assert.equal(r.connections, 1, `${r.tabs} shared tabs`);
    assert.equal(r.share ? r.live : Math.min(r.live, 6), r.share ? r.tabs : Math.min(r.tabs, 6), JSON.stringify(r));
  }
});
