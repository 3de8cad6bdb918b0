// A client's start (issue 44), in every engine the suites run in: prepare(), the first construct that waits
// for the module off the main thread, no request before the options pass, and close() at every moment of a
// start, shared or not. Each "fresh" copy of the package is a new module (one per URL), whose wasm is not
// compiled yet: the first construct of a page. (Callbacks that close are reentry.mjs's.)
import { test, figure, until, sleep, ok, eq, throws, plan, log, url, reported } from './lib.mjs';

let copies = 0;
/** A fresh copy of a package entry: its module is neither compiled nor instantiated. */
const fresh = (entry = 'index') => import(`/pkg/${entry}.js?start-${++copies}`);

/** Whether `bytes` are a shell's module rather than the option check's (src/check.rs, a few kilobytes). */
const shellBytes = (bytes) => bytes.byteLength > 8000;

/** Runs `f` with WebAssembly.Module and EventSource replaced by stand-ins that count what they make. */
async function counting(f) {
  const Module = WebAssembly.Module, Instance = WebAssembly.Instance, Source = globalThis.EventSource;
  const made = { compiles: 0, instances: 0, sources: 0 };
  WebAssembly.Module = Object.assign(function (bytes) {
    if (shellBytes(bytes)) made.compiles++;
    return new Module(bytes);
  }, { prototype: Module.prototype });
  WebAssembly.Instance = Object.assign(function (m, imports) {
    if (!Module.exports(m).some((e) => e.name === 'check')) made.instances++;
    return new Instance(m, imports);
  }, { prototype: Instance.prototype });
  globalThis.EventSource = class extends Source {
    constructor(...args) {
      super(...args);
      made.sources++;
    }
  };
  try {
    return await f(made);
  } finally {
    WebAssembly.Module = Module;
    WebAssembly.Instance = Instance;
    globalThis.EventSource = Source;
  }
}

/** Waits until the server has no connection of client `c` open (and says how many it saw). */
async function closedAtServer(c, message = 'nothing left open at the server') {
  ok(await until(3000, async () => (await log(c)).open === 0), `${message}: ${(await log(c)).open} open`);
}

/** Statuses a client tells, through onstatus. */
function statuses(es) {
  const heard = [];
  es.onstatus = (s) => heard.push(s);
  return heard;
}

test('prepare() compiles and instantiates the module off the main thread; a client made after it builds its shell at once', () =>
  counting(async (made) => {
    const copy = await fresh();
    const p = copy.prepare();
    ok(p instanceof Promise);
    eq(copy.prepare(), p, 'every call returns the same promise');
    eq(made.compiles, 0, 'not compiled on the main thread');
    eq(await p, undefined);
    eq([made.compiles, made.instances, made.sources], [0, 1, 0], 'instantiated once, and nothing connected');
    await plan('prepared', '', 'stream');
    const es = new copy.ManagedEventSource(url('prepared'), { lastEventIdParam: 'lastEventId', maxAttempts: 5 });
    eq([made.compiles, made.instances, made.sources], [0, 1, 1], 'the construct compiled and instantiated nothing, and connected');
    const heard = statuses(es);
    ok(await until(5000, () => es.status === 'open'));
    eq(heard, ['open']);
    es.close();
    // Bad options throw from the constructor, and connect nothing.
    for (const [options, Error, name] of [[{ baseMs: -1 }, RangeError, /baseMs/], [{ jitter: 'sometimes' }, TypeError, /jitter/], [{ maxAttempts: -1 }, RangeError, /maxAttempts/]]) {
      const e = throws(() => new copy.ManagedEventSource(url('prepared'), options));
      ok(e instanceof Error && name.test(e.message), `${Error.name} naming ${name}, not ${e}`);
    }
    eq(made.sources, 1, 'no source for refused options');
    await closedAtServer('prepared');
  }));

