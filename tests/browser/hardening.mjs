// Issue 10: each defect a hostile review found, as a regression test; then 10,000 throws through every
// path where user code runs or user objects are read; hostile inputs; the fault matrix; and chaos.
import { ManagedEventSource, createManagedStream } from '/pkg/index.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, url, watch, reported, chaos } from './lib.mjs';

/** A stream that must deliver events: proof that the module still works. */
async function streams(c) {
  await plan(c, '', 'stream');
  const es = new ManagedEventSource(url(c), { baseMs: 20 });
  let n = 0;
  es.onmessage = () => n++;
  const got = await until(5000, () => n >= 3);
  es.close();
  ok(got, `${c}: the module no longer streams`);
}

const boom = () => new Error('user code threw on purpose');

test('1. exceptions from user objects and code never unwind through wasm (10,000 throws)', async () => {
  const thrown = [];
  const expectUser = (f) => {
    const e = throws(f);
    ok(e.message === 'user code threw on purpose', `expected the user's own error, got ${e}`);
    thrown.push(e);
  };
  const ownKeys = new Proxy({}, { ownKeys: () => { throw boom(); } });
  const getter = { get baseMs() { throw boom(); } };
  const events = { get update() { throw boom(); } };
  const keysOfEvents = { events: new Proxy({}, { ownKeys: () => { throw boom(); } }) };
  const urlFn = () => { throw boom(); };
  for (let i = 0; i < 2000; i++) {
    expectUser(() => new ManagedEventSource(url('never'), ownKeys));
    expectUser(() => new ManagedEventSource(url('never'), getter));
    expectUser(() => createManagedStream(url('never'), { events }));
    expectUser(() => createManagedStream(url('never'), keysOfEvents));
    expectUser(() => new ManagedEventSource(urlFn));
  }
  eq(thrown.length, 10000);
  eq((await log('never')).attempts.length, 0, 'no connection for a stream that never started');
  // Callbacks that throw on every call, through every notification: reported, the client carries on.
  await plan('throwing', 'events:50', 'events:50');
  const before = reported.length;
  const es = new ManagedEventSource(url('throwing'), { baseMs: 0, jitter: 'none', retryHintEvent: 'hint' });
  for (const k of ['onopen', 'onmessage', 'onerror', 'onstatus', 'onretry']) es[k] = () => { throw boom(); };
  es.addEventListener('message', { handleEvent() { throw boom(); } });
  ok(await until(20000, () => reported.length - before >= 10000), `only ${reported.length - before} reported`);
  es.close();
  figure('throws through user objects and callbacks', thrown.length + reported.length - before);
  await streams('after-throws');
});

test("2. a server event named 'error' is an event, not a failure", async () => {
  for (const reconnect of ['backoff', 'browser']) {
    const c = `named-error-${reconnect}`;
    await plan(c, 'named:3:error', 'stream');
    const es = new ManagedEventSource(url(c), { reconnect, baseMs: 20 });
    const seen = watch(es);
    const named = [];
    es.addEventListener('error', (e) => { if (e.data !== undefined) named.push(e.data); });
    ok(await until(5000, () => seen.events.filter((e) => e[0] === 'message').length >= 6), `${reconnect}: messages ${seen.events.length}`);
    es.close();
    eq(named.length, 3, `${reconnect}: the named events reached 'error' listeners`);
    eq(seen.errors, 0, `${reconnect}: no connection error`);
    eq(seen.statuses, ['open', 'closed'], `${reconnect}:`);
    eq((await log(c)).attempts.length, 1, `${reconnect}: one connection`);
  }
});

test('3. Symbol.dispose closes the stream; nothing throws after it', async () => {
  await plan('dispose', '', 'stream');
  const es = new ManagedEventSource(url('dispose'));
  ok(await until(3000, () => es.status === 'open'));
  if (typeof Symbol.dispose === 'symbol') es[Symbol.dispose]();
  else es.close();
  eq(es.status, 'closed');
  es.close();
  es.reconnectNow();
  es.onmessage = () => {};
  eq(es.readyState, 2);
  ok(await until(3000, async () => (await log('dispose')).open === 0), 'the server connection is gone');
});

