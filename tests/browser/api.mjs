// The public API against the fault-injecting server, in the package as shipped (pkg/): the ladder for every
// strategy, resets, giving up and reviving, close() final in every state, waking on a visible page or the
// network, resume, the three reconnect modes, URL functions, callbacks that close or throw, listeners
// across reconnects, createManagedStream, retry hints, every kind of failure, an outage, a stall, and a
// thousand reconnect cycles that leave no connection, listener, timer or externref behind.
//
// Timing is judged where it cannot flake: a delay is checked at the server, from below (a busy machine can
// only make an attempt later), and "at once" means well before the long delay the test set up instead.

// Before the package makes its wasm (on the first construct): keep the instance, to count its externrefs.
let exports;
const Instance = WebAssembly.Instance;
WebAssembly.Instance = function (module, imports) {
  const instance = new Instance(module, imports);
  exports = instance.exports;
  return instance;
};
WebAssembly.Instance.prototype = Instance.prototype;

const { ManagedEventSource, createManagedStream } = await import('/pkg/index.js');
const lib = await import('./lib.mjs');
const { test, figure, until, sleep, ok, eq, throws, watch, visibility } = lib;
// Client names of this suite's own: the suites of one engine share a server.
const plan = (c, ...a) => lib.plan(`api-${c}`, ...a);
const log = (c) => lib.log(`api-${c}`);
const url = (c, extra) => lib.url(`api-${c}`, extra);

/** A function that records its arguments. */
function recorder() {
  const f = (arg) => f.calls.push(arg);
  f.calls = [];
  return f;
}

test('delays follow the ladder for every strategy, at the server too, and differ between clients', async () => {
  const clients = [];
  for (const s of ['none', 'full', 'equal', 'decorrelated']) {
    for (const k of ['a', 'b']) {
      const c = `ladder-${s}-${k}`;
      await plan(c, '', '503');
      const es = new ManagedEventSource(url(c), { jitter: s, baseMs: 60, maxMs: 1000, maxAttempts: 5 });
      const seen = watch(es);
      const gaveUp = recorder();
      es.ongiveup = gaveUp;
      clients.push({ s, c, es, seen, gaveUp });
    }
  }
  ok(await until(20000, () => clients.every((c) => c.gaveUp.calls.length)), 'all give up');
  for (const { s, c, es, seen, gaveUp } of clients) {
    eq(es.status, 'failed');
    eq(gaveUp.calls[0], { attempts: 5 });
    eq(seen.retries.map((r) => r.attempt), [1, 2, 3, 4, 5], s);
    const l = await log(c);
    eq(l.attempts.length, 6, `${s}: the first connection and five reconnects`);
    ok(l.maxOpen <= 1);
    let previous = 60;
    seen.retries.forEach(({ attempt, delayMs: d }, i) => {
      const cap = Math.min(60 * 2 ** (attempt - 1), 1000);
      if (s === 'none') eq(d, Math.floor(cap), `${s} ${attempt}`);
      else if (s === 'full') ok(d <= cap, `${s} ${attempt}: ${d} > ${cap}`);
      else if (s === 'equal') ok(d >= Math.floor(cap / 2) && d <= cap, `${s} ${attempt}: ${d}`);
      // The ladder draws from three times the previous unrounded draw, of which d is the floor: up to 2 more.
      else ok(d >= 60 && d <= Math.min(previous * 3 + 2, 1000), `${s} ${attempt}: ${d}`);
      previous = d;
      // The server saw the next attempt after the delay, never before.
      const gap = l.attempts[i + 1].t - l.attempts[i].t;
      ok(gap >= d - 5, `${s} attempt ${attempt}: came ${gap} ms after, the delay was ${d}`);
    });
  }
  // Two clients with the same options draw different ladders (except with no jitter).
  for (let i = 0; i < clients.length; i += 2) {
    const [a, b] = [clients[i], clients[i + 1]].map((c) => JSON.stringify(c.seen.retries));
    if (clients[i].s === 'none') eq(a, b);
    else ok(a !== b, `${clients[i].s} drew the same ladder twice`);
  }
});