test("a page's first construct compiles nothing of the shell on the main thread and connects in a later task, with its members answering at once", () =>
  counting(async (made) => {
    const copy = await fresh();
    await plan('first', '', 'stream');
    const es = new copy.ManagedEventSource(url('first', '&x=1'), { jitter: 'equal', maxAttempts: 5, baseMs: 200, lastEventIdParam: 'id' });
    eq([made.compiles, made.instances, made.sources], [0, 0, 0], 'the constructor compiled, instantiated and connected nothing');
    eq([es.url, es.status, es.readyState, es.attempt, es.lastEventId, es.withCredentials], [url('first', '&x=1'), 'connecting', 0, 0, '', false]);
    const heard = statuses(es);
    const events = [];
    es.onmessage = (e) => events.push(e.lastEventId);
    ok(await until(5000, () => events.length >= 3), 'the client streams');
    eq([made.compiles, made.instances, made.sources], [0, 1, 1], 'compiled off the main thread, one source');
    eq(heard, ['open'], "the start tells the instance nothing that a constructor's start would not have");
    es.close();
    eq([es.status, es.readyState, heard.at(-1)], ['closed', 2, 'closed']);
    await closedAtServer('first');

    // createManagedStream's onStatus hears the first status too, in its constructor.
    const copy2 = await fresh();
    await plan('first-stream', '', 'stream');
    const told = [];
    const stop = copy2.createManagedStream(url('first-stream'), { onStatus: (s) => told.push(s) });
    eq(told, ['connecting']);
    ok(await until(5000, () => told.includes('open')));
    stop();
    eq(told, ['connecting', 'open', 'closed']);
    await closedAtServer('first-stream');
  }));

test('no request leaves before the options pass: refused options, a URL EventSource refuses, a URL function that throws', () =>
  counting(async (made) => {
    await plan('refused', '', 'stream');
    for (const entry of ['index', 'fetch']) {
      const copy = await fresh(entry);
      const transport = entry === 'fetch' ? { transport: 'fetch' } : {};
      for (const [options, Error, name] of [[{ baseMs: -1 }, RangeError, /baseMs/], [{ jitter: 'sometimes' }, TypeError, /jitter/], [{ maxAttempts: 1.5 }, RangeError, /maxAttempts/], [{ retryHintEvent: 'open' }, TypeError, /retryHintEvent/]]) {
        const e = throws(() => new copy.ManagedEventSource(url('refused'), { ...options, ...transport }));
        ok(e instanceof Error && name.test(e.message), `${entry}: ${Error.name} naming ${name}, not ${e}`);
      }
      const bad = throws(() => new copy.ManagedEventSource('http://[::1', transport));
      eq(bad.name, entry === 'fetch' ? 'TypeError' : 'SyntaxError', String(bad));
      let asked = 0;
      const why = new Error('no token yet');
      eq(throws(() => new copy.ManagedEventSource(() => (asked++, (() => { throw why; })()), transport)), why);
      eq(asked, 1, 'the URL function was asked once');
    }
    eq(made.sources, 0, 'no EventSource made');
    await sleep(200); // a request that left would have reached the loopback server by now
    eq((await log('refused')).attempts.length, 0, 'no request reached the server');
  }));

test('a URL function is asked once for the first attempt, in the constructor, and once for each attempt after', async () => {
  const copy = await fresh();
  await plan('asked', '503', 'stream');
  let asks = 0;
  const es = new copy.ManagedEventSource(() => url('asked', `&token=${++asks}`), { jitter: 'none', baseMs: 50, maxAttempts: 5 });
  eq([asks, es.url], [1, url('asked', '&token=1')]);
  ok(await until(8000, () => es.status === 'open'), 'a 503, then the next attempt opens');
  eq(asks, 2, 'one call an attempt');
  eq((await log('asked')).attempts.map((a) => a.url.replace(/.*&/, '')), ['token=1', 'token=2']);
  es.close();
  await closedAtServer('asked');
});

test("a first construct whose URL function's Promise rejects: the error is reported once, no unhandled rejection, and the next attempt opens", async () => {
  const copy = await fresh('fetch');
  await plan('first-rejects', '', 'stream');
  const unhandled = [];
  const count = (e) => unhandled.push(e.reason?.message);
  addEventListener('unhandledrejection', count);
  const before = reported.length;
  let asks = 0;
  const es = new copy.ManagedEventSource(() => (++asks === 1 ? Promise.reject(new Error('token service down')) : url('first-rejects')), { transport: 'fetch', jitter: 'none', baseMs: 50 });
  try {
    ok(await until(8000, () => es.status === 'open'), `the second attempt opens (${es.status})`);
    await sleep(50); // a rejection is reported as unhandled after the task it happened in
  } finally {
    es.close();
    removeEventListener('unhandledrejection', count);
  }
  eq(unhandled, []);
  eq(reported.slice(before).map((e) => e?.message), ['token service down']);
  await closedAtServer('first-rejects');
});

