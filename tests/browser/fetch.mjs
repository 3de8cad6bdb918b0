// Issue 24: the fetch transport (managed-eventsource/fetch), against the fault-injecting server: headers
// and fresh tokens, bodies, Last-Event-ID, every status read off the response, Retry-After, the server's
// retry: field, the parser's hard cases arriving in separate chunks, size and volume, close(), bad input,
// the user's own code failing, and chaos.
import { ManagedEventSource, createManagedStream } from '/pkg/fetch.js';
import * as main from '/pkg/index.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, url, watch, reported, WEBKIT, chaos, visibility, stallAfterAnnouncement } from './lib.mjs';

const F = { transport: 'fetch', jitter: 'none', baseMs: 50, maxMs: 200 };
const fetchOf = (o = {}) => ({ ...F, ...o });

test('a fresh token on every attempt (sync and async headers), Accept added, and the server sees each', async () => {
  await plan('tok', '503,500', 'events:1');
  let n = 0;
  const es = new ManagedEventSource(url('tok'), fetchOf({ headers: async () => (await sleep(5), { Authorization: `Bearer t${++n}` }) }));
  const seen = watch(es);
  ok(await until(5000, () => (seen.events.length >= 2)), `${seen.events.length} events`);
  es.close();
  const { attempts } = await log('tok');
  eq(attempts.slice(0, 4).map((a) => a.auth), ['Bearer t1', 'Bearer t2', 'Bearer t3', 'Bearer t4']);
  ok(attempts.every((a) => a.accept === 'text/event-stream'), 'Accept: text/event-stream');
  // A Headers object and a plain object, given once.
  await plan('tok2', '', 'stall');
  const h = new Headers({ 'X-One': '1' });
  const es2 = new ManagedEventSource(url('tok2'), fetchOf({ headers: h }));
  ok(await until(3000, () => es2.status === 'open'));
  es2.close();
  eq((await log('tok2')).attempts[0].accept, 'text/event-stream');
});

test('resume: the Last-Event-ID header carries the last id, and lastEventIdParam still works', async () => {
  await plan('lid', 'events:3,events:2', 'stall');
  const es = new ManagedEventSource(url('lid'), fetchOf({ lastEventIdParam: 'lastEventId' }));
  const seen = watch(es);
  ok(await until(5000, () => seen.events.length === 5));
  ok(await until(3000, async () => (await log('lid')).attempts.length >= 3));
  es.close();
  const { attempts } = await log('lid');
  eq(attempts.slice(0, 3).map((a) => a.lastEventIdHeader), [null, '3', '5']);
  ok(!attempts[0].url.includes('lastEventId=') && attempts[1].url.endsWith('lastEventId=3'), attempts[1].url);
  eq(seen.events.map((e) => e[2]), ['1', '2', '3', '4', '5'], 'each id once, in order');
  // The events are MessageEvents with the stream's origin, retargeted to the instance, as EventSource's are.
  let ev;
  const es2 = new ManagedEventSource(url('lid2'), F);
  await plan('lid2', '', 'stream');
  es2.addEventListener('message', (e) => (ev ??= { e, target: e.target, current: e.currentTarget }));
  ok(await until(3000, () => ev));
  es2.close();
  ok(ev.e instanceof MessageEvent, 'a MessageEvent');
  eq([ev.e.origin, ev.e.type, ev.target === es2, ev.current === es2, ev.e.currentTarget], [location.origin, 'message', true, true, null]);
  eq(es.lastEventId, '5');
});

test('statuses with no probe: 204 closes after one request, 404 and 410 fail at once, 500 and a wrong type take the ladder', async () => {
  await plan('s204', '204', 'stream');
  const es = new ManagedEventSource(url('s204'), F);
  const seen = watch(es);
  const errors = [];
  es.addEventListener('error', (e) => errors.push([e.status, e.message]));
  ok(await until(3000, () => es.status === 'closed'));
  await sleep(300);
  eq((await log('s204')).attempts.length, 1, 'one request: the status came with the response');
  eq(seen.statuses, ['closed'], 'closed at once, never reconnecting');
  eq(errors.length, 1);
  eq(errors[0][0], 204);
  for (const status of [404, 410]) {
    await plan(`s${status}`, String(status), 'stream');
    const es = new ManagedEventSource(url(`s${status}`), F);
    const gave = [];
    es.ongiveup = (i) => gave.push(i);
    ok(await until(3000, () => es.status === 'failed'));
    await sleep(300);
    eq((await log(`s${status}`)).attempts.length, 1);
    eq(gave, [{ attempts: 0 }]);
    es.close();
  }
  // The third attempt goes to a port on loopback that refuses connections: a network failure.
  await plan('s500', '500,type', 'events:1');
  const { url: refused } = await (await fetch('/refused')).json();
  let attempt = 0;
  const es5 = new ManagedEventSource(() => (++attempt === 3 ? refused : url('s500')), F);
  const st = [];
  es5.addEventListener('error', (e) => st.push(e.status));
  const got = [];
  es5.onmessage = (e) => got.push(e.data);
  ok(await until(5000, () => got.length === 1), 'recovered through the ladder');
  es5.close();
  eq(st.slice(0, 3), [500, 200, undefined], 'the error event carries the status (none for a network failure)');
});