test("4. handlers see the instance as this, and as every event's target and current target", async () => {
  await plan('target', '', 'stream');
  const es = new ManagedEventSource(url('target'));
  const seen = [];
  let kept, count = 0;
  const onerror = () => {};
  es.onopen = function (e) { seen.push(['open', this === es, e.target === e.currentTarget, e.target instanceof ManagedEventSource, e.target.readyState]); };
  // Removes itself through its event's current target, as a listener given the instance would.
  es.addEventListener('message', function first(e) {
    seen.push(['first', this === es]);
    e.currentTarget.removeEventListener('message', first);
  });
  es.addEventListener('message', function (e) {
    count++;
    if (count > 1) return;
    const t = e.target;
    seen.push([
      'message', this === es, t === es, t === e.currentTarget, t === e.srcElement, e.composedPath()[0] === t, t instanceof ManagedEventSource,
      t.readyState, t.url === es.url, t.status, t.attempt === es.attempt, t.withCredentials, t.CLOSED, t.onmessage === es.onmessage, t.lastEventId === es.lastEventId,
    ]);
    t.onerror = onerror; // sets the instance's attribute
    kept = e;
  });
  ok(await until(3000, () => count >= 3));
  eq(seen, [
    ['open', true, true, true, 1],
    ['first', true],
    ['message', true, true, true, true, true, true, 1, true, 'open', true, false, 2, true, true],
  ]);
  eq(es.onerror, onerror);
  // After its dispatch, an event keeps its target and has no current target, path or phase, as EventTarget has it.
  eq([kept.target === es, kept.currentTarget, kept.composedPath().length, kept.eventPhase, kept instanceof MessageEvent], [true, null, 0, Event.NONE, true]);
  kept.target.close();
  eq([es.status, es.readyState, kept.target.status, kept.target.readyState], ['closed', 2, 'closed', 2]);
  kept.target.reconnectNow(); // does nothing after close(), as on the instance
  await sleep(150);
  eq(es.status, 'closed');
  ok(await until(3000, async () => (await log('target')).open === 0), 'the server sees the stream closed');
});

test('5. a console.error that throws does not wedge the client', async () => {
  const original = console.error;
  const originalReport = globalThis.reportError;
  console.error = () => { throw boom(); };
  globalThis.reportError = undefined;
  try {
    await plan('console', 'cut:2,503', 'stream');
    const es = new ManagedEventSource(url('console'), { baseMs: 20, jitter: 'none' });
    es.onmessage = () => { throw boom(); };
    ok(await until(5000, async () => (await log('console')).attempts.length >= 3));
    await plan('console', '', 'stream');
    es.reconnectNow();
    ok(await until(3000, () => es.status === 'open'));
    es.close();
  } finally {
    console.error = original;
    globalThis.reportError = originalReport;
  }
});

test('6. an empty id: field resets the last event id, as EventSource does', async () => {
  await plan('idreset', 'idreset', 'stream');
  const es = new ManagedEventSource(url('idreset'), { baseMs: 20, jitter: 'none', lastEventIdParam: 'lastEventId' });
  const ids = [];
  es.onmessage = (e) => ids.push(e.lastEventId);
  ok(await until(5000, async () => (await log('idreset')).attempts.length >= 2));
  es.close();
  eq(ids.slice(0, 4), ['1', '2', '', '']);
  const attempts = (await log('idreset')).attempts;
  ok(!attempts[1].url.includes('lastEventId'), `the reconnect carried an id: ${attempts[1].url}`);
});

