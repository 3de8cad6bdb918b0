// The demo page, as a newcomer meets it: live stream, an outage, load shedding. Screenshots go to artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, pageWithErrors, artifacts } from './browser.mjs';

const ctx = setUp({ dev: { eventMs: 200 } });

/** Waits until the status badge shows `status`. */
const badge = (page, status, timeout = 15000) =>
  page.waitForFunction((s) => document.querySelector('#badge').dataset.status === s, status, { timeout });
const counts = (page) => page.evaluate(() => window.demo.counts);

test('the console goes live, survives an outage without losing an event, and shows no errors', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/`);
  await badge(page, 'open');
  await page.waitForFunction(() => window.demo.counts.received >= 3, null, { timeout: 10000 });

  await page.waitForFunction(() => window.demo.socket.status === 'open', null, { timeout: 10000 });

  await page.click('text=Outage 5 s');
  await badge(page, 'reconnecting', 5000);
  // The WebSocket panel drops too; what is sent meanwhile waits in its queue.
  await page.waitForFunction(() => window.demo.socket.status === 'reconnecting', null, { timeout: 5000 });
  await page.fill('#socket-text', 'sent while down');
  await page.click('#socket-form button');
  assert.equal(await page.locator('#socket-queued').textContent(), '1');
  await page.screenshot({ path: join(artifacts, 'index-reconnecting.png') });
  const during = await counts(page);
  await badge(page, 'open', 40000);
  await page.waitForFunction((n) => window.demo.counts.received > n + 3, during.received, { timeout: 10000 });

  await page.waitForFunction(() => [...document.querySelectorAll('#socket-feed li')].some((li) => li.textContent === 'echo: sent while down'), null, { timeout: 40000 });
  const c = await counts(page);
  assert.equal(c.lost, 0, 'no id skipped across the outage');
  assert.equal(c.dups, 0, 'no id delivered twice');
  assert.ok(c.lastId > during.lastId);
  const ladder = await page.locator('#ladder li').allTextContents();
  assert.ok(ladder.some((l) => l.startsWith('attempt  1')), ladder.join('\n'));
  // The trace's timeline: the outage's attempts and waits drawn, the first connection's end marked, each
  // wait the one the ladder told.
  const trace = await page.evaluate(() => window.demo.trace);
  const types = trace.map((r) => r.type);
  assert.deepEqual(types.slice(0, 3), ['attempt', 'open', 'ended'], types.join(' '));
  assert.equal(types.at(-1), 'open', 'live again');
  const waits = trace.filter((r) => r.type === 'wait');
  assert.ok(waits.length >= 1 && ladder.some((l) => l.includes(`wait ${String(waits[0].delayMs).padStart(6)} ms`)), ladder.join('\n'));
  assert.ok(trace.filter((r) => r.type === 'attempt').slice(1).every((r) => r.lastEventId !== ''), 'every reconnect resumed');
  const drawn = await page.evaluate(() => [...document.querySelectorAll('#timeline rect')].map((r) => r.getAttribute('fill')));
  for (const fill of ['var(--wait)', 'var(--live)', '#33465c', 'var(--bad)']) assert.ok(drawn.includes(fill), `the timeline draws ${fill}: ${drawn}`);
  await page.screenshot({ path: join(artifacts, 'index.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('with shedding on, the client waits at least what the server asked', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/`);
  await badge(page, 'open');
  await fetch(`${ctx.dev.url}/api/shed?on=1&minMs=1500&spreadMs=500`);
  const shedBefore = ctx.dev.state.history.reduce((n, r) => n + r.shed, 0) + ctx.dev.state.counts.shed;
  // Time, in the page, from the server's hint to the next open.
  await page.evaluate(() => {
    const t = (window.__times = {});
    const c = window.demo.client;
    c.addEventListener('retry-hint', () => (t.hint ??= performance.now()));
    c.addEventListener('open', () => { if (t.hint && !t.open) t.open = performance.now(); });
    c.reconnectNow();
  });
  await page.waitForFunction(() => [...document.querySelectorAll('#ladder li')].some((l) => l.textContent.includes('server asks')), null, { timeout: 10000 });
  const lines = await page.locator('#ladder li').allTextContents();
  const hint = Number(lines.find((l) => l.includes('server asks')).match(/(\d+) ms/)[1]);
  const wait = Number(lines.find((l) => l.startsWith('attempt')).match(/wait\s+(\d+) ms/)[1]);
  assert.ok(hint >= 1500 && hint <= 2000, `hint ${hint}`);
  assert.ok(wait >= hint, `waited ${wait} ms though the server asked for ${hint}`);
  await fetch(`${ctx.dev.url}/api/shed?on=0`);
  await page.waitForFunction(() => window.__times.open, null, { timeout: 15000 });
  const { hint: hintAt, open: openAt } = await page.evaluate(() => window.__times);
  assert.ok(openAt - hintAt >= hint, `came back ${openAt - hintAt} ms after a hint of ${hint} ms`);
  const shedAfter = ctx.dev.state.history.reduce((n, r) => n + r.shed, 0) + ctx.dev.state.counts.shed;
  assert.ok(shedAfter > shedBefore, 'the server shed the connection');
  assert.equal((await counts(page)).lost, 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('bad options show a typed error, and the Retry button revives a failed stream', async () => {
  const { page, errors } = await pageWithErrors(ctx.browser);
  await page.goto(`${ctx.dev.url}/`);
  await badge(page, 'open');
  await page.fill('input[name=baseMs]', '-5');
  await page.click('text=Apply (reconnects)');
  assert.match(await page.locator('#option-error').textContent(), /^RangeError: .*baseMs/);

  await page.fill('input[name=baseMs]', '50');
  await page.fill('input[name=maxAttempts]', '2');
  await page.click('text=Apply (reconnects)');
  await badge(page, 'open');
  await fetch(`${ctx.dev.url}/api/outage?seconds=3`);
  await badge(page, 'failed');
  assert.equal(await page.locator('#badge').textContent(), 'offline');
  await page.screenshot({ path: join(artifacts, 'index-offline.png') });
  await new Promise((r) => setTimeout(r, 3200));
  await page.click('#retry');
  await badge(page, 'open');
  assert.deepEqual(errors, []);
  await page.close();
});
