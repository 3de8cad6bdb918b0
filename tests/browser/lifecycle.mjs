// The page's life and the engines' quirks (issue 26): a hidden page pausing its stream, a restore from the
// back-forward cache, a stream stuck connecting, reconnectNow() from inside a handler, the constructor
// with no argument, and prepare() compiling the wasm ahead of the first client (issue 25), in every engine
// the suites run in.
import { ManagedEventSource } from '/pkg/index.js';
import { ManagedWebSocket } from '/pkg/websocket.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, url, watch, WEBKIT, visibility, inner } from './lib.mjs';
import { checked, readOptions, valid } from '/src/web/options.js';

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
  const es = new ManagedEventSource(url('bfcache'), { lastEventIdParam: 'lastEventId', jitter: 'none', baseMs: 60000 });
  const seen = watch(es);
  ok(await until(3000, () => seen.events.length >= 3));
  dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
  ok(await until(20000, async () => (await log('bfcache')).attempts.length === 2), 'reconnected long before the ladder would have');
  ok(await until(5000, () => es.status === 'open'));
  const l = await log('bfcache');
  ok(/lastEventId=\d+$/.test(l.attempts[1].url), l.attempts[1].url);
  eq(l.maxOpen, 1, 'the old connection was closed before the new one opened');
  await sleep(300);
  es.close();
  const ids = seen.events.map((e) => Number(e[2]));
  eq(ids, ids.map((_, i) => i + 1), 'no event lost or repeated');
  eq(seen.errors, 0);
});

