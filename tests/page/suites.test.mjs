// The in-browser suites (tests/browser/*.mjs), each run in headless Chromium (playwright-core) and in
// Firefox (WebDriver over geckodriver), against the package in pkg/ and the fault-injecting server, which
// also serves the pages. Every in-page test is reported here as a test of its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';
import { firefox, haveFirefox } from './webdriver.mjs';
import { startServer } from '../server/sse-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.env.SUITE;
const suites = readdirSync(join(here, '..', 'browser'))
  .filter((f) => f.endsWith('.mjs') && f !== 'lib.mjs')
  .map((f) => f.slice(0, -4))
  .filter((s) => !only || only.split(',').includes(s));

let server, chromium, ff;
before(async () => {
  server = await startServer();
  chromium = await launch();
  if (haveFirefox()) ff = await firefox();
});
after(async () => {
  await chromium?.close();
  await ff?.close();
  await server?.close();
});

const TIMEOUT = 10 * 60 * 1000;

async function inChromium(suite) {
  const page = await chromium.newPage();
  await page.goto(`${server.url}/tests/browser/harness.html?suite=${suite}`);
  await page.waitForFunction(() => window.__results, null, { timeout: TIMEOUT, polling: 250 });
  const results = await page.evaluate(() => window.__results);
  await page.close();
  return results;
}

async function inFirefox(suite) {
  await ff.goto(`${server.url}/tests/browser/harness.html?suite=${suite}`);
  await ff.waitFor('return !!window.__results', TIMEOUT);
  return ff.run('return window.__results');
}

for (const suite of suites) {
  for (const [browser, go] of [['Chromium', inChromium], ['Firefox', inFirefox]]) {
    const skip = browser === 'Firefox' && !haveFirefox() ? 'firefox and geckodriver not found' : false;
    test(`${suite} in ${browser}`, { skip, timeout: TIMEOUT }, async (t) => {
      const out = await go(suite);
      for (const f of out.figures) console.log(`[figure] ${browser} ${suite}: ${f.name} = ${f.value}`);
      for (const r of out.results) {
        await t.test(r.name, () => {
          if (!r.ok) assert.fail(r.error);
        });
      }
      assert.ok(out.results.length > 0, 'the suite ran no test');
    });
  }
}
