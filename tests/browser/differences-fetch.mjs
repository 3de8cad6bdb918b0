// Issue 45: the fetch transport's rows of the differences tables (docs/reference.md: the drop-in table and
// "Where it differs from EventSource" under the fetch transport), beside the browser's own EventSource
// against the same server: the last event id's bytes (an id outside Latin-1 too), a cross-origin resume
// through a server whose CORS allows only what EventSource sends, URLs that can never be fetched, untrusted
// events, and the stall watchdog that counts comment lines.
//
// Rows covered elsewhere, not repeated here:
// - every status (204, 401/403, 404/410, 429/503 with Retry-After, 500, a wrong type): fetch.mjs,
//   "statuses with no probe" and "429 and 503 honour Retry-After";
// - the server's retry: field as a floor under later delays: fetch.mjs, the same test;
// - a URL that does not parse throws a TypeError (EventSource: a SyntaxError): fetch.mjs, "bad input";
// - comment lines count as life for the stall watchdog: fetch.mjs, "the stall watchdog counts comment lines".
import { ManagedEventSource } from '/pkg/fetch.js';
import * as lib from './lib.mjs';

const { test, until, sleep, ok, eq, reported, WEBKIT, withWarnings, failsOnUnusableUrl } = lib;
const plan = (c, ...a) => lib.plan(`dfetch-${c}`, ...a);
const log = (c) => lib.log(`dfetch-${c}`);
const url = (c, extra) => lib.url(`dfetch-${c}`, extra);
const F = { transport: 'fetch', jitter: 'none', baseMs: 20, maxMs: 200 };

/** The bytes a native EventSource's reconnect sends in Last-Event-ID after an event with id `id`. */
async function nativeIdBytes(c, id) {
  await plan(c, `retry:50+textid:${encodeURIComponent(id)}`, 'stall');
  const native = new EventSource(url(c));
  ok(await until(5000, async () => (await log(c)).attempts.length >= 2), 'native reconnected');
  native.close();
  return (await log(c)).attempts[1].lastEventIdBytes;
}

for (const [name, id] of [['ellipsis', '\u2026\u{1F600}'], ['latin1', 'caf\u00e9'], ['ascii', 'a-1']]) {
  test(`the last event id ${JSON.stringify(id)} on a reconnect: the Last-Event-ID header carries the bytes a native EventSource sends (WebKit: an id outside ASCII goes by lastEventIdParam alone)`, async () => {
    const utf8 = [...new TextEncoder().encode(id)];
    eq(await nativeIdBytes(`${name}-native`, id), utf8, 'native: the UTF-8 bytes');
    const ascii = /^[\0-\x7f]*$/.test(id);
    // Without lastEventIdParam.
    await plan(`${name}-ours`, `textid:${encodeURIComponent(id)}`, 'stall');
    const before = reported.length;
    const ours = new ManagedEventSource(url(`${name}-ours`), F);
    ok(await until(5000, async () => (await log(`${name}-ours`)).attempts.length >= 2), 'reconnected');
    eq(ours.lastEventId, id);
    ours.close();
    const header = (await log(`${name}-ours`)).attempts[1].lastEventIdBytes;
    if (!WEBKIT || ascii) {
      eq(header, utf8, 'the same bytes as native');
      eq(reported.length, before, 'nothing reported');
    } else {
      // WebKit sends a header's characters as UTF-8 and fetch takes none past U+00FF: no string carries
      // these bytes. The header is left out (never garbled), and that is reported, once.
      eq(header, null, 'no header');
      eq(reported.length, before + 1, 'reported once');
      ok(reported.at(-1) instanceof RangeError && reported.at(-1).message.includes('lastEventIdParam'), String(reported.at(-1)));
    }
    // With lastEventIdParam, the id always reaches the server: in the query, and in the header as above.
    await plan(`${name}-param`, `textid:${encodeURIComponent(id)}`, 'stall');
    const param = new ManagedEventSource(url(`${name}-param`), { ...F, lastEventIdParam: 'lastEventId' });
    ok(await until(5000, async () => (await log(`${name}-param`)).attempts.length >= 2));
    param.close();
    const second = (await log(`${name}-param`)).attempts[1];
    ok(second.url.endsWith('&lastEventId=' + encodeURIComponent(id)), second.url);
    eq(second.lastEventIdBytes, !WEBKIT || ascii ? utf8 : null);
  });
}

/** The second origin's URL for client `c` (tests/server's /strict: its CORS allows only what EventSource sends). */
async function strictUrl(c) {
  const { origin } = await (await fetch('/strict')).json();
  return `${origin}/sse?c=${encodeURIComponent(`dfetch-${c}`)}`;
}

test('cross-origin, a server whose CORS allows only what EventSource sends: native resumes with Last-Event-ID and no preflight', async () => {
  await plan('cors-native', 'retry:50+events:2', 'stall');
  const native = new EventSource(await strictUrl('cors-native'));
  ok(await until(5000, async () => (await log('cors-native')).attempts.length >= 2));
  native.close();
  const l = await log('cors-native');
  eq([l.attempts.map((a) => a.lastEventIdHeader), l.preflights.length], [[null, '2'], 0]);
});