test('connectTimeoutMs ends a stream stuck connecting (the server accepts and sends nothing)', async () => {
  await plan('stuck', 'slow:60000', 'stream');
  const es = new ManagedEventSource(url('stuck'), { connectTimeoutMs: 500, jitter: 'none', baseMs: 50 });
  const seen = watch(es);
  ok(await until(10000, () => es.status === 'open'));
  es.close();
  const l = await log('stuck');
  eq(l.attempts.length, 2);
  ok(l.attempts[1].t - l.attempts[0].t >= 500, 'not before the timeout');
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

/**
 * A stand-in for the wasm class `Orig` that calls `count` with its arguments first: a function sharing the
 * prototype, so that a module compiled by WebAssembly.compile is still instanceof it.
 */
/** Whether `bytes` are the package's main module rather than the option check's (src/check.rs), which is
 * a few kilobytes. */
const main = (bytes) => bytes.byteLength > 8000;

/** Whether the compiled module `m` is the option check's (`Module` is WebAssembly.Module itself). */
const checker = (Module, m) => Module.exports(m).some((e) => e.name === 'check');

const counting = (Orig, count) => Object.assign(function (...args) {
  count(...args);
  return new Orig(...args);
}, { prototype: Orig.prototype });

/** A stand-in for EventSource that calls `count` with each one made: a subclass, keeping its statics. */
const countingSource = (Source, count) => class extends Source {
  constructor(...args) {
    super(...args);
    count(this);
  }
};

test('prepare() compiles the wasm off the main thread and instantiates it, so that the first construct does neither', async () => {
  const Module = WebAssembly.Module, Instance = WebAssembly.Instance, Source = globalThis.EventSource;
  let compiles = 0, checks = 0, instances = 0, sources = 0, calls = 0;
  // Stand-ins that count (see counting and countingSource); the package's instance is given exports that
  // count every call into the shell's module.
  WebAssembly.Module = counting(Module, (b) => (main(b) ? compiles++ : b.byteLength > 8 && checks++));
  WebAssembly.Instance = function (m, imports) {
    const inst = new Instance(m, imports);
    if (checker(Module, m)) return inst;
    instances++;
    const exports = {};
    for (const [k, v] of Object.entries(inst.exports)) exports[k] = typeof v === 'function' ? (...a) => (calls++, v(...a)) : v;
    return { exports };
  };
  globalThis.EventSource = countingSource(Source, () => sources++);
  try {
    // A module is one per URL: each of these is a fresh copy of the package, its wasm not yet compiled.
    const early = await import('/pkg/index.js?prepare');
    const p = early.prepare();
    ok(p instanceof Promise);
    eq(early.prepare(), p, 'every call returns the same promise');
    eq(compiles, 0, 'prepare() does not compile on the main thread');
    eq(await p, undefined);
    eq(instances, 1, 'prepare() instantiates it once it is compiled');
    eq(sources, 0, 'and connects nothing');
    await plan('prepared', '', 'stream');
    const before = calls;
    const es = new early.ManagedEventSource(url('prepared'), { lastEventIdParam: 'lastEventId', maxAttempts: 5 });
    eq([compiles, checks, instances], [0, 0, 1], 'the first construct after prepare() neither compiles nor instantiates (the option check neither)');
    // It still takes the later path: its shell starts in a task after the constructor, which in WebKit and
    // Firefox costs the constructor less than the shell's first start there (npm run bench:startup).
    eq([calls - before, sources], [0, 1], "the constructor made its source and ran none of the shell's module");
    ok(await until(1000, () => calls > before), 'the shell starts after the constructor');
    const seen = watch(es);
    ok(await until(5000, () => seen.events.length >= 2), 'and the client streams');
    eq(sources, 1, 'the shell took the source the constructor made');
    es.close();
    eq(es.status, 'closed');
    // Once a client's shell has run, a construct builds its own at once (it costs little then).
    const next = calls;
    const again = new early.ManagedEventSource(url('prepared'));
    ok(calls > next, 'a second construct runs the shell in its constructor');
    again.close();

    // Without prepare(), a first construct whose status is read at once builds its shell then: it compiles
    // and instantiates the wasm on the main thread, once (the later path is the next tests'); prepare()
    // after it resolves with nothing to do.
    const late = await import('/pkg/index.js?no-prepare');
    await plan('unprepared', '', 'stream');
    const other = new late.ManagedEventSource(() => url('unprepared'), { maxAttempts: 3 });
    eq(other.status, 'connecting');
    eq([compiles, instances], [1, 2], 'the first construct compiles and instantiates the wasm itself');
    ok(await until(5000, () => other.readyState === 1));
    other.close();
    eq(await late.prepare(), undefined);
    new late.ManagedEventSource(url('unprepared')).close();
    eq([compiles, instances], [1, 2], 'nothing compiled or instantiated again');

    // Bad options still throw from the constructor after prepare(), as a TypeError or RangeError: after a
    // client, and as the first construct (the option check refuses them, and the shell throws the error).
    const err = throws(() => new early.ManagedEventSource(url('prepared'), { baseMs: -1 }));
    ok(err instanceof RangeError && /baseMs/.test(err.message), `a RangeError naming baseMs, not ${err}`);
    const fresh = await import('/pkg/index.js?prepare-bad');
    await fresh.prepare();
    for (const [options, Error, name] of [[{ baseMs: -1 }, RangeError, /baseMs/], [{ jitter: 'sometimes' }, TypeError, /jitter/], [{ maxAttempts: -1 }, RangeError, /maxAttempts/]]) {
      const e = throws(() => new fresh.ManagedEventSource(url('prepared'), options));
      ok(e instanceof Error && name.test(e.message), `${Error.name} naming ${name}, not ${e}`);
    }
    await sleep(300);
    eq((await log('prepared')).open, 0, 'none left open at the server');
  } finally {
    WebAssembly.Module = Module;
    WebAssembly.Instance = Instance;
    globalThis.EventSource = Source;
  }
});

test('the first construct starts its connection before it compiles the wasm, and bad options close that source', async () => {
  const Module = WebAssembly.Module, Source = globalThis.EventSource;
  const order = [], made = [];
  WebAssembly.Module = counting(Module, () => order.push('compile'));
  globalThis.EventSource = countingSource(Source, (es) => (order.push('source'), made.push(es)));
  try {
    const fresh = await import('/pkg/index.js?early');
    await plan('early', '', 'stream');
    const es = new fresh.ManagedEventSource(url('early'), { lastEventIdParam: 'lastEventId', maxAttempts: 5 });
    eq(order, ['source', 'compile'], 'the request is on its way while the module compiles');
    eq(made.length, 1, 'the shell took that source rather than make another');
    const seen = watch(es);
    ok(await until(5000, () => seen.events.length >= 2), 'and it is the stream');
    eq(inner(made[0], 'url'), es.url);
    // Reconnects make their own sources, as before.
    es.reconnectNow();
    ok(await until(5000, () => made.length === 2 && es.status === 'open'), `a second source for the reconnect: ${made.length}`);
    eq(inner(made[0], 'readyState'), 2, 'the first one closed');
    es.close();
    eq(inner(made[1], 'readyState'), 2);

    // Refused options: the source started for them is closed before the constructor throws.
    await plan('early-bad', '', 'stream');
    const n = made.length;
    const err = throws(() => new fresh.ManagedEventSource(url('early-bad'), { baseMs: -1 }));
    ok(err instanceof RangeError && /baseMs/.test(err.message), `a RangeError naming baseMs, not ${err}`);
    eq(made.length, n + 1);
    eq(inner(made[n], 'readyState'), 2, 'closed by the constructor that threw');
    await sleep(300);
    eq((await log('early-bad')).open, 0, 'no connection left at the server');
    // Chromium and WebKit send an EventSource's request only once the task that made it ends, so one closed
    // in that task sends nothing. Firefox sends it at once (which is what the early start buys there), so
    // its server may see a request, closed at once; none is left open (above).
    if (!/Firefox/.test(navigator.userAgent)) eq((await log('early-bad')).attempts.length, 0, 'no request reached the server');
    figure('requests the server saw from a construct with refused options', (await log('early-bad')).attempts.length);
    // An invalid URL starts nothing early: the constructor throws what EventSource throws, as before.
    const bad = throws(() => new fresh.ManagedEventSource('http://[::1'));
    eq(bad.name, 'SyntaxError', String(bad));
    eq(made.length, n + 1);
  } finally {
    WebAssembly.Module = Module;
    globalThis.EventSource = Source;
  }
});

test("a first construct whose options pass the option check runs none of the shell's wasm: the shell takes over once its module is compiled, off the main thread", async () => {
  const Module = WebAssembly.Module, Instance = WebAssembly.Instance, compile = WebAssembly.compile, Source = globalThis.EventSource;
  let compiles = 0, instances = 0, sources = 0, delay = 0;
  // The package's module only: the constructor compiles and runs the option check's (see main).
  WebAssembly.Module = counting(Module, (b) => main(b) && compiles++);
  WebAssembly.Instance = counting(Instance, (m) => checker(Module, m) || instances++);
  // A background compile that takes `delay` ms longer, to let the connection open before it is done.
  WebAssembly.compile = (b) => compile(b).then((m) => sleep(delay).then(() => m));
  globalThis.EventSource = countingSource(Source, () => sources++);
  try {
    // Options of every kind: the option check's module (src/check.rs) passes them.
    // The server answers after 1.5 s, so that the compile is done first in any engine (Firefox sends the
    // request at once, and a busy machine may compile more slowly than a loopback server answers).
    const a = await import('/pkg/index.js?later-a');
    await plan('later-a', 'slow:1500', 'stream');
    const es = new a.ManagedEventSource(url('later-a', '&x=1'), { withCredentials: false, jitter: 'equal', maxAttempts: 5, baseMs: 200, lastEventIdParam: 'id' });
    eq([compiles, instances, sources], [0, 0, 1], 'the construct compiled nothing and instantiated nothing, and made its source');
    eq(es.url, `${url('later-a')}&x=1`, 'its url is the source\'s, at once');
    const seen = watch(es);
    ok(await until(1400, () => instances === 1), 'the shell is built once the module is compiled, before the open');
    eq([compiles, es.readyState], [0, 0], 'which was not on the main thread');
    ok(await until(5000, () => seen.events.length >= 3), 'and the client streams');
    eq(seen.statuses, ['open'], 'the start after the constructor tells the instance nothing a constructor would not have');
    eq(seen.opens, 1);
    eq(sources, 1, 'the shell took the source the constructor made');
    es.close();
    eq([es.status, es.readyState], ['closed', 2]);

    // The connection opens before the module is compiled: the open builds the shell then, synchronously.
    delay = 3000;
    const b = await import('/pkg/index.js?later-b');
    // Events of two types right behind the headers: the constructor listened only to the open and error,
    // and the shell the open builds listens to the rest before any of them is dispatched.
    await plan('later-b', 'named:3:tick', 'stream');
    const statuses = [], got = [];
    const stop = b.createManagedStream(url('later-b'), {
      onStatus: (s) => statuses.push(s),
      onMessage: (e) => got.push(`message ${e.lastEventId}`),
      events: { tick: (e) => got.push(`tick ${e.lastEventId}`) },
    });
    ok(await until(2500, () => statuses.includes('open')), `open before the compile is done: ${statuses}`);
    eq(statuses, ['connecting', 'open'], "createManagedStream's onStatus hears the start, as from a constructor");
    eq([compiles, instances], [1, 2], 'compiled on the main thread, where the open needed it');
    ok(await until(2000, () => got.length >= 7));
    eq(got.slice(0, 7), ['tick 1', 'message 2', 'tick 3', 'message 4', 'tick 5', 'message 6', 'message 7'], 'every event, in order');
    stop();
    ok(await until(3000, async () => (await log('later-b')).open === 0), 'closed at the server');

    // Closed before the shell took over: nothing left open, and nothing built later by the compile.
    const c = await import('/pkg/index.js?later-c');
    await plan('later-c', '', 'stream');
    const gone = new c.ManagedEventSource(url('later-c'));
    const quiet = watch(gone);
    eq([compiles, instances], [1, 2]);
    gone.close();
    eq([gone.status, gone.readyState], ['closed', 2]);
    eq(quiet.statuses, ['closed']);
    await sleep(3500);
    eq(instances, 3, 'built once, by the close');
    eq((await log('later-c')).open, 0, 'no connection left at the server');

    // A member read before the shell took over answers as the shell would.
    delay = 0;
    const d = await import('/pkg/index.js?later-d');
    await plan('later-d', '', 'stream');
    const asked = new d.ManagedEventSource(url('later-d'));
    eq([asked.status, asked.readyState, asked.attempt, asked.lastEventId], ['connecting', 0, 0, '']);
    ok(await until(5000, () => asked.readyState === 1));
    asked.close();

    // A URL function: the constructor asks it for the first attempt's URL, once, and takes the same path;
    // the shell's first attempt uses that answer, and each later attempt asks again.
    const e = await import('/pkg/index.js?later-e');
    await plan('later-e', 'slow:1500+503', 'stream');
    let asks = 0;
    const [c0, i0, s0] = [compiles, instances, sources];
    const fn = new e.ManagedEventSource(() => url('later-e', `&token=${++asks}`), { jitter: 'none', baseMs: 50, maxAttempts: 5 });
    eq([compiles - c0, instances - i0, sources - s0, asks], [0, 0, 1, 1], 'no compile on the main thread, one source, the function asked once');
    eq(fn.url, url('later-e', '&token=1'));
    ok(await until(1400, () => instances === i0 + 1), 'the shell is built once the module is compiled');
    eq([compiles - c0, asks, sources - s0], [0, 1, 1], 'and its first attempt took the answer and the source the constructor had');
    ok(await until(8000, () => fn.status === 'open'), 'then a 503, and the next attempt opens');
    eq(asks, 2, 'one call an attempt');
    eq((await log('later-e')).attempts.map((a) => a.url.replace(/.*&/, '')), ['token=1', 'token=2']);
    fn.close();
    // One that throws at once: the constructor throws it, as it did when it built the shell, and asks once.
    const f = await import('/pkg/index.js?later-f');
    let thrown = 0;
    const why = new Error('no token yet');
    eq(throws(() => new f.ManagedEventSource(() => (thrown++, (() => { throw why; })()), { maxAttempts: 2 })), why);
    eq(thrown, 1);
  } finally {
    WebAssembly.Module = Module;
    WebAssembly.Instance = Instance;
    WebAssembly.compile = compile;
    globalThis.EventSource = Source;
  }
});

test("the fetch transport's first construct takes the later path too: its request leaves before the module is compiled, and the shell takes it as its first attempt", async () => {
  const Module = WebAssembly.Module, Instance = WebAssembly.Instance, compile = WebAssembly.compile, f0 = globalThis.fetch;
  let compiles = 0, instances = 0, delay = 0;
  WebAssembly.Module = counting(Module, (b) => main(b) && compiles++);
  WebAssembly.Instance = counting(Instance, (m) => checker(Module, m) || instances++);
  WebAssembly.compile = (b) => compile(b).then((m) => sleep(delay).then(() => m));
  // The option fetch: each request, with how many shells had been built when it left.
  const sent = [];
  const fetching = (u, init) => (sent.push({ u, shells: instances, auth: init.headers.Authorization }), f0(u, init));
  try {
    // Options the option check passes, a headers function: the constructor compiles nothing (but the
    // check) and starts the request; the server answers after 1.5 s, once the shell has taken over.
    const a = await import('/pkg/fetch.js?later-fetch-a');
    await plan('later-fetch-a', 'slow:1500', 'stream');
    let tokens = 0;
    const es = new a.ManagedEventSource(url('later-fetch-a'), { transport: 'fetch', maxAttempts: 5, baseMs: 100, headers: () => ({ Authorization: `t${++tokens}` }), fetch: fetching });
    eq([compiles, instances], [0, 0], 'the construct compiled and instantiated nothing of the shell');
    eq(es.url, url('later-fetch-a'), 'its url at once');
    const seen = watch(es);
    ok(await until(1000, () => sent.length === 1), 'its request left');
    eq(sent[0].shells, 0, 'before the shell was built');
    ok(await until(1400, () => instances === 1), 'the shell is built once the module is compiled, before the response');
    eq([compiles, es.readyState], [0, 0], 'which was not on the main thread');
    ok(await until(5000, () => seen.events.length >= 3), 'and the client streams');
    eq(seen.statuses, ['open'], 'the start after the constructor tells the instance nothing a constructor would not have');
    eq([sent.length, tokens], [1, 1], 'the shell took the request the constructor started: one request, one token');
    eq((await log('later-fetch-a')).attempts.map((x) => x.auth), ['t1']);
    es.close();
    ok(await until(3000, async () => (await log('later-fetch-a')).open === 0), 'closed at the server');

    // The response before the module is compiled: it builds the shell then, synchronously.
    delay = 3000;
    const b = await import('/pkg/fetch.js?later-fetch-b');
    await plan('later-fetch-b', '', 'stream');
    const statuses = [];
    const stop = b.createManagedStream(url('later-fetch-b'), { onStatus: (x) => statuses.push(x) }, { transport: 'fetch' });
    ok(await until(2500, () => statuses.includes('open')), `open before the compile is done: ${statuses}`);
    eq(statuses, ['connecting', 'open'], "createManagedStream's onStatus hears the start, as from a constructor");
    eq([compiles, instances], [1, 2], 'compiled on the main thread, where the response needed it');
    eq((await log('later-fetch-b')).attempts.length, 1, 'one request');
    stop();
    ok(await until(3000, async () => (await log('later-fetch-b')).open === 0), 'closed at the server');

    // Options the check refuses: the constructor builds the shell, which throws, and ends the request it
    // had started before any of it left (it leaves only after the constructor's task).
    const c = await import('/pkg/fetch.js?later-fetch-c');
    await plan('later-fetch-c', '', 'stream');
    const n = sent.length;
    const err = throws(() => new c.ManagedEventSource(url('later-fetch-c'), { transport: 'fetch', baseMs: -1, fetch: fetching }));
    ok(err instanceof RangeError && /baseMs/.test(err.message), `a RangeError naming baseMs, not ${err}`);
    await sleep(300);
    eq(sent.length, n, 'no request left');
    eq((await log('later-fetch-c')).attempts.length, 0, 'and the server saw none');

    // A URL function that throws: the constructor throws it, and asks it once.
    const d = await import('/pkg/fetch.js?later-fetch-d');
    let thrown = 0;
    const why = new Error('no token yet');
    eq(throws(() => new d.ManagedEventSource(() => (thrown++, (() => { throw why; })()), { transport: 'fetch' })), why);
    eq(thrown, 1);

    // Closed before the shell took over: the close builds it, and nothing is left open.
    const e = await import('/pkg/fetch.js?later-fetch-e');
    await plan('later-fetch-e', 'slow:1000', 'stream');
    const gone = new e.ManagedEventSource(url('later-fetch-e'), { transport: 'fetch', fetch: fetching });
    const quiet = watch(gone);
    gone.close();
    eq([gone.status, gone.readyState], ['closed', 2]);
    eq(quiet.statuses, ['closed']);
    await sleep(1500);
    eq((await log('later-fetch-e')).open, 0, 'no connection left at the server');
    eq(quiet.events.length, 0, 'and nothing delivered');
  } finally {
    WebAssembly.Module = Module;
    WebAssembly.Instance = Instance;
    WebAssembly.compile = compile;
  }
});

test("share: a first construct checks its options with the option check, and only the tab that leads compiles the module, off the main thread", async () => {
  if (typeof BroadcastChannel !== 'function' || typeof navigator.locks?.request !== 'function') return;
  const Module = WebAssembly.Module, Instance = WebAssembly.Instance;
  let compiles = 0, instances = 0;
  WebAssembly.Module = counting(Module, (b) => main(b) && compiles++);
  WebAssembly.Instance = counting(Instance, (m) => checker(Module, m) || instances++);
  try {
    const a = await import('/pkg/index.js?later-share');
    await plan('later-share', '', 'stream');
    const name = `later-share-${Math.random()}`;
    const lead = new a.ManagedEventSource(url('later-share'), { share: name, maxAttempts: 5 });
    eq([compiles, instances], [0, 0], 'the construct compiled and instantiated nothing of the shell');
    const follow = new a.ManagedEventSource(url('later-share'), { share: name, maxAttempts: 5 });
    eq([compiles, instances], [0, 0], 'nor did a second one, which will follow');
    const seen = watch(follow);
    ok(await until(5000, () => lead.leader && lead.status === 'open'), `the first leads and opens: ${lead.status}`);
    eq([compiles, instances], [0, 1], 'its shell built once the module was compiled, off the main thread');
    ok(await until(5000, () => seen.events.length >= 2), 'the follower hears the stream');
    eq(follow.leader, false);
    // Refused options still throw from the constructor, as a RangeError naming the option.
    const err = throws(() => new a.ManagedEventSource(url('later-share'), { share: name, baseMs: -1 }));
    ok(err instanceof RangeError && /baseMs/.test(err.message), `a RangeError naming baseMs, not ${err}`);
    follow.close();
    lead.close();
    ok(await until(3000, async () => (await log('later-share')).open === 0), 'closed at the server');
    eq((await log('later-share')).attempts.length, 1, 'one connection for both');
  } finally {
    WebAssembly.Module = Module;
    WebAssembly.Instance = Instance;
  }
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
  // The shell's verdict: this page's package, compiled and ready by now, builds the shell in the constructor.
  await plan('check', '', 'stream');
  const x = (await WebAssembly.instantiate(await (await fetch('/target/pkg-build/check.wasm')).arrayBuffer())).instance.exports;
  // Each instance reserves its whole memory: a small stack (scripts/build.mjs) keeps it to two pages.
  ok(x.memory.buffer.byteLength <= 2 * 65536, `the option check's memory is ${x.memory.buffer.byteLength / 65536} pages`);
  let taken = 0, refused = 0;
  for (const o of optionSets(386)) {
    const shell = outcome(() => new ManagedEventSource(url('check'), o)) === 'ok';
    const { values } = readOptions(o, 1, []);
    eq(valid(x, values), shell, `${show(o)}: the shell ${shell ? 'takes' : 'refuses'} it`);
    // Where no value is left that JavaScript's types do not settle, the constructor skips the check.
    if (!checked(values)) ok(shell, `${show(o)}: the shell refuses options that need no check`);
    if (shell) taken++;
    else refused++;
  }
  ok(taken >= 50 && refused >= 50, `both kinds: ${taken} taken, ${refused} refused`);
  figure('option sets the check and the shell agree on (taken, refused)', `${taken}, ${refused}`);
  await sleep(300);
  eq((await log('check')).open, 0, 'no connection left at the server');
});

test("a first construct with options takes the later path where the check passes them, and throws the shell's own error where it does not", async () => {
  const Module = WebAssembly.Module;
  let compiles = 0;
  WebAssembly.Module = counting(Module, (b) => main(b) && compiles++);
  try {
    await plan('check-first', '', 'stream');
    // Each a fresh copy of the package (a module is one per URL), whose first construct this is; few, as
    // each copy keeps its wasm memories for the page's life.
    const sets = optionSets(0).slice(0, 14);
    let taken = 0;
    for (const [i, o] of sets.entries()) {
      const expected = outcome(() => new ManagedEventSource(url('check-first'), o));
      const fresh = await import(`/pkg/index.js?check-${i}`);
      const before = compiles;
      const got = outcome(() => {
        const es = new fresh.ManagedEventSource(url('check-first'), o);
        if (compiles !== before) throw new Error('the constructor compiled the shell for options it takes');
        return es; // its close() builds the shell, which checks the options again
      });
      eq(got, expected, show(o));
      if (got === 'ok') taken++;
    }
    ok(taken >= 4 && taken <= sets.length - 4, `both kinds: ${taken} of ${sets.length} taken`);
    await sleep(300);
    eq((await log('check-first')).open, 0, 'no connection left at the server');
  } finally {
    WebAssembly.Module = Module;
  }
});

test('a shell that cannot be built after its constructor (the module fails to instantiate) leaves nothing open, and says why', async () => {
  const Instance = WebAssembly.Instance, Module = WebAssembly.Module, compile = WebAssembly.compile, Source = globalThis.EventSource;
  const made = [];
  // The shell's module fails to instantiate, as where the page is out of memory; the option check's does not.
  WebAssembly.Instance = counting(Instance, (m) => {
    if (!checker(Module, m)) throw new RangeError('WebAssembly.Instance(): Out of memory (a stand-in)');
  });
  WebAssembly.compile = () => new Promise(() => {}); // never done: the close builds the shell
  globalThis.EventSource = countingSource(Source, (es) => made.push(es));
  try {
    await plan('unbuilt', '', 'stream');
    const fresh = await import('/pkg/index.js?unbuilt');
    const es = new fresh.ManagedEventSource(url('unbuilt'), { maxAttempts: 3 });
    eq(made.length, 1, 'the constructor took the later path, with its source');
    // Its open needs the shell, which fails: the source is closed, and nothing stays open.
    ok(await until(3000, () => inner(made[0], 'readyState') === 2), 'the source the constructor made is closed');
    ok(await until(3000, async () => (await log('unbuilt')).attempts.length === 1 && (await log('unbuilt')).open === 0), 'nothing left open at the server');
    const err = throws(() => es.close());
    ok(err instanceof RangeError && /Out of memory/.test(err.message), `close() says why: ${err}`);
    eq(made.length, 1, 'and made no other source');
  } finally {
    WebAssembly.Instance = Instance;
    WebAssembly.compile = compile;
    globalThis.EventSource = Source;
  }
});