test('the ladder resets on open', async () => {
  await plan('reset', '503,503,events:1', '503');
  const es = new ManagedEventSource(url('reset'), { jitter: 'none', baseMs: 20, maxAttempts: 3 });
  const seen = watch(es);
  const gaveUp = recorder();
  es.ongiveup = gaveUp;
  ok(await until(5000, () => gaveUp.calls.length));
  eq(seen.retries, [20, 40, 20, 40, 80].map((delayMs, i) => ({ attempt: [1, 2, 1, 2, 3][i], delayMs })));
  eq(seen.opens, 1);
  eq((await log('reset')).attempts.length, 6);
});

test('gives up after maxAttempts, then nothing until reconnectNow revives it', async () => {
  await plan('giveup', '', '503');
  const es = new ManagedEventSource(url('giveup'), { jitter: 'none', baseMs: 20, maxAttempts: 3 });
  const seen = watch(es);
  const gaveUp = recorder();
  es.ongiveup = gaveUp;
  ok(await until(5000, () => gaveUp.calls.length));
  eq([es.status, es.readyState, es.attempt], ['failed', 2, 3]);
  eq((await log('giveup')).attempts.length, 4);
  await sleep(400);
  eq((await log('giveup')).attempts.length, 4, 'nothing after giving up');
  eq(gaveUp.calls.length, 1);
  eq(seen.statuses, ['reconnecting', 'failed']);
  await plan('giveup', '', 'stream');
  es.reconnectNow();
  ok(await until(3000, () => es.status === 'open'));
  eq((await log('giveup')).attempts.length, 1);
  eq(es.attempt, 0);
  es.close();
});

/** Drives a client into each state the machine has; `state` gets it there and returns it. */
const STATES = {
  async connecting(c) {
    await plan(c, 'slow:60000', 'stream');
    const es = new ManagedEventSource(url(c), { baseMs: 20 });
    ok(await until(3000, async () => (await log(c)).attempts.length === 1), `${c}: the request is at the server`);
    return es;
  },
  async open(c) {
    await plan(c, '', 'stream');
    const es = new ManagedEventSource(url(c), { baseMs: 20 });
    ok(await until(3000, () => es.status === 'open'), `${c}: open`);
    return es;
  },
  async waiting(c) {
    await plan(c, '503', 'stream');
    const es = new ManagedEventSource(url(c), { jitter: 'none', baseMs: 60000 });
    ok(await until(3000, () => es.status === 'reconnecting' && es.readyState === 0), `${c}: waiting`);
    return es;
  },
  async offline(c) {
    const es = await STATES.waiting(c);
    dispatchEvent(new Event('offline'));
    return es;
  },
  async probing(c) {
    await plan(c, '503,slow:60000', 'stream');
    const es = new ManagedEventSource(url(c), { probe: true, baseMs: 20 });
    ok(await until(3000, async () => (await log(c)).attempts.length === 2), `${c}: probing`);
    return es;
  },
  async failed(c) {
    await plan(c, '', '503');
    const es = new ManagedEventSource(url(c), { jitter: 'none', baseMs: 10, maxAttempts: 1 });
    ok(await until(3000, () => es.status === 'failed'), `${c}: failed`);
    return es;
  },
  async unauthorized(c) {
    await plan(c, '401,401', 'stream');
    const es = new ManagedEventSource(url(c), { probe: true, baseMs: 10 });
    ok(await until(3000, () => es.status === 'failed'), `${c}: stopped`);
    return es;
  },
  async closed(c) {
    const es = await STATES.open(c);
    es.close();
    return es;
  },
};

test('close() is final in every state: nothing connects after it, not even reconnectNow()', async () => {
  for (const [state, reach] of Object.entries(STATES)) {
    const c = `final-${state}`;
    const es = await reach(c);
    const before = (await log(c)).attempts.length;
    es.close();
    eq([es.status, es.readyState], ['closed', 2], state);
    es.reconnectNow();
    dispatchEvent(new Event('online'));
    visibility('visible');
    es.close();
    await sleep(300);
    eq(es.status, 'closed', state);
    eq((await log(c)).attempts.length, before, `${state}: no attempt after close()`);
    // The server hears of the closed stream or the aborted request when the browser's network code tells it.
    ok(await until(3000, async () => { const l = await log(c); return l.open === 0 && l.inflight === 0; }), `${state}: no stream or request left at the server`);
  }
  dispatchEvent(new Event('online'));
});

