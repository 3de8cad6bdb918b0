// The demo pages and the package's flavours in Firefox (ESR, through geckodriver): no Chromium-only APIs.
// Skipped, with a message, where Firefox or geckodriver is missing; .ci/run installs both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDevServer } from '../../www/server.mjs';
import { firefox, haveFirefox } from './webdriver.mjs';

const skip = haveFirefox() ? false : 'firefox and geckodriver not found (apt-get install firefox-esr; cargo install geckodriver)';
let dev, ff;
before(async () => {
  if (skip) return;
  dev = await startDevServer({ port: 0, eventMs: 100 });
  ff = await firefox();
});
after(async () => {
  await ff?.close();
  await dev?.close();
});

const errorsInstalled = `window.__errors = []; addEventListener('error', (e) => __errors.push(String(e.message))); addEventListener('unhandledrejection', (e) => __errors.push(String(e.reason)));`;

test('Firefox: the console goes live, rides out an outage, and loses no event', { skip }, async () => {
  await ff.goto(`${dev.url}/`);
  await ff.run(errorsInstalled);
  await ff.waitFor(`return document.querySelector('#badge').dataset.status === 'open' && window.demo.counts.received >= 3`);
  await fetch(`${dev.url}/api/outage?seconds=2`);
  await ff.waitFor(`return document.querySelector('#badge').dataset.status === 'reconnecting'`);
  await ff.waitFor(`return document.querySelector('#badge').dataset.status === 'open'`, 30000);
  const before = await ff.run(`return window.demo.counts.received`);
  await ff.waitFor(`return window.demo.counts.received > ${before + 3}`);
  const counts = await ff.run(`return window.demo.counts`);
  assert.equal(counts.lost, 0);
  assert.equal(counts.dups, 0);
  assert.deepEqual(await ff.run(`return window.__errors`), []);
  console.log(`Firefox ${ff.version}: console ok, ${counts.received} events, none lost`);
});

test('Firefox: the storm page runs every strategy to the end', { skip }, async () => {
  await ff.goto(`${dev.url}/storm.html`);
  await ff.run(errorsInstalled);
  await ff.waitFor(`return !!(window.storm && window.storm.sim)`);
  await ff.run(`const s = document.querySelector('#speed'); s.value = '200'; s.dispatchEvent(new Event('change'));`);
  for (const strategy of ['none', 'full', 'equal', 'decorrelated']) {
    await ff.run(`const s = document.querySelector('#strategy'); s.value = arguments[0]; s.dispatchEvent(new Event('change'));`, strategy);
    await ff.waitFor(`return document.querySelector('#connected').textContent === '150 / 150'`, 60000);
  }
  assert.equal(await ff.run(`return document.querySelectorAll('#compare tbody tr').length`), 4);
  assert.deepEqual(await ff.run(`return window.__errors`), []);
});

test('Firefox: the classic script tag flavour', { skip }, async () => {
  await ff.goto(`${dev.url}/classic.html`);
  await ff.waitFor(`return document.querySelectorAll('#events li').length >= 3`);
  assert.equal(await ff.run(`return document.querySelector('#status').textContent`), 'open');
  assert.equal(await ff.run(`return typeof window.wasm_bindgen`), 'undefined');
});
