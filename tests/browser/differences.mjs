// Issue 45: every row of the differences table (docs/reference.md, "A drop-in EventSource, and where it
// differs") written as a test, the EventSource transport in its default backoff mode beside the browser's
// own EventSource against the same server, so that a change in either is a failing test. The fetch
// transport's rows are in differences-fetch.mjs.
//
// Rows covered elsewhere, not repeated here:
// - `reconnect: 'browser'` is the native client's behaviour, scenario by scenario: dropin.mjs.
// - a server event named `error` is an event: hardening.mjs test 2.
// - an empty `id:` field resets the last id: hardening.mjs test 6; an id too long for a URL: test 10.
// - every event's target and currentTarget is the instance: reentry.mjs, hardening.mjs test 4.
// - the ladder's delays at the server, per strategy: api.mjs.
import { ManagedEventSource } from '/pkg/index.js';
import * as lib from './lib.mjs';
import '/pkg/share.js'; // for the tests with `share`

const { test, until, sleep, ok, eq, withWarnings, failsOnUnusableUrl } = lib;
const plan = (c, ...a) => lib.plan(`diff-${c}`, ...a);
const log = (c) => lib.log(`diff-${c}`);
const url = (c, extra) => lib.url(`diff-${c}`, extra);

/** Ladder options whose first delay is a known 1200 ms (no jitter), far from the server's `retry:` 50
 * (which Firefox raises to its floor of 500 ms). */
const LADDER = { jitter: 'none', baseMs: 1200, maxMs: 1200 };

/** What a source does: its readyState at each event, its errors and opens. */
function trace(es) {
  const seen = { events: [], errors: 0, opens: 0, states: [], trusted: [] };
  es.addEventListener('open', (e) => (seen.opens++, seen.trusted.push(e.isTrusted)));
  es.addEventListener('error', (e) => (seen.errors++, seen.states.push(es.readyState), seen.trusted.push(e.isTrusted)));
  es.addEventListener('message', (e) => (seen.events.push(e.lastEventId), seen.trusted.push(e.isTrusted)));
  return seen;
}

test('row "reconnecting after an ended stream" and row "retry:": native reconnects the same object after retry:, ours makes a new EventSource after the ladder, blind to retry:', async () => {
  // Native: the server's retry: 50 sets the delay, and the object reconnects itself.
  await plan('re-native', 'retry:50+events:2', 'stall');
  const native = new EventSource(url('re-native'));
  const n = trace(native);
  ok(await until(5000, async () => (await log('re-native')).attempts.length >= 2), 'native reconnected');
  eq(n.states[0], 0, 'native: CONNECTING while it reconnects');
  native.close();
  const [n0, n1] = (await log('re-native')).attempts;
  ok(n1.t - n0.t < 1100, `native waited ${Math.round(n1.t - n0.t)} ms, about retry: 50 (Firefox: at least 500)`);
  // Ours: the same server says retry: 50; the ladder's 1200 ms is what it waits, through a new EventSource.
  await plan('re-ours', 'retry:50+events:2', 'stall');
  const made = [];
  const Native = globalThis.EventSource;
  globalThis.EventSource = class extends Native {
    constructor(...a) {
      super(...a);
      made.push(this);
    }
  };
  let ours;
  try {
    ours = new ManagedEventSource(url('re-ours'), LADDER);
    const retries = [];
    ours.onretry = (r) => retries.push(r.delayMs);
    ok(await until(5000, async () => (await log('re-ours')).attempts.length >= 2), 'ours reconnected');
    eq(retries, [1200], 'the ladder, not retry:');
    eq(ours.readyState, 1);
  } finally {
    globalThis.EventSource = Native;
    ours?.close();
  }
  const [o0, o1] = (await log('re-ours')).attempts;
  ok(o1.t - o0.t >= 1190, `ours waited ${Math.round(o1.t - o0.t)} ms, the ladder's 1200`);
  eq(made.length, 2, 'a new EventSource for the reconnect');
  ok(made[0] !== made[1] && made[0].readyState === 2, 'the first one closed');
});