test('401 and 403 call onunauthorized and wait; reconnectNow sends a fresh token', async () => {
  for (const status of [401, 403]) {
    const c = `u${status}`;
    await plan(c, String(status), 'stream');
    let token = 'old';
    const es = new ManagedEventSource(url(c), fetchOf({ headers: () => ({ Authorization: token }) }));
    const heard = [];
    es.onunauthorized = (i) => {
      heard.push(i);
      token = 'fresh';
    };
    ok(await until(3000, () => heard.length === 1));
    eq(heard, [{ status }]);
    eq(es.status, 'failed');
    await sleep(400);
    eq((await log(c)).attempts.length, 1, 'no retry on its own');
    es.reconnectNow();
    ok(await until(3000, () => es.status === 'open'));
    eq((await log(c)).attempts.map((a) => a.auth), ['old', 'fresh']);
    es.close();
  }
});

test('429 and 503 honour Retry-After (capped by maxHintMs); the retry: field is a floor under later delays', async () => {
  await plan('ra', 'ra:429:1,ra:503:1', 'events:1');
  const es = new ManagedEventSource(url('ra'), F);
  const got = [];
  es.onmessage = (e) => got.push(e.data);
  ok(await until(8000, () => got.length === 1));
  es.close();
  const t = (await log('ra')).attempts.map((a) => a.t);
  ok(t[1] - t[0] >= 990 && t[2] - t[1] >= 990, `gaps ${t[1] - t[0]}, ${t[2] - t[1]} ms`);
  // Capped: Retry-After 3600 s with maxHintMs 300 waits 300 ms plus the ladder's.
  await plan('racap', 'ra:503:3600', 'stall');
  const es2 = new ManagedEventSource(url('racap'), fetchOf({ maxHintMs: 300 }));
  ok(await until(4000, () => es2.status === 'open'));
  es2.close();
  const t2 = (await log('racap')).attempts.map((a) => a.t);
  ok(t2[1] - t2[0] >= 290, `${t2[1] - t2[0]} ms`);
  // retry: 400 on the first stream; every later attempt waits at least that long.
  await plan('rf', 'retry:400+events:1,500', 'events:1');
  const es3 = new ManagedEventSource(url('rf'), F);
  const n = [];
  es3.onmessage = () => n.push(1);
  ok(await until(6000, () => n.length === 2));
  es3.close();
  const t3 = (await log('rf')).attempts.map((a) => a.t);
  ok(t3[1] - t3[0] >= 390 && t3[2] - t3[1] >= 390, `gaps ${t3[1] - t3[0]}, ${t3[2] - t3[1]} ms`);
});

test('the parser in separate chunks: a BOM split in two, a CRLF split in two, a character split in two, multi-line data', async () => {
  await plan('split', 'split', 'stall');
  const es = new ManagedEventSource(url('split'), F);
  const seen = watch(es);
  ok(await until(3000, () => seen.events.length === 3), JSON.stringify(seen.events));
  es.close();
  eq(seen.events, [['message', 'one\ntwo', ''], ['message', '✓', '5'], ['message', 'last', '5']]);
  // The same bytes through a native EventSource: the same events.
  await plan('splitn', 'split', 'stall');
  const native = new EventSource(url('splitn'));
  const n = [];
  native.onmessage = (e) => n.push(['message', e.data, e.lastEventId]);
  ok(await until(3000, () => n.length === 3));
  native.close();
  // WebKit's own EventSource drops the data line before a CRLF split across two chunks (WebKitGTK 2.50):
  // ours is right where it is wrong, so there the difference is printed, not held against us.
  if (WEBKIT) figure('WebKit EventSource on the same split stream', JSON.stringify(n));
  else eq(n, seen.events, 'as the native EventSource parses it');
  // The special cases the EventSource suites use.
  await plan('special', 'special', 'stall');
  const es2 = new ManagedEventSource(url('special'), F);
  const all = [];
  es2.onmessage = (e) => all.push([e.data, e.lastEventId]);
  es2.addEventListener('custom', (e) => all.push(['custom', e.data, e.lastEventId]));
  ok(await until(3000, () => all.length === 9), JSON.stringify(all));
  es2.close();
  eq(all, [['first\nsecond', ''], ['ünïcødé ✓ 𝄞 中文', ''], ['explicitly a message', ''], ['custom', 'crlf', '7'], ['no space', '7'], ['eight', '8'], ['reset', ''], ['', ''], ['last', '']]);
});

