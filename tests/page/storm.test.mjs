// The storm page: seed 004's simulation drawn from the wasm simulator, run with each strategy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, pageWithErrors, artifacts } from './browser.mjs';

const ctx = setUp({ dev: {} });

test('every strategy reconnects all clients, and jitter beats lock-step', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/storm.html`);
  await page.waitForFunction(() => window.storm?.sim, null, { timeout: 15000 });
  // Mid-storm, at 1x: clients backing off, requests in flight.
  await page.selectOption('#speed', '1');
  await page.selectOption('#strategy', 'none');
  await page.waitForFunction(() => window.storm.sim.tick >= 10 && window.storm.sim.connected > 0, null, { timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'storm.png') });
  await page.selectOption('#speed', '200');
  for (const strategy of ['none', 'full', 'equal', 'decorrelated']) {
    await page.selectOption('#strategy', strategy);
    await page.waitForFunction(() => document.querySelector('#connected').textContent === '150 / 150', null, { timeout: 60000 });
  }
  const rows = await page.$$eval('#compare tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.replace('● ', '').trim())));
  assert.deepEqual(rows.map((r) => r[0]), ['none', 'full', 'equal', 'decorrelated']);
  const ticks = Object.fromEntries(rows.map((r) => [r[0], Number(r[1])]));
  const peak = Object.fromEntries(rows.map((r) => [r[0], Number(r[2])]));
  assert.ok(ticks.full * 10 < ticks.none, `full ${ticks.full} ticks, none ${ticks.none}`);
  assert.ok(peak.full < peak.none, `peaks ${JSON.stringify(peak)}`);
  const heights = await page.$$eval('#curves polyline', (ls) => ls.map((l) => Math.min(...l.getAttribute('points').trim().split(' ').map((p) => Number(p.split(',')[1])))));
  assert.equal(heights.length, 4);
  assert.ok(heights.every((y) => y < 200), `every curve rises off the axis: ${heights}`);
  assert.deepEqual(errors, []);
  await page.close();
});
