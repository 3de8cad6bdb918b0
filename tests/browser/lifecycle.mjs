// The page's life and the engines' quirks (issue 26): a hidden page pausing its stream, a restore from the
// back-forward cache, a stream stuck connecting, reconnectNow() from inside a handler, the constructor
// with no argument, and the option check agreeing with the shell, in every engine the suites run in. A
// client's own start is start.mjs's.
import { ManagedEventSource, prepare } from '/pkg/index.js';
import { ManagedWebSocket } from '/pkg/websocket.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, url, watch, WEBKIT, visibility, inner } from './lib.mjs';
import { readOptions, valid } from '/src/web/options.js';

test('pauseWhenHiddenMs: a page hidden that long closes its stream, and visible again it reconnects at once, resuming', async () => {
  await plan('pause', '', 'stream');
  const es = new ManagedEventSource(url('pause'), { pauseWhenHiddenMs: 300, lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 60000 });
  const seen = watch(es);
  ok(await until(3000, () => seen.events.length >= 3));
  visibility('hidden');
  ok(await until(3000, async () => (await log('pause')).open === 0), 'the server sees the stream go');
  eq([es.status, es.readyState], ['reconnecting', 0]);
  eq(seen.errors, 0, 'no error: the server did nothing wrong');
  const heard = seen.events.length;
  await sleep(500);
  eq(seen.events.length, heard, 'nothing arrives while paused');
  eq((await log('pause')).attempts.length, 1, 'nothing reconnects while hidden');
  visibility('visible');
  // The ladder said 60 s; "at once" is anything well before that.
  ok(await until(20000, () => es.status === 'open' && seen.events.length > heard + 2));
  es.close();
  const l = await log('pause');
  eq(l.attempts.length, 2);
  ok(l.attempts[1].url.endsWith(`lastEventId=${heard}`), l.attempts[1].url);
  const ids = seen.events.map((e) => Number(e[2]));
  eq(ids, ids.map((_, i) => i + 1), 'no event lost or repeated');
  eq(seen.statuses, ['open', 'reconnecting', 'open', 'closed']);
});

test('pauseWhenHiddenMs: visible again before the pause, the stream stays; without the option, hidden changes nothing', async () => {
  await plan('pause-short', '', 'stream');
  const es = new ManagedEventSource(url('pause-short'), { pauseWhenHiddenMs: 1500 });
  ok(await until(3000, () => es.status === 'open'));
  visibility('hidden');
  await sleep(200);
  visibility('visible');
  await sleep(1800);
  eq(es.status, 'open');
  eq((await log('pause-short')).attempts.length, 1);
  es.close();
  await plan('no-pause', '', 'stream');
  const plain = new ManagedEventSource(url('no-pause'));
  ok(await until(3000, () => plain.status === 'open'));
  visibility('hidden');
  await sleep(500);
  eq(plain.status, 'open');
  visibility('visible');
  plain.close();
  eq((await log('no-pause')).attempts.length, 1);
  // Checked as the other delays are.
  for (const [v, E] of [[-1, RangeError], [Infinity, RangeError], ['5', TypeError], [2 ** 31, RangeError]]) {
    const e = throws(() => new ManagedEventSource(url('x'), { pauseWhenHiddenMs: v }));
    ok(e instanceof E && e.message.includes('pauseWhenHiddenMs'), `${v}: ${e}`);
  }
});

test('pauseWhenHiddenMs closes a socket too, and reopens it when visible', async () => {
  const wsUrl = `${location.origin.replace(/^http/, 'ws')}/ws?c=pause-ws`;
  await plan('pause-ws', '', 'stream');
  const ws = new ManagedWebSocket(wsUrl, { pauseWhenHiddenMs: 300, baseMs: 60000 });
  ok(await until(3000, () => ws.status === 'open'));
  visibility('hidden');
  ok(await until(3000, () => ws.status === 'reconnecting'));
  visibility('visible');
  ok(await until(20000, () => ws.status === 'open'));
  ws.close();
  eq((await log('pause-ws')).attempts.length, 2);
});