test("7. listener dispatch follows EventTarget: removed during an event is not called; types are strings", async () => {
  await plan('dispatch', 'named:2:123', 'stream');
  const es = new ManagedEventSource(url('dispatch'));
  const calls = [];
  const second = () => calls.push('second');
  es.addEventListener('message', () => { calls.push('first'); es.removeEventListener('message', second); });
  es.addEventListener('message', second);
  const numbered = [];
  es.addEventListener(123, (e) => numbered.push(e.type));
  ok(await until(3000, () => numbered.length >= 2));
  es.close();
  eq(calls.slice(0, 2), ['first', 'first'], 'the removed listener was called');
  eq(numbered, ['123', '123']);
});

test('8. errors in options reach the caller; a stream that never started reports nothing', async () => {
  const e1 = throws(() => new ManagedEventSource(url('x'), new Proxy({}, { get() { throw boom(); }, ownKeys: () => ['baseMs'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }) })));
  eq(e1.message, 'user code threw on purpose');
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  ok(throws(() => new ManagedEventSource(url('x'), proxy)) instanceof TypeError);
  await plan('never-started', '', 'stream');
  const heard = [];
  const e2 = throws(() =>
    createManagedStream(() => { throw boom(); }, {
      onStatus: (s) => heard.push(s),
      onRetryScheduled: (r) => heard.push(r),
      onOpen: (o) => heard.push(o),
    }),
  );
  eq(e2.message, 'user code threw on purpose');
  // A URL function that returns a Promise (an async token refresh) is refused by name, not requested as
  // '/[object Promise]'.
  const e3 = throws(() => new ManagedEventSource(async () => url('never-started')));
  ok(e3 instanceof TypeError && /returned a Promise/.test(e3.message), String(e3));
  await sleep(200);
  eq(heard, [], 'callbacks of a stream that never started');
  eq((await log('never-started')).attempts.length, 0);
});

test('9. no input reaches a trap: absurd listener types, huge URLs', async () => {
  await plan('absurd', '', 'stream');
  const es = new ManagedEventSource(url('absurd'));
  es.addEventListener({ length: 2 ** 31, charCodeAt: () => 97, toString: () => 'absurd' }, () => {});
  es.addEventListener({ [Symbol.toPrimitive]: () => 'also' }, () => {});
  ok(throws(() => es.addEventListener(Symbol('no'), () => {})) instanceof TypeError);
  const e = throws(() => new ManagedEventSource('http://127.0.0.1/' + 'a'.repeat(3 << 20)));
  ok(e instanceof RangeError, String(e));
  es.close();
  await streams('after-absurd');
});

test('10. an oversized event id is reported, and the reconnect goes without it', async () => {
  await plan('bigid', 'bigid:800000', 'stream');
  const before = reported.length;
  const es = new ManagedEventSource(url('bigid'), { baseMs: 20, jitter: 'none', lastEventIdParam: 'lastEventId' });
  ok(await until(5000, async () => (await log('bigid')).attempts.length >= 2));
  ok(await until(3000, () => es.status === 'open'));
  eq(es.lastEventId.length > 0, true);
  es.close();
  const attempts = (await log('bigid')).attempts;
  ok(attempts[1].url.length < 200, `the reconnect URL is ${attempts[1].url.length} long`);
  const told = reported.slice(before).find((r) => r instanceof RangeError && /last event id is 800000 bytes/.test(r.message));
  ok(told, 'the user was told');
});

test('a retry hint is capped by maxHintMs', async () => {
  await plan('hintcap', 'hint:2000000000', 'stream');
  const es = new ManagedEventSource(url('hintcap'), { baseMs: 10, jitter: 'none', retryHintEvent: 'retry-hint', maxHintMs: 300 });
  const seen = watch(es);
  ok(await until(5000, () => es.status === 'open' && seen.retries.length === 1));
  es.close();
  eq(seen.retries, [{ attempt: 1, delayMs: 310 }]);
  ok(throws(() => new ManagedEventSource(url('x'), { maxHintMs: -1 })) instanceof RangeError);
});

