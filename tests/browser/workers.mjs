// Issue 45's workers item: ManagedEventSource (both transports) and ManagedWebSocket in a dedicated and in a
// shared module worker that imports the package from pkg/ (tests/browser/worker-client.js), against the
// fault-injecting server, which counts the requests and the connections still open. A worker has no
// document: the page-only options (pauseWhenHiddenMs, reconnectOnVisible) are given and must be ignored.
// Where an engine lacks a kind of worker, or EventSource in workers, the test shows it (a figure) and checks
// what the package does there instead.
import * as lib from './lib.mjs';

const { test, figure, until, ok, eq } = lib;
const plan = (c, ...a) => lib.plan(`workers-${c}`, ...a);
const log = (c) => lib.log(`workers-${c}`);
const url = (c) => lib.url(`workers-${c}`);
const wsUrl = (c) => `${location.origin.replace(/^http/, 'ws')}/ws?c=workers-${encodeURIComponent(c)}`;
const SCRIPT = '/tests/browser/worker-client.js';

/**
 * A worker of `kind` ('dedicated' or 'shared') as `{ call(scenario, args), close() }`, or `{ missing }` where
 * this engine has no such worker. A worker that fails to load rejects every call with why.
 */
function start(kind) {
  if (kind === 'shared' && typeof SharedWorker !== 'function') return { missing: 'this engine has no SharedWorker' };
  let port, loadError = null;
  const pending = new Map();
  let next = 0;
  const failAll = (why) => {
    loadError = why;
    for (const { reject } of pending.values()) reject(new Error(why));
    pending.clear();
  };
  let worker;
  if (kind === 'dedicated') {
    worker = new Worker(SCRIPT, { type: 'module' });
    port = worker;
  } else {
    worker = new SharedWorker(SCRIPT, { type: 'module', name: `workers-${Math.random()}` });
    port = worker.port;
    port.start();
  }
  worker.onerror = (e) => failAll(`the ${kind} worker failed: ${e.message ?? 'an error event'}`);
  port.onmessage = (m) => {
    const { id, ok: fine, value, error } = m.data;
    const p = pending.get(id);
    pending.delete(id);
    if (fine) p?.resolve(value);
    else p?.reject(new Error(error));
  };
  return {
    call(scenario, args) {
      if (loadError) return Promise.reject(new Error(loadError));
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage({ id, scenario, args });
      });
    },
    close() {
      if (kind === 'dedicated') worker.terminate();
      else port.close();
    },
  };
}

/** Waits until the server holds nothing open for `c`. */
const closedAt = async (c) => ok(await until(3000, async () => (await log(c)).open === 0), `${c}: still open at the server`);

for (const kind of ['dedicated', 'shared']) {
  let worker;
  let globals;

  test(`${kind} worker: a module worker loads the package (no document there)`, async () => {
    worker = start(kind);
    if (worker.missing) {
      figure(`${kind} worker`, worker.missing);
      ok(kind === 'shared' && typeof SharedWorker === 'undefined', worker.missing);
      return;
    }
    globals = await worker.call('globals');
    figure(`${kind} worker globals`, JSON.stringify(globals));
    eq([globals.document, globals.fetch, globals.WebSocket], ['undefined', 'function', 'function']);
  });

  for (const transport of ['eventsource', 'fetch']) {
    test(`${kind} worker: ManagedEventSource over ${transport} reconnects through the ladder, resumes, ignores the page-only options, and closes`, async () => {
      if (worker.missing) return;
      const c = `${kind}-${transport}`;
      await plan(c, 'events:3', 'stream');
      if (transport === 'eventsource' && globals.EventSource !== 'function') {
        // No EventSource in this engine's workers: the constructor says to use the fetch transport.
        figure(`${kind} worker`, 'no EventSource in this engine; the fetch transport works there');
        const e = await worker.call('stream', { url: url(c), transport }).then(() => null, (e) => e);
        ok(/this runtime has no EventSource: use transport 'fetch'/.test(e?.message), String(e?.message));
        eq((await log(c)).attempts.length, 0);
        return;
      }
      const r = await worker.call('stream', { url: url(c), transport });
      ok(r.done, `${r.ids.length} events`);
      eq(r.ids.slice(0, 6), ['1', '2', '3', '4', '5', '6']);
      eq(r.statuses.slice(0, 3), ['open', 'reconnecting', 'open']);
      ok(r.retries >= 1 && r.targets, JSON.stringify(r));
      eq(r.status, 'closed');
      ok(r.url.startsWith(location.origin + '/sse?'), r.url);
      const l = await log(c);
      ok(l.attempts.length === 2 && l.attempts[1].url.endsWith('lastEventId=3'), JSON.stringify(l.attempts.map((a) => a.url)));
      await closedAt(c);
    });

    test(`${kind} worker: for await with a signal over ${transport}`, async () => {
      if (worker.missing || (transport === 'eventsource' && globals.EventSource !== 'function')) return;
      const c = `${kind}-iter-${transport}`;
      await plan(c, '', 'stream');
      // The abort comes at the third event; events queued before it are still the loop's (a loaded worker may
      // have been handed several in one read), in order, and then the loop ends.
      const r = await worker.call('iterate', { url: url(c), transport });
      eq(r.status, 'closed');
      ok(r.ids.length >= 3, JSON.stringify(r.ids));
      eq(r.ids, r.ids.map((_, i) => String(i + 1)), 'in order, from the first');
      await closedAt(c);
    });
  }

  test(`${kind} worker: ManagedWebSocket reconnects after a drop, ignores the page-only options, and closes`, async () => {
    if (worker.missing) return;
    const c = `${kind}-ws`;
    await plan(c, 'drop:3', 'stream');
    const r = await worker.call('socket', { url: wsUrl(c) });
    ok(r.done, `${r.messages.length} messages`);
    eq(r.messages.slice(0, 3), ['message 1', 'message 2', 'message 3']);
    eq(r.statuses.slice(0, 3), ['open', 'reconnecting', 'open']);
    eq(r.status, 'closed');
    eq((await log(c)).attempts.length, 2);
    await closedAt(c);
    worker.close();
  });
}