test('row "the last event id on a reconnect": native sends Last-Event-ID (an id outside Latin-1 as its UTF-8 bytes), ours the lastEventIdParam query parameter and no header', async () => {
  const ID = '\u2026\u{1F600}';
  const utf8 = [...new TextEncoder().encode(ID)];
  await plan('id-native', 'retry:50+textid', 'stall');
  const native = new EventSource(url('id-native'));
  ok(await until(5000, async () => (await log('id-native')).attempts.length >= 2));
  native.close();
  const n = (await log('id-native')).attempts;
  eq(n.map((a) => a.lastEventIdBytes), [null, utf8], 'native: the header, as UTF-8');
  ok(!n[1].url.includes('lastEventId='), 'native: nothing in the URL');
  await plan('id-ours', 'textid', 'stall');
  const ours = new ManagedEventSource(url('id-ours'), { ...LADDER, baseMs: 20, lastEventIdParam: 'lastEventId' });
  ok(await until(5000, async () => (await log('id-ours')).attempts.length >= 2));
  eq(ours.lastEventId, ID);
  ours.close();
  const o = (await log('id-ours')).attempts;
  eq(o.map((a) => a.lastEventIdHeader), [null, null], 'ours: no header');
  ok(o[1].url.endsWith('&lastEventId=' + encodeURIComponent(ID)), o[1].url);
});

test('row "a 4xx or 5xx status, a wrong content type": native fails for good after one request, ours takes the ladder', async () => {
  for (const step of ['404', '500', '503', 'type']) {
    await plan(`st-native-${step}`, step, step);
    const native = new EventSource(url(`st-native-${step}`));
    const n = trace(native);
    ok(await until(3000, () => native.readyState === 2), `native ${step}: CLOSED`);
    await sleep(150);
    eq([n.errors, (await log(`st-native-${step}`)).attempts.length], [1, 1], `native ${step}: one error, one request`);
    native.close();
    await plan(`st-ours-${step}`, step, 'stream');
    const ours = new ManagedEventSource(url(`st-ours-${step}`), { ...LADDER, baseMs: 30 });
    const statuses = [];
    ours.onstatus = (s) => statuses.push(s);
    ok(await until(3000, () => ours.status === 'open'), `ours ${step}: reconnected and open`);
    ours.close();
    eq(statuses.slice(0, 2), ['reconnecting', 'open'], `ours ${step}`);
    eq((await log(`st-ours-${step}`)).attempts.length, 2);
  }
});

test('row "204 No Content": native closes for good, ours counts a failed attempt (the status is invisible to an EventSource)', async () => {
  await plan('204-native', '204', '204');
  const native = new EventSource(url('204-native'));
  ok(await until(3000, () => native.readyState === 2));
  native.close();
  await plan('204-ours', '204', 'stream');
  const ours = new ManagedEventSource(url('204-ours'), { ...LADDER, baseMs: 30 });
  ok(await until(3000, () => ours.status === 'open'), 'reconnected after the 204');
  ours.close();
  eq((await log('204-ours')).attempts.map((a) => a.step), ['204', 'stream']);
});

test('row "readyState while waiting to reconnect": CONNECTING for both; ours says reconnecting', async () => {
  await plan('wait', 'events:1', 'stall');
  const ours = new ManagedEventSource(url('wait'), { ...LADDER, baseMs: 5000, maxMs: 5000 });
  ok(await until(3000, () => ours.status === 'reconnecting'));
  eq([ours.readyState, ours.CONNECTING], [0, 0]);
  ours.close();
  // Native: a dropped stream that it will reconnect is CONNECTING too (also checked in the first test).
  await plan('wait-native', 'retry:5000+events:1', 'stall');
  const native = new EventSource(url('wait-native'));
  const n = trace(native);
  ok(await until(3000, () => n.errors === 1));
  eq(native.readyState, 0);
  native.close();
});