test('cross-origin, the same server, fetch transport with lastEventIdParam: the id goes in the query alone, no preflight, no event lost', async () => {
  await plan('cors-param', 'events:2,events:3', 'stall');
  const ours = new ManagedEventSource(await strictUrl('cors-param'), { ...F, lastEventIdParam: 'lastEventId' });
  const ids = [];
  ours.onmessage = (e) => ids.push(e.lastEventId);
  ok(await until(5000, () => ids.length >= 5), `${ids}`);
  ok(await until(5000, async () => (await log('cors-param')).attempts.length >= 3));
  ours.close();
  eq(ids, ['1', '2', '3', '4', '5']);
  const l = await log('cors-param');
  eq(l.attempts.slice(0, 3).map((a) => a.lastEventIdHeader), [null, null, null], 'no header');
  ok(l.attempts[1].url.endsWith('&lastEventId=2') && l.attempts[2].url.endsWith('&lastEventId=5'), l.attempts[2].url);
  eq(l.preflights, [], 'no preflight');
});

test('cross-origin, the same server, fetch transport without lastEventIdParam: the refused preflight fails the stream at once, naming the header, never retried', async () => {
  await plan('cors-header', 'events:2', 'stall');
  const ours = new ManagedEventSource(await strictUrl('cors-header'), F);
  const seen = { statuses: [], errors: [], retries: 0, gaveUp: 0 };
  ours.onstatus = (s) => seen.statuses.push(s);
  ours.onerror = (e) => seen.errors.push(e.message ?? '');
  ours.onretry = () => seen.retries++;
  ours.ongiveup = () => seen.gaveUp++;
  ok(await until(5000, () => ours.status === 'failed'), `statuses ${seen.statuses}`);
  await sleep(500); // a ladder of 20 ms would have retried many times by now
  eq(seen.statuses, ['open', 'reconnecting', 'failed']);
  eq([seen.retries, seen.gaveUp], [1, 1], 'one retry (the resume), then no more');
  ok(/Last-Event-ID header/.test(seen.errors.at(-1)) && /lastEventIdParam/.test(seen.errors.at(-1)), seen.errors.at(-1));
  const l = await log('cors-header');
  // The first attempt; the resume's preflight, refused; the check without the header, answered.
  eq(l.preflights.map((p) => p.headers), ['last-event-id']);
  eq(l.attempts.map((a) => a.lastEventIdHeader), [null, null]);
  // reconnectNow() is the user's say: it tries again (and fails the same way).
  ours.reconnectNow();
  ok(await until(5000, () => seen.statuses.length === 5), `${seen.statuses}`);
  ours.close();
  eq(seen.statuses.slice(3, 5), ['reconnecting', 'failed']);
  eq((await log('cors-header')).preflights.length, 2);
});

test('a stream that has moved to another origin (a same-origin URL redirected to that server): native resumes there with Last-Event-ID; the fetch transport counts it as cross-origin, so with lastEventIdParam the id goes in the query alone and no event is lost', async () => {
  // Every request to the same-origin URL is redirected to the strict origin, which runs the plan.
  await plan('moved-native', 'retry:50+events:2', 'stall');
  const native = new EventSource(url('moved-native', '&moved=302:strict'));
  const n = [];
  native.onmessage = (e) => n.push(e.lastEventId);
  ok(await until(5000, async () => (await log('moved-native')).attempts.filter((a) => a.step !== 'moved').length >= 2), 'native reconnected');
  native.close();
  let l = await log('moved-native');
  eq([n, l.attempts.filter((a) => a.step !== 'moved').map((a) => a.lastEventIdHeader), l.preflights.length], [['1', '2'], [null, '2'], 0], 'native');
  await plan('moved-param', 'events:2,events:3', 'stall');
  const ours = new ManagedEventSource(url('moved-param', '&moved=302:strict'), { ...F, lastEventIdParam: 'lastEventId' });
  const ids = [];
  ours.onmessage = (e) => ids.push(e.lastEventId);
  ok(await until(5000, () => ids.length >= 5), `ours: ${ids} (${ours.status})`);
  ok(await until(5000, async () => (await log('moved-param')).attempts.filter((a) => a.step !== 'moved').length >= 3));
  ours.close();
  eq(ids, ['1', '2', '3', '4', '5']);
  l = await log('moved-param');
  const answered = l.attempts.filter((a) => a.step !== 'moved');
  eq(answered.slice(0, 3).map((a) => a.lastEventIdHeader), [null, null, null], 'no header');
  ok(answered[1].url.includes('&lastEventId=2&') && answered[2].url.includes('&lastEventId=5&'), answered[2].url);
  eq(l.preflights, [], 'no preflight');
});