test('a visible page or the network coming back reconnects a waiting stream at once; an open one is left alone', async () => {
  for (const [c, wake] of [['visible', () => visibility('visible')], ['online', () => dispatchEvent(new Event('online'))]]) {
    await plan(c, '503', 'stream');
    const es = new ManagedEventSource(url(c), { jitter: 'none', baseMs: 60000 });
    const seen = watch(es);
    ok(await until(3000, () => seen.retries.length === 1));
    if (c === 'visible') {
      visibility('hidden');
      await sleep(100);
      eq((await log(c)).attempts.length, 1, 'hidden does not reconnect');
    }
    wake();
    // The ladder said 60 s; "at once" is anything well before that.
    ok(await until(20000, () => es.status === 'open'), 'reconnected long before the ladder would have');
    eq((await log(c)).attempts.length, 2);
    wake();
    await sleep(150);
    eq((await log(c)).attempts.length, 2, 'an open stream is left alone');
    eq(es.status, 'open');
    es.close();
  }
});

test('after a drop the reconnect URL carries the last id, and no event is lost', async () => {
  await plan('resume', 'events:3,cut:4', 'stream');
  const es = new ManagedEventSource(url('resume'), { lastEventIdParam: 'lastEventId', baseMs: 20 });
  const ids = [];
  es.onmessage = (e) => ids.push(Number(e.lastEventId));
  ok(await until(5000, () => ids.length >= 12));
  es.close();
  eq(ids, ids.map((_, i) => i + 1), 'every id exactly once, in order');
  eq(es.lastEventId, String(ids.at(-1)));
  const l = await log('resume');
  ok(!l.attempts[0].url.includes('lastEventId'), 'the first connection carries none');
  ok(l.attempts[1].url.endsWith('&lastEventId=3'), l.attempts[1].url);
  ok(l.attempts[2].url.endsWith('&lastEventId=7'), l.attempts[2].url);
  ok(es.url.endsWith('&lastEventId=7'));
});

test("reconnect: 'browser' leaves reconnecting to the browser", async () => {
  await plan('browser', 'retry:150+events:2,events:1', '503');
  const records = [];
  const es = new ManagedEventSource(url('browser'), { reconnect: 'browser', trace: (r) => records.push(r) });
  const seen = watch(es);
  const gaveUp = recorder();
  es.ongiveup = gaveUp;
  const failed = await until(8000, () => es.status === 'failed');
  es.close();
  ok(failed, `statuses ${seen.statuses}`);
  eq(seen.statuses, ['open', 'reconnecting', 'open', 'reconnecting', 'failed', 'closed']);
  const l = await log('browser');
  eq(l.attempts.length, 3);
  // The browser waited the server's retry: value and sent the Last-Event-ID header itself.
  ok(l.attempts[1].t - l.attempts[0].t >= 140);
  eq([l.attempts[1].lastEventIdHeader, l.attempts[2].lastEventIdHeader], ['2', '3']);
  eq(gaveUp.calls.length, 1);
  // The trace: the browser's own retries, with the id its header carries; told when the browser begins to
  // wait (its error event), as nothing tells the page when it reconnects.
  const retries = records.filter((r) => r.type === 'attempt' && r.trigger === 'browser');
  eq(retries.map((r) => [r.attempt, r.lastEventId]), [[1, '2'], [1, '3']]); // each opened: a fresh ladder
  eq(records.map((r) => r.type), ['attempt', 'open', 'ended', 'attempt', 'open', 'ended', 'attempt', 'ended', 'giveup', 'closed']);
});