test('a restore from the back-forward cache replaces the stream at once, resuming, whatever the engine fires after', async () => {
  // WebKit cuts the connection on entering the cache without an event, then fires `error` on restore and
  // waits a full retry delay. Here: a restore (pageshow with persisted) while the stream looks open.
  await plan('bfcache', '', 'stream');
  // Every EventSource the client makes: how many made earlier were still open when each was made.
  const Native = globalThis.EventSource;
  const made = [];
  let mostLive = 0;
  globalThis.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      made.push(this);
      mostLive = Math.max(mostLive, made.filter((x) => inner(x, 'readyState') !== 2).length);
    }
  };
  let es, seen;
  try {
    es = new ManagedEventSource(url('bfcache'), { lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 60000 });
    seen = watch(es);
    ok(await until(3000, () => seen.events.length >= 3));
    dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
    ok(await until(20000, async () => (await log('bfcache')).attempts.length === 2), 'reconnected long before the ladder would have');
    ok(await until(5000, () => es.status === 'open'));
  } finally {
    globalThis.EventSource = Native;
  }
  const l = await log('bfcache');
  ok(/lastEventId=\d+$/.test(l.attempts[1].url), l.attempts[1].url);
  eq(made.length, 2);
  eq(mostLive, 1, 'the old EventSource was closed before the new one was made');
  // WebKit's network process drops a closed stream's connection asynchronously (see the reconnectNow test
  // below): the server may see the new request first.
  if (WEBKIT) ok(l.maxOpen <= 2, `at most the closed one and the new one: ${l.maxOpen}`);
  else eq(l.maxOpen, 1, 'the old connection was closed before the new one opened');
  await sleep(300);
  es.close();
  const ids = seen.events.map((e) => Number(e[2]));
  eq(ids, ids.map((_, i) => i + 1), 'no event lost or repeated');
  eq(seen.errors, 0);
});

test('connectTimeoutMs ends a stream stuck connecting (the server accepts and sends nothing)', async () => {
  await plan('stuck', 'slow:60000', 'stream');
  // The timeout also bounds the healthy second attempt: wide enough for a loaded engine to open it.
  const es = new ManagedEventSource(url('stuck'), { connectTimeoutMs: 1500, jitter: 'none', baseMs: 50 });
  const seen = watch(es);
  ok(await until(10000, () => es.status === 'open'));
  es.close();
  const l = await log('stuck');
  eq(l.attempts.length, 2);
  ok(l.attempts[1].t - l.attempts[0].t >= 1500, 'not before the timeout');
  eq(seen.errors, 1);
  eq(seen.statuses, ['reconnecting', 'open', 'closed']);
  ok(await until(3000, async () => (await log('stuck')).inflight === 0), 'the stuck request was let go');
});

test('reconnectNow() twenty times from inside onmessage: never two streams at the server', async () => {
  await plan('rn20', '', 'stream');
  // Every EventSource the client makes, through the global it constructs them with: when each is made,
  // how many earlier ones had not been closed (readyState 2) yet.
  const Native = globalThis.EventSource;
  let made = [], mostLive = 0;
  globalThis.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      made.push(this);
      mostLive = Math.max(mostLive, made.filter((x) => inner(x, 'readyState') !== 2).length);
    }
  };
  let es;
  try {
    es = new ManagedEventSource(url('rn20'), { baseMs: 20 });
    let n = 0;
    es.onmessage = () => {
      if (n < 20) {
        n++;
        es.reconnectNow();
      }
    };
    ok(await until(15000, () => n === 20 && es.status === 'open'));
    await sleep(300);
  } finally {
    es?.close();
    globalThis.EventSource = Native;
  }
  const l = await log('rn20');
  eq(l.attempts.length, 21);
  eq(made.length, 21);
  // What the library controls: each connection is closed before the next is made.
  eq(mostLive, 1, 'an earlier EventSource still open when the next was made');
  figure('the most streams open at once at the server, after 20 reconnectNow() from onmessage', l.maxOpen);
  // What the engine does with a closed one: Chromium and Firefox drop its connection before the next
  // request leaves; WebKit's network process drops it asynchronously, so the server may see the new
  // request first (two at once for a moment, though the page had closed the first).
  if (WEBKIT) ok(l.maxOpen <= 2, `at most the closed one and the new one: ${l.maxOpen}`);
  else eq(l.maxOpen, 1, 'never two at once');
});

