// A client's life from inside its callbacks (issue 44), in every engine the suites run in: every callback
// calling close(), stop() or reconnectNow() during the first start and later, every event's target, and
// ManagedWebSocket's close() in every state. Each "fresh" copy of the package is a new module (one per
// URL), whose wasm is not compiled yet: the first construct of a page. (A page holds a few dozen copies'
// wasm memories at most: start.mjs has the sweeps, this file the rest.)
import * as indexEntry from '/pkg/index.js';
import * as fetchEntry from '/pkg/fetch.js';
import { ManagedWebSocket } from '/pkg/websocket.js';
import { test, figure, until, sleep, ok, eq, plan, log, url, reported } from './lib.mjs';

let copies = 0;
/** A fresh copy of a package entry: its module is neither compiled nor instantiated. */
const fresh = (entry = 'index') => import(`/pkg/${entry}.js?reentry-${++copies}`);

/** Waits until the server has no connection of client `c` open (and says how many it saw). */
async function closedAtServer(c, message = 'nothing left open at the server') {
  ok(await until(3000, async () => (await log(c)).open === 0), `${message}: ${(await log(c)).open} open`);
}

/**
 * The re-entry matrix: a client (through its on* callbacks, or createManagedStream's handlers) whose
 * `callback` calls `action` the first time it runs. Returns what the user heard and what the server saw.
 */
async function reenter({ entry, first, callback, action, steps }) {
  const c = `reenter-${entry}-${first ? 'first' : 'later'}-${callback}-${action}`;
  await plan(c, steps, 'stream');
  const copy = first ? await fresh(entry) : entry === 'fetch' ? fetchEntry : indexEntry;
  if (!first) await copy.prepare();
  const options = { jitter: 'none', baseMs: 30, maxAttempts: /give ?up/i.test(callback) ? 1 : 5, ...(entry === 'fetch' ? { transport: 'fetch' } : {}) };
  const heard = [];
  let done = false, es = null, stop = null;
  const act = () => {
    if (done) return;
    done = true;
    if (action === 'close') es ? es.close() : stop();
    else es.reconnectNow();
  };
  const handler = (name) => (x) => {
    if (name === 'onStatus' || name === 'onstatus') heard.push(x);
    // The first call at which the client (or stop) exists: createManagedStream's onStatus hears
    // 'connecting' inside the constructor, before it does.
    if (name === callback && (es || stop)) act();
  };
  if (callback[2] === callback[2].toUpperCase()) {
    // createManagedStream's handlers: onStatus, onOpen, onMessage, onRetryScheduled, onGiveUp.
    const names = ['onStatus', 'onOpen', 'onMessage', 'onRetryScheduled', 'onGiveUp'];
    stop = copy.createManagedStream(url(c), Object.fromEntries(names.map((n) => [n, handler(n)])), options);
  } else {
    es = new copy.ManagedEventSource(url(c), options);
    for (const n of ['onstatus', 'onopen', 'onmessage', 'onretry', 'ongiveup']) es[n] = handler(n);
  }
  ok(await until(8000, () => done), `${c}: the callback ran`);
  return { c, es, stop, heard };
}

test('close(), stop() and reconnectNow() from every callback, during the first start and later: the status heard last is the status, and the server sees what should be open', async () => {
  const CALLBACKS = [
    ['onstatus', ''], ['onopen', ''], ['onmessage', ''], ['onretry', '503'], ['ongiveup', '503,503'],
    ['onStatus', ''], ['onOpen', ''], ['onMessage', ''], ['onRetryScheduled', '503'], ['onGiveUp', '503,503'],
  ];
  let cases = 0;
  for (const entry of ['index', 'fetch']) {
    for (const first of [true, false]) {
      for (const [callback, steps] of CALLBACKS) {
        for (const action of ['close', 'reconnectNow']) {
          if (action === 'reconnectNow' && callback[2] === callback[2].toUpperCase()) continue; // createManagedStream has only stop()
          const { c, es, stop, heard } = await reenter({ entry, first, callback, action, steps });
          cases++;
          if (action === 'close') {
            await closedAtServer(c, c);
            eq(heard.at(-1), 'closed', `${c}: heard last`);
            if (es) eq([es.status, es.readyState], ['closed', 2], `${c}:`);
          } else {
            ok(await until(5000, () => es.status === 'open'), `${c}: open again (${es.status})`);
            eq(heard.at(-1), es.status, `${c}: heard last`);
            ok(await until(3000, async () => (await log(c)).open === 1), `${c}: one connection open at the server`);
            es.close();
            await closedAtServer(c, c);
          }
          (stop ?? (() => es.close()))();
        }
      }
    }
  }
  figure('re-entry cases run', cases);
});