test('a 5 MB event and 100,000 events in order', async () => {
  await plan('big', 'big:5000000', 'stall');
  const es = new ManagedEventSource(url('big'), F);
  let data = null;
  es.onmessage = (e) => (data = e.data);
  ok(await until(10000, () => data !== null));
  es.close();
  eq(data.length, 5000000);
  ok(/^x+$/.test(data));
  await plan('many', 'events:100000', 'stall');
  const es2 = new ManagedEventSource(url('many'), F);
  let n = 0, order = true;
  const t0 = performance.now();
  es2.onmessage = (e) => {
    n++;
    if (e.lastEventId !== String(n)) order = false;
  };
  ok(await until(30000, () => n === 100000), `${n} events`);
  figure('fetch transport, 100,000 events from the test server', `${Math.round(performance.now() - t0)} ms`);
  es2.close();
  ok(order, 'in order, each once');
});

test('close() mid-stream aborts the fetch: the server sees the connection go, and nothing is delivered after', async () => {
  await plan('cl', '', 'stream');
  const es = new ManagedEventSource(url('cl'), F);
  let n = 0;
  es.onmessage = () => n++;
  ok(await until(3000, () => n >= 3));
  es.close();
  const at = n;
  ok(await until(2000, async () => (await log('cl')).open === 0), 'the server saw the stream close');
  await sleep(200);
  eq(n, at, 'no event after close()');
  eq(es.readyState, 2);
  // close() from inside a listener, in the middle of a chunk of many events.
  await plan('cl2', 'events:500', 'stall');
  const es2 = new ManagedEventSource(url('cl2'), F);
  let m = 0;
  es2.onmessage = () => ++m === 10 && es2.close();
  ok(await until(3000, () => m >= 10));
  await sleep(200);
  eq(m, 10, 'the rest of the chunk is not delivered');
  // close() while the headers function is still pending: no request is ever made.
  await plan('cl3', '', 'stream');
  let release;
  const es3 = new ManagedEventSource(url('cl3'), fetchOf({ headers: () => new Promise((r) => (release = r)) }));
  ok(await until(1000, () => release), 'the headers function was called');
  es3.close();
  release({});
  await sleep(200);
  eq((await log('cl3')).attempts.length, 0);
});

test('POST: method and a body per attempt; the open event has the status and headers', async () => {
  await plan('post', '503', 'events:1');
  let n = 0;
  const es = new ManagedEventSource(url('post'), fetchOf({ method: 'post', body: () => JSON.stringify({ prompt: 'hi', n: ++n }), headers: { 'Content-Type': 'application/json' } }));
  let open;
  es.onopen = (e) => (open = e);
  ok(await until(3000, () => open));
  es.close();
  eq(open.status, 200);
  eq(open.headers.get('content-type'), 'text/event-stream');
  const { attempts } = await log('post');
  eq(attempts.map((a) => [a.method, a.body]), [['POST', '{"prompt":"hi","n":1}'], ['POST', '{"prompt":"hi","n":2}']]);
});

test('the stall watchdog counts comment lines; silence still counts as a stall', async () => {
  await plan('cm', 'comments:100', 'comments:100');
  const es = new ManagedEventSource(url('cm'), fetchOf({ stallTimeoutMs: 600 }));
  const seen = watch(es);
  await sleep(2000);
  es.close();
  eq(seen.errors, 0, 'comments kept it alive');
  eq((await log('cm')).attempts.length, 1);
  await plan('sil', 'stall', 'events:1');
  const es2 = new ManagedEventSource(url('sil'), fetchOf({ stallTimeoutMs: 400 }));
  const got = [];
  es2.onmessage = (e) => got.push(e.data);
  ok(await until(3000, () => got.length === 1), 'a silent stream is replaced');
  es2.close();
});

