// The worker half of tests/browser/workers.mjs: a module worker (dedicated or shared) that imports the
// package from pkg/ and runs one scenario per message, answering with what it saw. It has no document, so
// no visibility, back-forward cache or page lifecycle events: the page-only options must be ignored here.
// (A .js file, so that tests/page/suites.mjs does not take it for a suite.)
import { ManagedEventSource } from '/pkg/fetch.js';
import { ManagedWebSocket } from '/pkg/websocket.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(ms, cond) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

/** The options only a page has, which a worker must take and ignore. */
const PAGE_ONLY = { pauseWhenHiddenMs: 50, reconnectOnVisible: true, reconnectOnOnline: true };
const fast = { jitter: 'none', baseMs: 50, maxMs: 200 };

const scenarios = {
  /** What this global has. */
  globals: () => ({
    document: typeof document,
    EventSource: typeof EventSource,
    WebSocket: typeof WebSocket,
    fetch: typeof fetch,
    locks: typeof navigator.locks?.request,
  }),
  /**
   * A stream over `transport` whose first response ends after 3 events: 6 events across a reconnect,
   * with the page-only options given; then close().
   */
  async stream({ url, transport }) {
    const es = new ManagedEventSource(url, { transport, ...fast, ...PAGE_ONLY, lastEventIdParam: 'lastEventId' });
    const seen = { statuses: [], ids: [], retries: 0, targets: true };
    es.onstatus = (s) => seen.statuses.push(s);
    es.onretry = () => seen.retries++;
    es.onmessage = function (e) {
      seen.ids.push(e.lastEventId);
      seen.targets &&= this === es && e.target === es;
    };
    const done = await until(10000, () => seen.ids.length >= 6);
    es.close();
    return { done, ...seen, status: es.status, url: es.url };
  },
  /** for await with a signal: an abort at the third message ends the loop, after what was queued. */
  async iterate({ url, transport }) {
    const ac = new AbortController();
    const es = new ManagedEventSource(url, { transport, signal: ac.signal });
    const ids = [];
    for await (const ev of es) {
      ids.push(ev.lastEventId);
      if (ids.length === 3) ac.abort();
    }
    return { ids, status: es.status };
  },
  /** A socket dropped after 3 messages: 6 messages across a reconnect; then close(). */
  async socket({ url }) {
    const ws = new ManagedWebSocket(url, { ...fast, ...PAGE_ONLY });
    const seen = { statuses: [], messages: [] };
    ws.onstatus = (s) => seen.statuses.push(s);
    ws.onmessage = (e) => seen.messages.push(e.data);
    const done = await until(10000, () => seen.messages.length >= 6);
    ws.close();
    return { done, ...seen, status: ws.status };
  },
};

/** Runs one request `{ id, scenario, args }` and answers on `port`. */
async function answer(port, { id, scenario, args }) {
  try {
    port.postMessage({ id, ok: true, value: await scenarios[scenario](args) });
  } catch (e) {
    port.postMessage({ id, ok: false, error: `${e?.name}: ${e?.message}` });
  }
}

if (typeof SharedWorkerGlobalScope === 'function' && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = (e) => {
    const port = e.ports[0];
    port.onmessage = (m) => answer(port, m.data);
  };
} else {
  self.onmessage = (m) => answer(self, m.data);
}