/** Delays, in ms, at which the start sweeps close a client. */
const SWEEP = [0, 1, 2, 4, 6, 8, 10, 12, 16, 20, 25, 30];

test("close() at every moment of a client's deferred start: closed, told so, nothing open at the server", async () => {
  const rows = [];
  for (const entry of ['index', 'fetch']) {
    for (const delay of entry === 'index' ? SWEEP : SWEEP.filter((d, i) => i % 2 === 0)) {
      const c = `sweep-${entry}-${delay}`;
      await plan(c, '', 'stream');
      const copy = await fresh(entry);
      const es = new copy.ManagedEventSource(url(c), entry === 'fetch' ? { transport: 'fetch' } : {});
      const heard = statuses(es);
      await sleep(delay);
      es.close();
      eq([es.status, es.readyState, heard.at(-1)], ['closed', 2, 'closed'], `${c}:`);
      await copy.prepare(); // the module is instantiated: a start that was waiting for it has had its turn
      await sleep(50);
      eq([es.status, heard.filter((s) => s === 'closed').length], ['closed', 1], `${c}: still closed, told once`);
      await closedAtServer(c, c);
      rows.push(`${delay}:${(await log(c)).attempts.length}`);
    }
  }
  figure('requests the server saw, by the delay (ms) of close() after construct', rows.join(' '));
});

test("close() at every moment of a shared client's start: closed, told so, nothing open, and the next client leads", async () => {
  if (typeof BroadcastChannel !== 'function' || typeof navigator.locks?.request !== 'function') return;
  for (const delay of SWEEP) {
    const c = `share-sweep-${delay}`, name = `${c}-${Math.random()}`;
    await plan(c, '', 'stream');
    const copy = await fresh('share');
    const es = new copy.ManagedEventSource(url(c), { share: name });
    const heard = statuses(es);
    await sleep(delay);
    es.close();
    eq([es.status, es.readyState, heard.at(-1)], ['closed', 2, 'closed'], `${c}:`);
    await copy.prepare();
    await sleep(50);
    eq([es.status, es.readyState], ['closed', 2], `${c}: still closed`);
    await closedAtServer(c, c);
    // The lock went with it: a new client of the same name leads and opens.
    const next = new copy.ManagedEventSource(url(c), { share: name });
    ok(await until(5000, () => next.leader && next.status === 'open'), `${c}: the next client leads (${next.status})`);
    next.close();
    await closedAtServer(c, c);
  }
});


test("a client whose module cannot be instantiated after its constructor says why, is closed and told so, and connects nothing", async () => {
  const Instance = WebAssembly.Instance, Module = WebAssembly.Module;
  // The shell's module fails to instantiate, as where the page is out of memory; the option check's does not.
  WebAssembly.Instance = Object.assign(function (m, imports) {
    if (!Module.exports(m).some((e) => e.name === 'check')) throw new RangeError('WebAssembly.Instance(): Out of memory (a stand-in)');
    return new Instance(m, imports);
  }, { prototype: Instance.prototype });
  const errors = [];
  const onerror = (e) => errors.push(String(e.error?.message ?? e.message));
  addEventListener('error', onerror);
  try {
    await plan('unbuilt', '', 'stream');
    const copy = await fresh();
    const es = new copy.ManagedEventSource(url('unbuilt'), { maxAttempts: 3 });
    const heard = statuses(es);
    ok(await until(3000, () => es.status === 'closed'), `closed: ${es.status}`);
    eq([es.readyState, heard], [2, ['closed']]);
    ok(errors.some((m) => /Out of memory/.test(m)), `reported why: ${errors}`);
    eq((await log('unbuilt')).attempts.length, 0, 'no request reached the server');
    await copy.prepare().then(() => ok(false, 'prepare() resolved'), (e) => ok(/Out of memory/.test(e.message), `prepare() rejects why: ${e}`));
  } finally {
    WebAssembly.Instance = Instance;
    removeEventListener('error', onerror);
  }
});