test('row "event.isTrusted": true for the events an EventSource makes, native or through ours; false for the error ours makes for a stall', async () => {
  await plan('trust-native', 'retry:50+events:2', '404');
  const native = new EventSource(url('trust-native'));
  const n = trace(native);
  ok(await until(3000, () => native.readyState === 2));
  native.close();
  eq(n.trusted, [true, true, true, true, true], 'native: open, two messages, the error at the end, the 404\'s');
  await plan('trust-ours', 'events:2', 'stall');
  const ours = new ManagedEventSource(url('trust-ours'), { ...LADDER, stallTimeoutMs: 300 });
  const o = trace(ours);
  ok(await until(3000, () => o.errors >= 2), 'the end of the stream, then a stall');
  ours.close();
  // open, 2 messages, the browser's error at the end of the stream; open again; the stall's error.
  eq(o.trusted, [true, true, true, true, true, false]);
});

/** The URLs no request goes out for, each failing a native EventSource at once in every engine. */
const NEVER = ['mailto:someone@example.com', 'ftp://127.0.0.1/stream', 'about:blank', 'javascript:void 0', 'file:///etc/hostname', 'ws://127.0.0.1/stream', 'unknown:scheme'];

/** What a client does with a URL for `ms`: its statuses, errors (with their message), retries and opens. */
async function outcome(es, ms = 600) {
  const seen = { statuses: [], errors: [], retries: 0, opens: 0, gaveUp: [] };
  es.onstatus = (s) => seen.statuses.push(s);
  es.onerror = (e) => seen.errors.push([es.readyState, e.message ?? '']);
  es.onretry = () => seen.retries++;
  es.ongiveup = (g) => seen.gaveUp.push(g.attempts);
  es.onopen = () => seen.opens++;
  await until(ms, () => es.readyState === 2 || seen.opens > 0);
  await sleep(ms); // long enough for a ladder of baseMs 20 to have retried many times
  const now = { ...seen, statuses: seen.statuses.slice(), attempt: es.attempt, readyState: es.readyState };
  es.close();
  return now;
}

test('row "a URL that can never be fetched": native fails it at once (CLOSED); ours fails at once too, says why, and never touches the ladder', async () => {
  for (const u of NEVER) {
    const native = new EventSource(u);
    const n = trace(native);
    ok(await until(2000, () => native.readyState === 2), `native ${u}: CLOSED`);
    eq([n.errors, n.opens], [1, 0], `native ${u}`);
    native.close();
    const seen = await outcome(new ManagedEventSource(u, { jitter: 'none', baseMs: 20 }));
    eq([seen.statuses, seen.retries, seen.gaveUp, seen.attempt, seen.readyState, seen.opens], [['failed'], 0, [0], 0, 2, 0], `ours ${u}`);
    eq(seen.errors.length, 1, `ours ${u}: one error`);
    eq(seen.errors[0][0], 2, `ours ${u}: CLOSED in the error event`);
    ok(seen.errors[0][1].includes('can never be fetched'), `ours ${u}: the error says why: ${seen.errors[0][1]}`);
  }
});

test('row "a URL that can never be fetched", data: and blob: URLs: where the native client fails one, ours fails at once; where it streams one, ours does', async () => {
  const blob = URL.createObjectURL(new Blob(['data: from a blob\n\n'], { type: 'text/event-stream' }));
  for (const u of ['data:text/event-stream,data:%20hi%0A%0A', 'data:text/plain,data:%20hi%0A%0A', blob]) {
    const native = new EventSource(u);
    const n = trace(native);
    ok(await until(2000, () => n.errors > 0), `native ${u}: an error`);
    const nativeOpened = n.opens > 0;
    native.close();
    const seen = await outcome(new ManagedEventSource(u, { jitter: 'none', baseMs: 20 }));
    if (nativeOpened) {
      ok(seen.opens > 0 && seen.statuses[0] === 'open', `ours ${u} streams, as native: ${JSON.stringify(seen)}`);
    } else {
      eq([seen.statuses, seen.retries, seen.opens, seen.readyState], [['failed'], 0, 0, 2], `ours ${u} fails, as native`);
      ok(seen.errors[0][1].includes('answers the same every time'), seen.errors[0][1]);
    }
  }
  URL.revokeObjectURL(blob);
});

test('a URL function that later returns a URL that can never be fetched: failed at once, no retry; reconnectNow() asks it again', () =>
  failsOnUnusableUrl((f) => new ManagedEventSource(f, { jitter: 'none', baseMs: 20 }), 'diff-urlfn', 'mailto:someone@example.com'));