test("with no option, the fetch transport hears managed-eventsource/server's heartbeat: silence for two intervals is a stall, and the reconnect resumes", async () => {
  // Attempt 1 announces 300 ms, sends events 1-3, then nothing (its comment interval is longer than the test).
  const { seen, after, attempts } = await stallAfterAnnouncement('f-announced', 300, 100000, (u) => new ManagedEventSource(u, fetchOf({ jitter: 'none', baseMs: 50 })));
  ok(after >= 600 && after < 2500, `noticed after ${Math.round(after)} ms`);
  eq(attempts.length, 2);
  eq(attempts[1].lastEventIdHeader, '3');
  ok(attempts[1].url.endsWith('lastEventId=3'), `and in the parameter the server named: ${attempts[1].url}`);
  eq(seen.slice(0, 5), ['event 1', 'event 2', 'event 3', 'event 4', 'event 5']);
});

test('bad input: a TypeError naming the option; one class for both entries in a page, and the main entry alone refuses the fetch options', async () => {
  const u = url('never');
  const bad = [
    [{ transport: 'fetch', headers: 5 }, /option headers/],
    [{ transport: 'fetch', fetch: 'no' }, /option fetch/],
    [{ transport: 'fetch', body: 'x' }, /option body.*GET/],
    [{ transport: 'fetch', method: 'HEAD', body: () => 'x' }, /option body.*HEAD/],
    [{ transport: 'fetch', method: 'CONNECT' }, /option method/],
    [{ transport: 'fetch', method: 'a b' }, /option method/],
    [{ transport: 'fetch', method: 5 }, /option method/],
    [{ transport: 'websocket' }, /option transport/],
  ];
  for (const [o, re] of bad) {
    const e = throws(() => new ManagedEventSource(u, o));
    ok(e instanceof TypeError && re.test(e.message), `${JSON.stringify(o)}: ${e}`);
  }
  // One shell per page: the main entry, imported beside the fetch entry, has the same class, which takes
  // the fetch transport.
  eq(main.ManagedEventSource, ManagedEventSource, 'one class for both entries');
  // A page that never imports the fetch entry (here a copy of the package of its own) has no fetch transport.
  const alone = await import('/pkg/index.js?main-alone');
  for (const k of ['headers', 'method', 'body', 'fetch']) {
    const e = throws(() => new alone.ManagedEventSource(u, { [k]: k === 'fetch' ? fetch : 'x' }));
    ok(e instanceof TypeError && e.message.includes(`option ${k} needs transport 'fetch'`), String(e));
  }
  const e = throws(() => new alone.ManagedEventSource(u, { transport: 'fetch' }));
  ok(e instanceof TypeError && e.message.includes('managed-eventsource/fetch'), String(e));
  // A URL that does not parse throws from the constructor, as EventSource's does.
  ok(throws(() => new ManagedEventSource('http://[bad', F)) instanceof TypeError);
  eq((await log('never')).attempts.length, 0);
});

test("the user's code failing: reported, the attempt fails and takes the ladder, nothing traps", async () => {
  await plan('uf', '', 'events:1');
  let n = 0;
  const before = reported.length;
  const es = new ManagedEventSource(url('uf'), fetchOf({
    headers: () => {
      n++;
      if (n === 1) throw new Error('headers threw');
      if (n === 2) return Promise.reject(new Error('headers rejected'));
      return {};
    },
    body: null,
    method: 'GET',
  }));
  const got = [];
  es.onmessage = (e) => got.push(e.data);
  ok(await until(3000, () => got.length === 1), `headers: ${n} calls, ${got.length} events`);
  es.close();
  eq(reported.slice(before).map((e) => e?.message), ['headers threw', 'headers rejected']);
  // A fetch that returns something else than a Response, then a real one.
  let k = 0;
  await plan('uf2', '', 'events:1');
  const es2 = new ManagedEventSource(url('uf2'), fetchOf({ fetch: (u, init) => (++k === 1 ? Promise.resolve({ nope: true }) : fetch(u, init)) }));
  const got2 = [];
  es2.onmessage = (e) => got2.push(e.data);
  ok(await until(3000, () => got2.length === 1), `fetch: ${k} calls, ${got2.length} events`);
  es2.close();
  ok(reported.slice(before).some((e) => /must return a Response/.test(e?.message)), 'reported');
  // A fetch option that throws rather than rejects (a wrapper's bug): reported too, then a real one.
  let j = 0;
  await plan('uf4', '', 'events:1');
  const es4 = new ManagedEventSource(url('uf4'), fetchOf({ fetch: (u, init) => (++j === 1 ? myFetch(u, init) : fetch(u, init)) }));
  const got4 = [], errors4 = [];
  es4.onmessage = (e) => got4.push(e.data);
  es4.onerror = (e) => errors4.push(e.message);
  ok(await until(3000, () => got4.length === 1), `fetch: ${j} calls, ${got4.length} events`);
  es4.close();
  ok(reported.slice(before).some((e) => e instanceof ReferenceError && /myFetch/.test(e.message)), `reported: ${reported.slice(before)}`);
  ok(/the fetch option failed: .*myFetch/.test(errors4[0]), errors4[0]);
  // The init a fetch wrapper sees: a plain object it can spread.
  let init;
  await plan('uf3', '', 'stall');
  const es3 = new ManagedEventSource(url('uf3'), fetchOf({ fetch: (u, i) => ((init = i), fetch(u, i)), headers: { A: '1' } }));
  ok(await until(3000, () => init), 'the fetch option was called');
  es3.close();
  eq({ ...init, signal: init.signal instanceof AbortSignal }, { method: 'GET', headers: { Accept: 'text/event-stream', A: '1' }, cache: 'no-store', credentials: 'same-origin', redirect: 'follow', mode: 'cors', signal: true });
});