test('reconnect: false ends on the first error; reconnectNow() still revives it', async () => {
  await plan('never', 'events:2', 'stream');
  const es = new ManagedEventSource(url('never'), { reconnect: false });
  const seen = watch(es);
  ok(await until(3000, () => es.status === 'failed'));
  await sleep(400);
  eq((await log('never')).attempts.length, 1);
  eq(seen.events.length, 2);
  visibility('visible');
  await sleep(100);
  eq((await log('never')).attempts.length, 1, 'no reconnect on visibility either');
  es.reconnectNow();
  ok(await until(3000, () => es.status === 'open'));
  es.close();
});

test('a URL function is called for every attempt, and one that throws costs that attempt only', async () => {
  await plan('urlfn', '503', 'stream');
  let n = 0;
  const es = new ManagedEventSource(
    () => {
      n++;
      if (n === 2) throw new Error('token service down');
      return url('urlfn', `&token=${n}`);
    },
    { jitter: 'none', baseMs: 20, withCredentials: true },
  );
  eq(es.withCredentials, true);
  ok(await until(3000, () => es.status === 'open'));
  eq(n, 3);
  eq((await log('urlfn')).attempts.map((a) => a.url), ['/sse?c=api-urlfn&token=1', '/sse?c=api-urlfn&token=3']);
  ok(es.url.endsWith('token=3'));
  es.close();
});

test('callbacks may close or reconnect, and may throw', async () => {
  // close() from inside onerror: nothing is scheduled and no stale news follows.
  await plan('cb-close', '', '503');
  const a = new ManagedEventSource(url('cb-close'), { baseMs: 20 });
  const seen = watch(a);
  a.onerror = () => a.close();
  ok(await until(3000, () => a.status === 'closed'));
  await sleep(200);
  eq((await log('cb-close')).attempts.length, 1);
  eq(seen.retries, []);
  eq(seen.statuses, ['closed']);
  // reconnectNow() from inside onretry: the pending timer gives way to an attempt at once.
  await plan('cb-now', '503', 'stream');
  const b = new ManagedEventSource(url('cb-now'), { jitter: 'none', baseMs: 60000 });
  b.onretry = () => b.reconnectNow();
  ok(await until(20000, () => b.status === 'open'));
  eq((await log('cb-now')).attempts.length, 2);
  b.close();
  // A throwing callback is reported and the client carries on.
  await plan('cb-throw', '503', 'stream');
  const c = new ManagedEventSource(url('cb-throw'), { baseMs: 20 });
  const boom = () => {
    throw new Error('user callback threw on purpose');
  };
  c.onstatus = c.onerror = c.onmessage = boom;
  ok(await until(3000, () => c.status === 'open'));
  c.close();
});

test('listeners survive reconnects; one added while connected hears it; one removed hears no more', async () => {
  await plan('named', 'events:2:update,events:2:update', 'stream');
  const es = new ManagedEventSource(url('named'), { baseMs: 20 });
  const update = recorder();
  const message = recorder();
  es.addEventListener('update', update);
  es.addEventListener('update', update); // no duplicate
  ok(await until(3000, () => update.calls.length >= 4));
  await sleep(100);
  eq(update.calls.length, 4);
  es.addEventListener('message', message);
  ok(await until(3000, () => message.calls.length >= 3));
  es.removeEventListener('message', message);
  const heard = message.calls.length;
  await sleep(150);
  eq(message.calls.length, heard, 'a removed listener hears nothing more');
  es.close();
});

test("createManagedStream reports in seed 000's shapes", async () => {
  await plan('stream', '503,503', 'stream');
  const [onOpen, onRetryScheduled, onStatus, onMessage] = [recorder(), recorder(), recorder(), recorder()];
  const stop = createManagedStream(url('stream'), { onOpen, onRetryScheduled, onStatus, onMessage }, { jitter: 'none', baseMs: 20 });
  ok(await until(3000, () => onMessage.calls.length));
  eq(onOpen.calls[0], { attempt: 2 }, 'the attempt that succeeded');
  eq(onRetryScheduled.calls, [{ attempt: 1, wait: 20 }, { attempt: 2, wait: 40 }]);
  stop();
  stop(); // twice is harmless
  eq(onStatus.calls, ['connecting', 'reconnecting', 'open', 'closed']);
  await plan('stream-giveup', '', '404');
  const onGiveUp = recorder();
  const stop2 = createManagedStream(url('stream-giveup'), { onGiveUp }, { baseMs: 10, maxAttempts: 1 });
  ok(await until(3000, () => onGiveUp.calls.length));
  stop2();
  eq(onGiveUp.calls, [1]);
  ok(throws(() => createManagedStream(url('x'), { onOpn: () => {} })) instanceof TypeError);
});