test("stallTimeoutMs without heartbeatEvent against a server that keeps alive with comments: the recurring stall is said once, naming heartbeatEvent", async () => {
  await withWarnings(async (warned) => {
    await plan('stalls', '', 'quiet:1:50');
    const ours = new ManagedEventSource(url('stalls'), { jitter: 'none', baseMs: 20, stallTimeoutMs: 200 });
    let errors = 0;
    ours.onerror = () => errors++;
    ok(await until(5000, () => errors >= 4), `${errors} stalls`);
    ours.close();
    eq(warned.length, 1, `warned once: ${JSON.stringify(warned)}`);
    ok(/stallTimeoutMs ended 2 connections/.test(warned[0]) && warned[0].includes('heartbeatEvent') && warned[0].includes('comment lines'), warned[0]);
    // A stream that delivers nothing and stalls (a dead proxy, say) is not warned about.
    await plan('stalls-dead', '', 'stall');
    const dead = new ManagedEventSource(url('stalls-dead'), { jitter: 'none', baseMs: 20, stallTimeoutMs: 200 });
    let deadErrors = 0;
    dead.onerror = () => deadErrors++;
    ok(await until(5000, () => deadErrors >= 3));
    dead.close();
    eq(warned.length, 1, 'nothing more');
  });
});

/** What a source's listeners see until `n` events: each message's and retry-hint event's lastEventId. */
function ids(es) {
  const seen = [];
  for (const type of ['message', 'retry-hint']) es.addEventListener(type, (e) => seen.push(`${type[0]}:${e.lastEventId}`));
  return seen;
}

test('not a difference: an event on a reconnected stream before its first id carries the last id, as on the native object; an id: field resets it; a follower of a shared stream hears the same', async () => {
  // Three responses: two events with ids 1 and 2; an event with no id (named retry-hint, which is not
  // ours here); then ids 1 and 2, an empty id: field (a reset), and an event with no id.
  const steps = (c) => plan(c, 'slow:300+retry:50+events:2,retry:50+hintdata:x,retry:50+idreset', 'stall');
  const EXPECTED = ['m:1', 'm:2', 'r:2', 'm:1', 'm:2', 'm:', 'm:'];
  await steps('carry-native');
  const native = new EventSource(url('carry-native'));
  const n = ids(native);
  ok(await until(5000, () => n.length >= 7), `native: ${n}`);
  native.close();
  eq(n, EXPECTED, 'native');
  for (const extra of [{}, { lastEventIdParam: 'lastEventId' }]) {
    const c = `carry-ours-${Object.keys(extra).length}`;
    await steps(c);
    const ours = new ManagedEventSource(url(c), { ...LADDER, baseMs: 50, ...extra });
    const o = ids(ours);
    // What the instance says at each event is what the event says.
    const agree = [];
    ours.addEventListener('retry-hint', (e) => agree.push(e.lastEventId === ours.lastEventId));
    ok(await until(5000, () => o.length >= 7), `ours ${c}: ${o}`);
    ours.close();
    eq(o, EXPECTED, `ours ${c}`);
    eq(agree, [true], `ours ${c}: the instance's lastEventId`);
  }
  if (typeof BroadcastChannel !== 'function' || typeof navigator.locks?.request !== 'function') return;
  await steps('carry-shared');
  const name = `carry-${Math.random()}`;
  const leader = new ManagedEventSource(url('carry-shared'), { ...LADDER, baseMs: 50, share: name });
  const follower = new ManagedEventSource(url('carry-shared'), { ...LADDER, baseMs: 50, share: name });
  const l = ids(leader), f = ids(follower);
  const followerIds = [];
  follower.addEventListener('message', () => followerIds.push(follower.lastEventId));
  ok(await until(5000, () => l.length >= 7 && f.length >= 7), `shared: ${l} / ${f}`);
  ok(leader.leader && !follower.leader);
  leader.close();
  follower.close();
  eq([l, f], [EXPECTED, EXPECTED], 'shared: the leader, the follower');
  eq(followerIds, ['1', '2', '1', '2', '', ''], "the follower's lastEventId follows the reset too");
});
