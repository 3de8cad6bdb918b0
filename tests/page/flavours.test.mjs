// The package's other ways in: a classic <script src> (no modules, no bundler), and a Web Worker, where
// there is no window and no document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, pageWithErrors } from './browser.mjs';

const ctx = setUp({ dev: { eventMs: 100 } });

test('a classic script tag defines managedEventSource at once, and leaks no other global', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/classic.html`);
  await page.waitForFunction(() => document.querySelectorAll('#events li').length >= 3, null, { timeout: 15000 });
  assert.equal(await page.locator('#status').textContent(), 'open');
  const globals = await page.evaluate(async () => ({
    wasmBindgen: typeof window.wasm_bindgen,
    ready: (await window.managedEventSource.ready).ManagedEventSource === window.managedEventSource.ManagedEventSource,
    api: Object.keys(window.managedEventSource).sort(),
  }));
  assert.deepEqual(globals, { wasmBindgen: 'undefined', ready: true, api: ['ManagedEventSource', 'createManagedStream', 'prepare', 'ready'] });
  await page.evaluate(() => window.classic.close());
  assert.deepEqual(errors, []);
  await page.close();
});

test('in a Web Worker (no window, no document) the client streams and reconnects', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/pkg/package.json`); // a same-origin document to start the worker from
  const result = await page.evaluate(async (origin) => {
    const source = `
      const lib = await import('${origin}/pkg/index.js');
      const ids = [];
      const statuses = [];
      let cut = false;
      const es = new lib.ManagedEventSource('${origin}/api/stream', { baseMs: 50, lastEventIdParam: 'lastEventId' });
      es.onstatus = (s) => statuses.push(s);
      es.onmessage = async (ev) => {
        ids.push(Number(ev.lastEventId));
        if (ids.length === 3 && !cut) { cut = true; await fetch('${origin}/api/outage?seconds=0.3'); }
        if (ids.length === 8) {
          es.close();
          postMessage({ ids, statuses, hasDocument: typeof document !== 'undefined', hasWindow: typeof window !== 'undefined' });
        }
      };`;
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const worker = new Worker(url, { type: 'module' });
    return await new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      setTimeout(() => reject(new Error('worker timed out')), 20000);
    });
  }, ctx.dev.url);
  assert.equal(result.hasDocument, false);
  assert.equal(result.hasWindow, false);
  assert.deepEqual(result.ids, result.ids.map((_, i) => result.ids[0] + i), 'resumed after the outage without a gap');
  // onstatus is set after the constructor, which already reported 'connecting'.
  assert.deepEqual(result.statuses, ['open', 'reconnecting', 'open', 'closed']);
  assert.deepEqual(errors, []);
  await page.close();
});