test('the constructors with no argument throw a TypeError, as EventSource and WebSocket do', () => {
  for (const C of [ManagedEventSource, ManagedWebSocket]) {
    const e = throws(() => new C());
    ok(e instanceof TypeError, `${C.name}: ${e}`);
  }
  const native = throws(() => new EventSource());
  ok(native instanceof TypeError);
});

/** Option sets at the rules' edges, then `random` more drawn from edge values with a fixed seed. */
function optionSets(random) {
  let seed = 7;
  const pick = (list) => list[(seed = (seed * 1103515245 + 12345) % 2147483648) % list.length];
  const NUMBERS = [-1, -0, 0, 0.5, 1, 1.5, 999, 1000, 60000, 60001, 2147483647, 2147483648, Infinity, -Infinity, NaN, 1e300, 2 ** 52 + 0.5, 2 ** 53];
  const TEXTS = ['', 'open', 'error', 'opened', 'ope', 'Open', 'x', 'é', 'open'.padEnd(40, '!'), 'e'.repeat(16), 'error\0'];
  const NUMERIC = ['baseMs', 'maxMs', 'factor', 'maxAttempts', 'maxHintMs', 'stallTimeoutMs', 'minUptimeMs', 'connectTimeoutMs', 'pauseWhenHiddenMs'];
  const TEXT = ['lastEventIdParam', 'retryHintEvent', 'heartbeatEvent'];
  const sets = [
    {}, { probe: '' }, { probe: '/probe' }, { probe: true }, { baseMs: 70000 }, { baseMs: 70000, maxMs: 80000 }, { maxMs: 999 },
    { retryHintEvent: 'open' }, { heartbeatEvent: 'error' }, { lastEventIdParam: '' }, { lastEventIdParam: 'open' }, { maxAttempts: 0 },
    { jitter: 'none', reconnect: false, maxAttempts: 2.5 }, { reconnect: 'browser', factor: 0.5 },
  ];
  for (let i = 0; i < random; i++) {
    const o = {};
    for (let k = pick([1, 2, 3]); k > 0; k--) {
      if (pick([0, 1, 2]) === 0) o[pick(TEXT)] = pick(TEXTS);
      else o[pick(NUMERIC)] = pick(NUMBERS);
    }
    sets.push(o);
  }
  return sets;
}

const show = (o) => `{ ${Object.entries(o).map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : Object.is(v, -0) ? '-0' : v}`).join(', ')} }`;

/** What constructing `make()` and closing it gives: 'ok', or the error's name and message. */
function outcome(make) {
  try {
    make().close();
    return 'ok';
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

test('the option check passes exactly the option sets the shell takes (400 sets, the module as built)', async () => {
  // The shell's verdict: this page's package, instantiated by now, builds the shell in the constructor.
  await prepare();
  await plan('check', '', 'stream');
  const x = (await WebAssembly.instantiate(await (await fetch('/target/pkg-build/check.wasm')).arrayBuffer())).instance.exports;
  // Each instance reserves its whole memory: a small stack (scripts/build.mjs) keeps it to two pages.
  ok(x.memory.buffer.byteLength <= 2 * 65536, `the option check's memory is ${x.memory.buffer.byteLength / 65536} pages`);
  let taken = 0, refused = 0;
  for (const o of optionSets(386)) {
    const shell = outcome(() => new ManagedEventSource(url('check'), o)) === 'ok';
    const { values } = readOptions(o, 1, []);
    eq(valid(x, values), shell, `${show(o)}: the shell ${shell ? 'takes' : 'refuses'} it`);
    if (shell) taken++;
    else refused++;
  }
  ok(taken >= 50 && refused >= 50, `both kinds: ${taken} taken, ${refused} refused`);
  figure('option sets the check and the shell agree on (taken, refused)', `${taken}, ${refused}`);
  ok(await until(3000, async () => (await log('check')).open === 0), 'no connection left at the server');
});