test('a stream that has moved to another origin, fetch transport without lastEventIdParam: the refused preflight fails the stream at once, naming the origin it moved to and the header', async () => {
  await plan('moved-header', 'events:2', 'stall');
  const ours = new ManagedEventSource(url('moved-header', '&moved=302:strict'), F);
  const seen = { statuses: [], errors: [] };
  ours.onstatus = (s) => seen.statuses.push(s);
  ours.onerror = (e) => seen.errors.push(e.message ?? '');
  ok(await until(5000, () => ours.status === 'failed'), `statuses ${seen.statuses}`);
  await sleep(500); // a ladder of 20 ms would have retried many times by now
  ours.close();
  eq(seen.statuses, ['open', 'reconnecting', 'failed', 'closed']);
  const { origin } = await (await fetch('/strict')).json();
  ok(seen.errors.at(-1).startsWith(`managed-eventsource: ${origin} does not allow the Last-Event-ID header`) && /lastEventIdParam/.test(seen.errors.at(-1)), seen.errors.at(-1));
  eq((await log('moved-header')).preflights.map((p) => p.headers), ['last-event-id']);
});

test('cross-origin resume where the server is down: the ladder, as for any network failure (the check fails too)', async () => {
  await plan('cors-down', 'events:2', 'stall');
  const base = await strictUrl('cors-down');
  const { url: refused } = await (await fetch('/refused')).json();
  let n = 0;
  // The first attempt reaches the server; later ones a port that refuses connections.
  const ours = new ManagedEventSource(() => (++n === 1 ? base : `${refused}?n=${n}`), F);
  const retries = [];
  ours.onretry = (r) => retries.push(r.attempt);
  ok(await until(5000, () => retries.length >= 3), `${retries}`);
  eq(ours.status, 'reconnecting');
  ours.close();
});

/** The URLs no request goes out for. */
const NEVER = ['mailto:someone@example.com', 'ftp://127.0.0.1/stream', 'about:blank', 'javascript:void 0', 'file:///etc/hostname', 'unknown:scheme'];

test('a URL that can never be fetched: failed at once with an error that says why, no request, no retry', async () => {
  for (const u of NEVER) {
    const ours = new ManagedEventSource(u, F);
    const seen = { statuses: [], errors: [], retries: 0 };
    ours.onstatus = (s) => seen.statuses.push(s);
    ours.onerror = (e) => seen.errors.push([ours.readyState, e.status, e.message]);
    ours.onretry = () => seen.retries++;
    ok(await until(2000, () => ours.status === 'failed'), u);
    await sleep(200);
    const statuses = seen.statuses.slice();
    ours.close();
    eq([statuses, seen.retries, seen.errors.length], [['failed'], 0, 1], u);
    eq(seen.errors[0][0], 2);
    ok(seen.errors[0][2].includes('can never be fetched') && seen.errors[0][2].includes(u.slice(0, u.indexOf(':') + 1)), seen.errors[0][2]);
  }
});

test('a URL function (here async) that later returns a URL that can never be fetched: failed at once, no retry; reconnectNow() asks it again', () =>
  failsOnUnusableUrl((f) => new ManagedEventSource(f, F), 'dfetch-urlfn', 'about:blank', { async: true }));

test('data: URLs: fetch reads one in every engine (a stream that ends, then the ladder); one that is not a stream fails at once', async () => {
  const ours = new ManagedEventSource('data:text/event-stream,id:%207%0Adata:%20hi%0A%0A', F);
  const seen = [];
  ours.onmessage = (e) => seen.push([e.data, e.lastEventId]);
  ok(await until(3000, () => seen.length >= 2), 'delivered, then again after the ladder');
  ours.close();
  eq(seen.slice(0, 2), [['hi', '7'], ['hi', '7']]);
  const plain = new ManagedEventSource('data:text/plain,data:%20hi%0A%0A', F);
  let retries = 0, message = '';
  plain.onretry = () => retries++;
  plain.onerror = (e) => (message = e.message);
  ok(await until(2000, () => plain.status === 'failed'));
  await sleep(200);
  plain.close();
  eq(retries, 0);
  ok(message.includes('answers the same every time'), message);
});

test('event.isTrusted: false for every event of the fetch transport (only the browser makes trusted events)', async () => {
  await plan('trust', 'events:1', '404');
  const ours = new ManagedEventSource(url('trust'), F);
  const trusted = [];
  for (const t of ['open', 'message', 'error']) ours.addEventListener(t, (e) => trusted.push([t, e.isTrusted]));
  ok(await until(3000, () => ours.status === 'failed'));
  ours.close();
  eq(trusted, [['open', false], ['message', false], ['error', false], ['error', false]]);
});

test('the stall watchdog counts comment lines: a server that keeps alive with comments does not stall, and nothing is warned', async () => {
  await withWarnings(async (warned) => {
    await plan('quiet', '', 'quiet:1:50');
    // Comments every 50 ms; a second with no byte at all would be a stall (a margin for a busy machine).
    const ours = new ManagedEventSource(url('quiet'), { ...F, stallTimeoutMs: 1000 });
    let errors = 0;
    ours.onerror = () => errors++;
    ok(await until(3000, () => ours.status === 'open'));
    await sleep(3000);
    ours.close();
    eq([errors, warned], [0, []]);
  });
});