test('a retry hint counts with whitespace around its digits, and is ignored when it is not digits', async () => {
  await plan('hintspace', 'hintdata:%20300%0A', 'stream');
  const es = new ManagedEventSource(url('hintspace'), { baseMs: 10, jitter: 'none', retryHintEvent: 'retry-hint' });
  const seen = watch(es);
  ok(await until(5000, () => es.status === 'open' && seen.retries.length === 1));
  es.close();
  eq(seen.retries, [{ attempt: 1, delayMs: 310 }]);
  await plan('hintbad', 'hintdata:5s', 'stream');
  const bad = new ManagedEventSource(url('hintbad'), { baseMs: 10, jitter: 'none', retryHintEvent: 'retry-hint' });
  const heard = [];
  bad.addEventListener('retry-hint', (e) => heard.push(e.data));
  const told = watch(bad);
  ok(await until(5000, () => bad.status === 'open' && told.retries.length === 1));
  bad.close();
  eq(told.retries, [{ attempt: 1, delayMs: 10 }]);
  eq(heard, ['5s'], 'the event still reaches its listeners');
});

test("each option rule's error carries its whole words in the shipped module", () => {
  // The words are the core's (OptionError::message; a wasm-bindgen test holds the two halves to it). This
  // holds them in the module as the package ships it, after wasm-opt.
  const P = 'managed-eventsource: option ';
  const cases = [
    [{ baseMs: NaN }, RangeError, 'baseMs must be a finite number'],
    [{ maxMs: -1 }, RangeError, 'maxMs must not be negative'],
    [{ maxHintMs: 2 ** 31 }, RangeError, 'maxHintMs must be at most 2147483647 (the longest delay a browser timer honours)'],
    [{ stallTimeoutMs: -1 }, RangeError, 'stallTimeoutMs must not be negative'],
    [{ minUptimeMs: Infinity }, RangeError, 'minUptimeMs must be a finite number'],
    [{ connectTimeoutMs: -5 }, RangeError, 'connectTimeoutMs must not be negative'],
    [{ baseMs: 500, maxMs: 100 }, RangeError, 'maxMs must not be less than baseMs'],
    [{ factor: Infinity }, RangeError, 'factor must be a finite number'],
    [{ factor: 0.5 }, RangeError, 'factor must be at least 1'],
    [{ maxAttempts: 1.5 }, RangeError, 'maxAttempts must be a whole number, 0 or more, or Infinity'],
    [{ lastEventIdParam: '' }, TypeError, 'lastEventIdParam must be a non-empty string'],
    [{ retryHintEvent: '' }, TypeError, 'retryHintEvent must be a non-empty string'],
    [{ heartbeatEvent: 'error' }, TypeError, "heartbeatEvent must not be 'open' or 'error', which are the connection's own events"],
    [{ retryHintEvent: 'open' }, TypeError, "retryHintEvent must not be 'open' or 'error', which are the connection's own events"],
    [{ probe: '' }, TypeError, 'probe must be true, false or a non-empty URL'],
  ];
  for (const [options, kind, words] of cases) {
    const e = throws(() => new ManagedEventSource(url('x'), options));
    ok(e instanceof kind, `${JSON.stringify(options)}: ${e}`);
    eq(e.message, P + words);
  }
});

// ---- hostile inputs ----------------------------------------------------------------------------------

