// Issue 52: our client and our server's topics and authorization, composed as an app composes them: one
// event log on a real Redis (redis-server on a free loopback port) serving `/feed/<topic>` with
// `serve(req, res, { topic })` and an `authorize(request, topic)` hook, and the package as it ships in
// Chromium, Firefox and WebKit, on both transports, with no option but the transport (and `probe` for the
// refusals on the EventSource transport, which cannot read a status otherwise). Two topics published
// side by side: each client receives its own topic's events alone, each once and in order, across a cut of
// every connection while both topics go on; each resume names its own topic's last id. A missing token is a
// 401 and another topic's token a 403: the client ends 'failed' with onunauthorized, and asks no more.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached, pageServer } from './browser.mjs';
import { server } from '../node/fixtures/redis-stores.mjs';
import { startRedis } from '../../scripts/redis-server.mjs';

const { createEventLog, createRedisStore } = server;

const LIMIT_MS = 30_000;
const EVENTS = 10; // a topic's events before the cut, and again after it

let redis = null;
let log = null;
/** Every stream request: { topic, token, lastEventId } as the server received it. */
const requests = [];
/** The responses streaming now, by topic. */
const streaming = new Map();
const site = await pageServer((req, res, u) => {
  if (u.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return res.end('<!doctype html><meta charset="utf-8"><title>topics</title>');
  }
  const m = /^\/feed\/([^/]+)$/.exec(u.pathname);
  if (!m) return false;
  const topic = decodeURIComponent(m[1]);
  requests.push({ topic, token: u.searchParams.get('token'), lastEventId: req.headers['last-event-id'] ?? u.searchParams.get('lastEventId') });
  if (!streaming.has(topic)) streaming.set(topic, new Set());
  streaming.get(topic).add(res);
  res.on('close', () => streaming.get(topic).delete(res));
  log.serve(req, res, { topic });
});

before(async () => {
  redis = await startRedis();
  log = createEventLog({
    store: await createRedisStore({ url: redis.url, key: `page-topics:${process.pid}` }),
    // A token names the one topic it admits; none is a 401, another topic's a 403 (false).
    authorize: (req, topic) => {
      const token = new URL(req.url, 'http://x').searchParams.get('token');
      return token === null ? 401 : token === `member-of-${topic}`;
    },
  });
});
after(async () => {
  await log?.close();
  await site.close();
  await redis?.stop();
});

const requestsOf = (topic) => requests.filter((q) => q.topic === topic);

for (const transport of ['eventsource', 'fetch']) {
  inEachEngine(`${transport}: two topics of one log on Redis, each client its own topic's events once and in order across a cut; a 401 and a 403 end the client, never retried`, async (engine, page) => {
    const name = `${engine}-${transport}`;
    const topics = { a: `room:${name}:a`, b: `room:${name}:b`, noToken: `room:${name}:c`, otherToken: `room:${name}:d` };
    await page.goto(`${site.url}/`);
    await page.evaluate(`(() => {
      const topics = ${JSON.stringify(topics)};
      const r = (window.__r = { got: { a: [], b: [] }, statuses: {}, unauthorized: {} });
      import(${JSON.stringify(transport === 'fetch' ? '/pkg/fetch.js' : '/pkg/index.js')}).then(({ ManagedEventSource }) => {
        const open = (key, token) => {
          const url = '/feed/' + encodeURIComponent(topics[key]) + (token ? '?token=' + token : '');
          const feed = new ManagedEventSource(url, ${transport === 'fetch' ? "{ transport: 'fetch' }" : 'key === "a" || key === "b" ? {} : { probe: true }'});
          feed.onmessage = (e) => r.got[key]?.push([e.data, e.lastEventId]);
          feed.onstatus = (s) => (r.statuses[key] ??= []).push(s);
          feed.onunauthorized = ({ status }) => (r.unauthorized[key] = status);
        };
        open('a', 'member-of-' + topics.a);
        open('b', 'member-of-' + topics.b);
        open('noToken', null);
        open('otherToken', 'member-of-' + topics.a);
      });
      return 1;
    })()`);
    const statusIs = (r, key, s) => r.statuses[key]?.at(-1) === s;
    await pageReached(page, (r) => statusIs(r, 'a', 'open') && statusIs(r, 'b', 'open'), LIMIT_MS);
    const ids = { a: [], b: [] };
    const publish = async (from) => {
      for (let i = from; i < from + EVENTS; i++) {
        ids.a.push(await log.topic(topics.a).append({ data: `a${i}` }));
        ids.b.push(await log.topic(topics.b).append({ data: `b${i}` }));
      }
    };
    await publish(0);
    await pageReached(page, (r) => r.got.a.length >= EVENTS && r.got.b.length >= EVENTS, LIMIT_MS);
    // Every connection of both topics is cut; both topics go on while the clients come back.
    for (const key of ['a', 'b']) for (const res of streaming.get(topics[key])) res.destroy();
    await publish(EVENTS);
    const r = await pageReached(
      page,
      (r) => r.got.a.length >= 2 * EVENTS && r.got.b.length >= 2 * EVENTS && statusIs(r, 'noToken', 'failed') && statusIs(r, 'otherToken', 'failed'),
      LIMIT_MS,
    );
    for (const key of ['a', 'b']) {
      const expected = ids[key].map((id, i) => [`${key}${i}`, id]);
      assert.deepEqual(r.got[key], expected, `${name} topic ${key}: its own events, each once, in order, with the ids append gave`);
      const asked = requestsOf(topics[key]);
      assert.equal(asked.length, 2, `${name} topic ${key}: one connection and one resume: ${JSON.stringify(asked)}`);
      assert.equal(asked[0].lastEventId, null);
      assert.equal(asked[1].lastEventId, ids[key][EVENTS - 1], `${name} topic ${key}: the resume names its own topic's last id`);
    }
    assert.deepEqual([r.unauthorized.noToken, r.unauthorized.otherToken], [401, 403]);
    for (const key of ['noToken', 'otherToken']) {
      // Counted after both topics' cut and resume, which took the ladder's first wait: a retry would have
      // come by now. On the EventSource transport the probe asks once more, by fetch, to read the status.
      assert.equal(requestsOf(topics[key]).length, transport === 'fetch' ? 1 : 2, `${name} ${key}: refused, never retried: ${JSON.stringify(requestsOf(topics[key]))}`);
      assert.ok(!r.statuses[key].includes('open'), `${name} ${key}: ${r.statuses[key]}`);
    }
    await page.evaluate('1'); // the page is closed with the browser
  });
}