/** What identifies `client` in an event `e` seen by a listener called with `self` as `this` (and the phase a
 * native EventSource's listener sees, AT_TARGET). */
const identity = (client, e, self) => [e.target === client, e.currentTarget === client, self === client, e.srcElement === client, e.composedPath()[0] === client, e.eventPhase === Event.AT_TARGET];

test("every event's target, currentTarget and this is the instance, its eventPhase AT_TARGET: open, message, named and error events, on both transports, for a page's first client and a later one", async () => {
  const ALL = [true, true, true, true, true, true];
  for (const entry of ['index', 'fetch']) {
    for (const first of [true, false]) {
      const c = `identity-${entry}-${first}`;
      await plan(c, 'cut:3,named:2:tick', 'stream');
      const copy = first ? await fresh(entry) : entry === 'fetch' ? fetchEntry : indexEntry;
      if (!first) await copy.prepare();
      const es = new copy.ManagedEventSource(url(c), { jitter: 'none', baseMs: 50, ...(entry === 'fetch' ? { transport: 'fetch' } : {}) });
      const seen = {};
      const record = (name) =>
        function (e) {
          seen[name] ??= identity(es, e, this);
        };
      es.onopen = record('onopen');
      es.onmessage = record('onmessage');
      es.onerror = record('onerror');
      for (const type of ['open', 'message', 'tick', 'error']) es.addEventListener(type, record(`listener ${type}`));
      es.addEventListener('message', { handleEvent: (e) => (seen['handleEvent message'] ??= identity(es, e, es)) });
      ok(await until(8000, () => Object.keys(seen).length === 8), `${c}: ${Object.keys(seen)}`);
      for (const [name, got] of Object.entries(seen)) eq(got, ALL, `${c}: ${name}`);
      // A guard against a replaced source by identity, as user code writes it, drops nothing.
      let kept = 0;
      es.addEventListener('message', (e) => e.target === es && kept++);
      ok(await until(3000, () => kept >= 2), `${c}: events kept by an identity guard`);
      es.close();
      await closedAtServer(c, c);
    }
  }
});

test('ManagedWebSocket.close() with and without arguments, in every state, raises no page error', async () => {
  const wsUrl = (c) => `${location.origin.replace(/^http/, 'ws')}/ws?c=${encodeURIComponent(c)}`;
  const before = reported.length;
  const errors = [];
  const onerror = (e) => errors.push(String(e.message ?? e.error));
  addEventListener('error', onerror);
  try {
    for (const args of [[], [1000], [4000, 'bye']]) {
      // Connecting.
      const a = new ManagedWebSocket(wsUrl('ws-close'));
      a.close(...args);
      eq(a.status, 'closed', `connecting, close(${args})`);
      ok(await until(3000, () => a.readyState === 3), `connecting, close(${args}): ${a.readyState}`);
      // Open.
      const b = new ManagedWebSocket(wsUrl('ws-close'));
      ok(await until(3000, () => b.readyState === 1));
      b.close(...args);
      eq(b.status, 'closed');
      ok(await until(3000, () => b.readyState === 3), `open, close(${args}): ${b.readyState}`);
      // Waiting to reconnect (no server there).
      const d = new ManagedWebSocket('ws://127.0.0.1:9/', { baseMs: 60000 });
      ok(await until(5000, () => d.status === 'reconnecting'));
      d.close(...args);
      eq(d.status, 'closed');
      // Closed already.
      d.close(...args);
      b.close(...args);
    }
    await sleep(300);
    eq(errors, [], 'no page error');
    eq(reported.length, before, 'nothing reported');
  } finally {
    removeEventListener('error', onerror);
  }
});