test('hostile inputs: each throws a TypeError, a RangeError or the user\'s own error; none traps', async () => {
  const user = boom();
  const cases = [];
  const opt = (o) => () => new ManagedEventSource(url('hostile'), o);
  const values = [NaN, -1, -Infinity, Infinity, 2 ** 31, 1e308, '1', true, {}, [], null, undefined, Symbol('s'), 10n, () => 1];
  for (const key of ['baseMs', 'maxMs', 'factor', 'maxAttempts', 'maxHintMs']) {
    for (const v of values) cases.push([`${key}: ${String(v)}`, opt({ [key]: v })]);
  }
  for (const key of ['jitter', 'reconnect', 'lastEventIdParam', 'retryHintEvent', 'withCredentials', 'reconnectOnVisible']) {
    for (const v of ['', 'sometimes', 7, {}, Symbol('s'), 'open', 'error']) cases.push([`${key}: ${String(v)}`, opt({ [key]: v })]);
  }
  for (const o of [42, 'x', true, Symbol('o')]) cases.push([`options ${String(o)}`, opt(o)]);
  cases.push(['unknown key', opt({ baseMS: 1 })]);
  cases.push(['getter', opt({ get maxMs() { throw user; } })]);
  cases.push(['Proxy has', opt(new Proxy({}, { ownKeys() { throw user; } }))]);
  for (const u of [Symbol('u'), { toString() { throw user; } }, { [Symbol.toPrimitive]() { throw user; } }, 'http://[::1', 'http://a b/']) {
    cases.push([`url ${typeof u}`, () => new ManagedEventSource(u)]);
  }
  cases.push(['url fn returning null', () => new ManagedEventSource(() => null)]);
  cases.push(['url fn returning Symbol', () => new ManagedEventSource(() => Symbol('x'))]);
  const es = new ManagedEventSource(url('hostile-target'));
  for (const f of [1, 'f', true, 10n, Symbol('f')]) cases.push([`listener ${typeof f}`, () => es.addEventListener('x', f)]);
  cases.push(['listener signal', () => es.addEventListener('x', () => {}, { signal: {} })]);
  cases.push(['listener type Symbol', () => es.addEventListener(Symbol('t'), () => {})]);
  cases.push(['listener options getter', () => es.addEventListener('x', () => {}, { get once() { throw user; } })]);
  for (const k of ['onstatus', 'onretry', 'ongiveup']) cases.push([`${k} = 5`, () => { es[k] = 5; }]);
  cases.push(['handlers 5', () => createManagedStream(url('x'), 5)]);
  cases.push(['handlers unknown', () => createManagedStream(url('x'), { onOpn() {} })]);
  cases.push(['handlers onOpen 5', () => createManagedStream(url('x'), { onOpen: 5 })]);
  cases.push(['handlers events 5', () => createManagedStream(url('x'), { events: 5 })]);
  cases.push(['handlers events.x 5', () => createManagedStream(url('x'), { events: { x: 5 } })]);
  cases.push(['dispatchEvent 5', () => es.dispatchEvent(5)]);
  let threw = 0;
  const wrong = [];
  for (const [name, f] of cases) {
    let e;
    try {
      const made = f();
      made?.close?.();
      if (typeof made === 'function') made();
      continue;
    } catch (err) {
      e = err;
    }
    threw++;
    if (!(e instanceof TypeError || e instanceof RangeError || e === user || e?.name === 'SyntaxError')) wrong.push(`${name}: ${e}`);
  }
  es.close();
  eq(wrong, [], 'untyped errors');
  ok(cases.length >= 60, `${cases.length} cases`);
  ok(threw >= 60, `only ${threw} of ${cases.length} threw`);
  figure('hostile inputs tried', cases.length);
  figure('hostile inputs rejected with a typed or the user\'s error', threw);
  await streams('after-hostile');
});

// ---- the fault matrix -------------------------------------------------------------------------------

/** Each fault as a first-attempt step; every later attempt streams. `refused` uses a closed port. */
const FAULTS = [
  ['drop mid-stream', 'retry:100+cut:2'],
  ['refused connection', null],
  ['500', '500'],
  ['502', '502'],
  ['503', '503'],
  ['401', '401'],
  ['403', '403'],
  ['404', '404'],
  ['204', '204'],
  ['wrong content type', 'type'],
  ['clean end of stream', 'retry:100+events:2'],
  ['stall after headers', 'stall'],
  ['soft shedding (200, retry:, end)', 'retry:100+events:0'],
  ['accepts only after 1.5 s', 'slow:1500'],
  ["server event named 'error'", 'named:2:error'],
  ['empty id:', 'retry:100+idreset'],
];

