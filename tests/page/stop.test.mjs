// `window.stop()` and a stream's first request, in Chromium, Firefox and WebKit: a row of the differences
// table in docs/reference.md, shown.
//
// The page calls `window.stop()` in the task after it made its client, as the web-platform-tests'
// eventsource-request-cancellation does, with a response that waits 1 s before its event. A native
// `EventSource` never opens (Chromium and Firefox cancel it: `error`, CLOSED; WebKit cancels it and fires
// nothing). A page's first ManagedEventSource sends its request once its module is ready, a task or more
// later, so no stop that came before cancels it: it opens. Its stop is called in the constructor's own
// task, which is certain to come before the module is ready (a loaded machine may compile the module
// before the next task runs). Once the module is ready (`prepare()`), a client with `reconnect: 'browser'`
// sends its request in its constructor and does what the native one does. A page's first client opens in
// every mode: the default backoff and the fetch transport too.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached, pageServer } from './browser.mjs';

/** The response's wait before its event, and how long the page watches the client after the stop. */
// A fresh, loaded engine may take more than a second to compile the module before the first request.
const SLOW_MS = 1000, WATCH_MS = 4000;

const server = await pageServer((req, res, u) => {
  if (u.pathname === '/slow') {
    const timer = setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.end('retry:1000\ndata:abc\n\n');
    }, SLOW_MS);
    return void res.on('close', () => clearTimeout(timer));
  }
  if (u.pathname === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    return void res.end('<!doctype html><meta charset="utf-8"><title>stop</title>');
  }
  return false;
});
after(() => server.close());

/** The options of each kind of client (see script). */
const OPTIONS = { first: { reconnect: 'browser' }, 'first-backoff': {}, 'first-fetch': { transport: 'fetch' }, prepared: { reconnect: 'browser' } };

/**
 * The page's script: a client of `kind` ('native'; 'first': a page's first ManagedEventSource, made while
 * its module is still being readied, stopped in the same task, with `reconnect: 'browser'`, 'first-backoff'
 * with the default options, 'first-fetch' with the fetch transport; 'prepared': one made after `prepare()`),
 * stopped by window.stop() in the next task (but 'first'), and watched for WATCH_MS: the events it fires, with the readyState at each.
 */
const script = (kind) => `
  (() => {
    const r = (window.__r = { trace: [], done: false });
    (async () => {
      const { ManagedEventSource, prepare } = await import(${JSON.stringify(kind === 'first-fetch' ? '/pkg/fetch.js' : '/pkg/index.js')});
      if (${JSON.stringify(kind)} === 'prepared') await prepare();
      const es = ${JSON.stringify(kind)} === 'native' ? new EventSource('/slow') : new ManagedEventSource('/slow', ${JSON.stringify(OPTIONS[kind] ?? {})});
      for (const type of ['open', 'message', 'error']) es.addEventListener(type, () => r.trace.push(type + ' ' + es.readyState));
      if (${JSON.stringify(kind)}.startsWith('first')) window.stop();
      else setTimeout(() => window.stop());
      setTimeout(() => {
        r.readyState = es.readyState;
        es.close();
        r.done = true;
      }, ${WATCH_MS});
    })();
    return 'started';
  })()`;

/** Runs `kind`'s script on a fresh page and returns what the client did. */
async function watch(page, kind) {
  await page.goto(`${server.url}/`);
  await page.evaluate(script(kind));
  return pageReached(page, () => false, WATCH_MS + 10_000);
}

inEachEngine("window.stop() before a page's first client has sent its request does not cancel it: it is sent later; once the module is ready, 'browser' mode is cancelled as the native EventSource is", async (engine, page) => {
  const native = await watch(page, 'native');
  const first = await watch(page, 'first');
  const prepared = await watch(page, 'prepared');
  const others = { backoff: await watch(page, 'first-backoff'), fetch: await watch(page, 'first-fetch') };
  console.log(`[figure] ${engine}: after window.stop(), native ${JSON.stringify(native.trace)}, a page's first client ${JSON.stringify(first.trace)}, after prepare() ${JSON.stringify(prepared.trace)}`);
  assert.ok(!native.trace.some((e) => e.startsWith('open')), `native never opens: ${native.trace}`);
  assert.equal(first.trace[0], 'open 1', `a page's first client opens: ${first.trace}`);
  assert.ok(first.trace.includes('message 1'), `and hears the event: ${first.trace}`);
  for (const [mode, r] of Object.entries(others)) assert.deepEqual(r.trace.slice(0, 2), ['open 1', 'message 1'], `${mode}: a page's first client opens too`);
  assert.deepEqual(prepared.trace, native.trace, "after prepare(), 'browser' mode as native");
  assert.equal(prepared.readyState, native.readyState);
});