test('a URL function may return a Promise, on both transports of the fetch entry; createManagedStream takes the fetch transport too', async () => {
  await plan('pu', '', 'events:2');
  const es = new ManagedEventSource(async () => (await sleep(5), url('pu', '&via=promise')), F);
  const got = [];
  es.onmessage = (e) => got.push(e.data);
  ok(await until(3000, () => got.length === 2));
  ok(es.url.endsWith('via=promise'), es.url);
  es.close();
  // The EventSource transport of the same entry awaits one too; a rejection is reported and takes the ladder;
  // close() while one is pending makes no request.
  await plan('pues', '', 'events:2');
  let calls = 0;
  const before = reported.length;
  const es2 = new ManagedEventSource(() => (++calls === 1 ? Promise.reject(new Error('no token yet')) : sleep(5).then(() => url('pues', '&via=es'))), { baseMs: 30, jitter: 'none' });
  const got2 = [];
  es2.onmessage = (e) => got2.push(e.data);
  ok(await until(3000, () => got2.length === 2), `${got2.length} events`);
  ok(es2.url.endsWith('via=es'), es2.url);
  es2.close();
  eq(reported.slice(before).map((e) => e?.message), ['no token yet']);
  await plan('pwait', '', 'stream');
  const es3 = new ManagedEventSource(() => sleep(100).then(() => url('pwait')));
  es3.close();
  await sleep(300);
  eq((await log('pwait')).attempts.length, 0, 'no request after close()');
  // The main entry, in a page without the fetch entry, says where a Promise is awaited.
  const alone = await import('/pkg/index.js?main-alone');
  const e = throws(() => new alone.ManagedEventSource(async () => url('never')));
  ok(e instanceof TypeError && e.message.includes('managed-eventsource/fetch'), String(e));
  await plan('cms', '', 'events:2');
  const seen = [];
  const stop = createManagedStream(url('cms'), { onMessage: (e) => seen.push(e.data) }, F);
  ok(await until(3000, () => seen.length === 2));
  stop();
});

test('a hidden tab keeps its request open (no abort on every tab switch); pauseWhenHiddenMs closes it and resumes with Last-Event-ID', async () => {
  await plan('hid', '', 'stream');
  const es = new ManagedEventSource(url('hid'), F);
  let n = 0;
  es.onmessage = () => n++;
  ok(await until(3000, () => n >= 3));
  for (let i = 0; i < 5; i++) {
    visibility('hidden');
    await sleep(60);
    visibility('visible');
    await sleep(60);
  }
  visibility('hidden');
  const at = n;
  await sleep(500);
  ok(n > at, 'events go on while hidden');
  visibility('visible');
  es.close();
  eq((await log('hid')).attempts.length, 1, 'one request through five tab switches');
  await plan('hidp', '', 'stream');
  const es2 = new ManagedEventSource(url('hidp'), fetchOf({ pauseWhenHiddenMs: 200, baseMs: 60000, maxMs: 60000 }));
  let m = 0;
  es2.onmessage = () => m++;
  ok(await until(3000, () => m >= 3));
  visibility('hidden');
  ok(await until(3000, async () => (await log('hidp')).open === 0), 'paused: the server sees the stream go');
  visibility('visible');
  ok(await until(3000, async () => (await log('hidp')).attempts.length === 2), 'visible again: at once, not after baseMs');
  es2.close();
  const last = (await log('hidp')).attempts[1].lastEventIdHeader;
  ok(Number(last) >= 3, `resumed with Last-Event-ID ${last}`);
});

test('fetch chaos: 10,000 numbered events through kills, stalls and 503s, each exactly once and in order', async () => {
  await chaos('fchaos', 11, 'fetch chaos', (u) => new ManagedEventSource(u, fetchOf({ jitter: 'full', baseMs: 5, maxMs: 40, stallTimeoutMs: 1000 })));
}, { timeout: 150000 });
