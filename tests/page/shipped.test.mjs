// The package as shipped (pkg/: no_std, lol_alloc, a trap on panic) in a real page: a thousand reconnect
// cycles against the fault-injecting server leave the wasm memory flat. The browser tests under
// wasm-pack test run the same code with std's allocator; this checks the allocator users actually get.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, pageWithErrors } from './browser.mjs';

const ctx = setUp({ dev: {}, sse: true });

test('the shipped build: 1,000 reconnect cycles, memory flat, one connection at a time', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/pkg/package.json`); // any same-origin document will do
  await fetch(`${ctx.sse.url}/plan?c=shipped&then=events:1`);
  const r = await page.evaluate(async (sseUrl) => {
    // The package hides its wasm; catch the instance it makes (test only) to read its memory.
    let exports;
    const Instance = WebAssembly.Instance;
    WebAssembly.Instance = function (module, imports) {
      const instance = new Instance(module, imports);
      exports = instance.exports;
      return instance;
    };
    const lib = await import('/pkg/index.js');
    const memory = () => Object.values(exports).find((v) => v instanceof WebAssembly.Memory).buffer.byteLength;
    let opens = 0, messages = 0, before = 0;
    const t0 = performance.now();
    const es = new lib.ManagedEventSource(`${sseUrl}/sse?c=shipped`, { jitter: 'none', baseMs: 0 });
    es.onmessage = () => messages++;
    await new Promise((done) => {
      es.onopen = () => {
        opens++;
        if (opens === 100) before = memory();
        if (opens === 1100) done();
      };
    });
    const after = memory();
    es.close();
    return { opens, messages, before, after, status: es.status, seconds: (performance.now() - t0) / 1000 };
  }, ctx.sse.url);
  const log = await (await fetch(`${ctx.sse.url}/log?c=shipped`)).json();
  console.log(`shipped build: ${r.opens} cycles in ${r.seconds.toFixed(1)} s; wasm memory ${r.before} -> ${r.after} bytes`);
  assert.equal(r.status, 'closed');
  assert.ok(r.messages >= 1099, `${r.messages} messages`);
  assert.ok(r.after <= r.before + 65536, `memory grew from ${r.before} to ${r.after}`);
  assert.ok(log.maxOpen <= 1, 'never two connections at once');
  assert.deepEqual(errors, []);
  await page.close();
});