test('a retry hint event makes the next reconnect wait at least that long; without the option it is an event', async () => {
  await plan('hint', 'hint:700', 'stream');
  const es = new ManagedEventSource(url('hint'), { retryHintEvent: 'retry-hint', jitter: 'none', baseMs: 20 });
  const seen = watch(es);
  const hints = recorder();
  es.addEventListener('retry-hint', hints);
  ok(await until(5000, () => seen.retries.length));
  eq(seen.retries, [{ attempt: 1, delayMs: 720 }], 'the hint plus the ladder');
  ok(await until(5000, () => es.status === 'open'));
  eq(hints.calls.length, 1, 'the hint event still reaches listeners');
  const l = await log('hint');
  eq(l.attempts.length, 2);
  ok(l.attempts[1].t - l.attempts[0].t >= 700, 'back no sooner than the hint');
  es.close();
  await plan('no-hint', 'hint:700', 'stream');
  const plain = new ManagedEventSource(url('no-hint'), { jitter: 'none', baseMs: 20 });
  const told = watch(plain);
  ok(await until(5000, () => told.retries.length));
  eq(told.retries, [{ attempt: 1, delayMs: 20 }]);
  plain.close();
});

test('every kind of failure goes through the ladder, one request per attempt', async () => {
  // A 404 must not be retried a hundred times a second (fanout/reconnecting-eventsource issue 73).
  await plan('kinds', '500,401,404,204,type,drop', 'stream');
  const es = new ManagedEventSource(url('kinds'), { jitter: 'none', baseMs: 10, maxMs: 1000 });
  const seen = watch(es);
  ok(await until(8000, () => es.status === 'open'));
  eq(seen.retries, [10, 20, 40, 80, 160, 320].map((delayMs, i) => ({ attempt: i + 1, delayMs })));
  eq(seen.errors, 6, 'each failure reported once');
  const l = await log('kinds');
  eq(l.attempts.length, 7, 'one request per attempt, none repeated by the browser');
  for (let i = 1; i < l.attempts.length; i++) {
    const gap = l.attempts[i].t - l.attempts[i - 1].t;
    ok(gap >= 10 * 2 ** (i - 1) - 5, `attempt ${i}: ${gap} ms`);
  }
  es.close();
});

test('an outage that refuses connections is ridden out and resumed, no event lost', async () => {
  await plan('outage', '', 'stream');
  const es = new ManagedEventSource(url('outage'), { lastEventIdParam: 'lastEventId', baseMs: 100, maxMs: 400 });
  const seen = watch(es);
  ok(await until(3000, () => seen.events.length >= 3));
  await fetch('/outage?ms=1200');
  ok(await until(3000, () => es.status === 'reconnecting'));
  ok(await until(10000, () => es.status === 'open'));
  const heard = seen.events.length;
  ok(await until(3000, () => seen.events.length >= heard + 3));
  es.close();
  const ids = seen.events.map((e) => Number(e[2]));
  eq(ids, ids.map((_, i) => i + 1), 'no event lost or repeated');
  eq(seen.statuses, ['open', 'reconnecting', 'open', 'closed']);
  // Back only once the server listened again: the refused attempts came in the outage.
  const l = await log('outage');
  ok(l.attempts.length >= 2);
});

test('a stalled stream stays connected until closed (no watchdog by default)', async () => {
  await plan('stall', 'stall', 'stream');
  const es = new ManagedEventSource(url('stall'), { baseMs: 20 });
  ok(await until(3000, () => es.status === 'open'));
  await sleep(300);
  eq(es.status, 'open');
  eq((await log('stall')).attempts.length, 1);
  es.close();
  eq(es.readyState, 2);
});