/**
 * What each mode must do: [statuses after 'connecting', connections the server sees]. In browser mode a
 * refused connection is whatever the browser makes of it: Chromium retries it (so we count the attempts up
 * to maxAttempts), Firefox fails the source at once.
 */
function expected(fault, mode) {
  if (fault === 'refused connection' && mode === 'browser') {
    return [/Firefox/.test(navigator.userAgent) ? ['failed'] : ['reconnecting', 'failed'], 0];
  }
  const reconnects = ['drop mid-stream', 'clean end of stream', 'soft shedding (200, retry:, end)', 'empty id:'];
  const staysOpen = ['stall after headers', 'accepts only after 1.5 s', "server event named 'error'"];
  const fails = ['500', '502', '503', '401', '403', '404', '204', 'wrong content type'];
  if (staysOpen.includes(fault)) return [['open'], 1];
  if (fault === 'refused connection') return mode === 'backoff' ? [['reconnecting', 'failed'], 0] : [['failed'], 0];
  const opened = reconnects.includes(fault) && fault !== 'soft shedding (200, retry:, end)' ? ['open'] : fault === 'soft shedding (200, retry:, end)' ? ['open'] : [];
  if (mode === 'false') return [[...opened, 'failed'], 1];
  if (mode === 'browser' && fails.includes(fault)) return [['failed'], 1];
  return [[...opened, 'reconnecting', 'open'], 2];
}

test('the fault matrix: 16 faults under backoff, browser and false', async () => {
  const probe = await fetch('/log?c=refused-port');
  ok(probe.ok);
  const rows = [];
  const failures = [];
  for (const [fault, step] of FAULTS) {
    const row = [fault];
    for (const mode of ['backoff', 'browser', 'false']) {
      const c = `matrix-${fault}-${mode}`.replace(/[^a-z0-9-]/gi, '_');
      if (step) await plan(c, step, 'stream');
      const reconnect = mode === 'false' ? false : mode;
      const target = step ? url(c) : (await (await fetch('/refused')).json()).url;
      const es = new ManagedEventSource(target, { reconnect, baseMs: 50, maxMs: 50, jitter: 'none', maxAttempts: step ? Infinity : 2 });
      const seen = watch(es);
      const [statuses, connections] = expected(fault, mode);
      const done = () => eq(seen.statuses, statuses) === undefined;
      await until(6000, () => {
        try {
          return done();
        } catch {
          return false;
        }
      });
      await sleep(fault === 'accepts only after 1.5 s' ? 300 : 150);
      const got = { statuses: [...seen.statuses], connections: step ? (await log(c)).attempts.length : 0 };
      es.close();
      const pass = JSON.stringify(got.statuses) === JSON.stringify(statuses) && got.connections === connections;
      if (!pass) failures.push(`${fault} / ${mode}: expected ${JSON.stringify(statuses)} with ${connections} connections, got ${JSON.stringify(got.statuses)} with ${got.connections}`);
      row.push(`${got.statuses.join(' → ')} (${got.connections})${pass ? '' : ' ✗'}`);
    }
    rows.push(row);
  }
  figure('fault matrix', '\n| fault | backoff | browser | false |\n| --- | --- | --- | --- |\n' + rows.map((r) => `| ${r.join(' | ')} |`).join('\n'));
  eq(failures, []);
}, { timeout: 240000 });

// ---- chaos ------------------------------------------------------------------------------------------

test('chaos: 10,000 numbered events through kills, stalls and 503s, each exactly once and in order', async () => {
  await chaos('chaos', 7, 'chaos', (u) => new ManagedEventSource(u, { baseMs: 5, maxMs: 40, lastEventIdParam: 'lastEventId' }));
}, { timeout: 150000 });