test('a thousand reconnect cycles leave no connection, listener, timer or externref behind', async () => {
  // Counts what the client holds in the page: EventSources made and closed, their listeners, the page's
  // listeners, timers pending, and the wasm's externref table (which grows only when none is free).
  const counts = { created: 0, closed: 0, added: 0, removed: 0, page: 0, timers: new Map() };
  const Native = EventSource;
  const p = Native.prototype;
  const [add, remove, close] = [p.addEventListener, p.removeEventListener, p.close];
  p.addEventListener = function (...a) {
    if (this.__tracked) counts.added++;
    return add.apply(this, a);
  };
  p.removeEventListener = function (...a) {
    if (this.__tracked) counts.removed++;
    return remove.apply(this, a);
  };
  p.close = function () {
    if (this.__tracked && !this.__closed) (counts.closed++, (this.__closed = true));
    return close.call(this);
  };
  globalThis.EventSource = class extends Native {
    constructor(...a) {
      super(...a);
      this.__tracked = true;
      counts.created++;
    }
  };
  const targets = [window, document];
  const pageAdd = targets.map((t) => t.addEventListener);
  const pageRemove = targets.map((t) => t.removeEventListener);
  targets.forEach((t, i) => {
    t.addEventListener = function (...a) {
      counts.page++;
      return pageAdd[i].apply(this, a);
    };
    t.removeEventListener = function (...a) {
      counts.page--;
      return pageRemove[i].apply(this, a);
    };
  });
  const [set, clear] = [setTimeout, clearTimeout];
  globalThis.setTimeout = (f, ms, ...a) => {
    const id = set(() => (counts.timers.delete(id), f(...a)), ms);
    // Only the package's (not this page's own, such as the runner's timeout for this test).
    const stack = new Error().stack;
    if (stack.includes('/pkg/')) counts.timers.set(id, stack);
    return id;
  };
  globalThis.clearTimeout = (id) => (counts.timers.delete(id), clear(id));
  try {
    await plan('cycles', '', 'events:1');
    const es = new ManagedEventSource(url('cycles'), { jitter: 'none', baseMs: 0 });
    let opens = 0, messages = 0;
    es.onmessage = () => messages++;
    es.onopen = () => opens++;
    const table = () => Object.values(exports).find((v) => v instanceof WebAssembly.Table).length;
    const memory = () => Object.values(exports).find((v) => v instanceof WebAssembly.Memory).buffer.byteLength;
    ok(await until(30000, () => opens >= 100));
    const before = { table: table(), memory: memory() };
    const t0 = performance.now();
    ok(await until(120000, () => opens >= 1100), '1,000 more cycles');
    const seconds = (performance.now() - t0) / 1000;
    const after = { table: table(), memory: memory() };
    es.close();
    eq(counts.created, counts.closed, 'every EventSource created was closed');
    eq(counts.added, counts.removed, 'every listener added to one was removed');
    eq(counts.page, 0, 'no page listener left');
    eq(counts.timers.size, 0, `no timer left (${[...counts.timers.values()].join('; ')})`);
    ok(after.table <= before.table + 8, `the externref table grew from ${before.table} to ${after.table} over 1,000 cycles`);
    ok(after.memory <= before.memory + 65536, `wasm memory grew from ${before.memory} to ${after.memory} bytes`);
    // Every cycle delivered its one event, except perhaps the last: close() came right after its open.
    ok(messages === opens || messages + 1 === opens, `${messages} events for ${opens} connections`);
    ok((await log('cycles')).maxOpen <= 1, 'never two connections at once');
    figure('cycles per second', Math.round(1000 / seconds));
    figure('externref table at 100 and at 1100 cycles', `${before.table}, ${after.table}`);
    figure('wasm memory at 100 and at 1100 cycles', `${before.memory}, ${after.memory}`);
  } finally {
    globalThis.EventSource = Native;
    Object.assign(p, { addEventListener: add, removeEventListener: remove, close });
    targets.forEach((t, i) => Object.assign(t, { addEventListener: pageAdd[i], removeEventListener: pageRemove[i] }));
    Object.assign(globalThis, { setTimeout: set, clearTimeout: clear });
  }
});
