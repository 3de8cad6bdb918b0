// The in-browser suites (tests/browser/*.mjs) in one engine, against the package in pkg/ and a
// fault-injecting server of the engine's own (which also serves the pages), so that the three engines'
// files (suites.*.test.mjs) can run at once without sharing a client name at the server. Every in-page test
// is reported as a test of its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';
import { firefox, haveFirefox, haveWebKit, webkit } from './webdriver.mjs';
import { startServer } from '../server/sse-server.mjs';
import { SUITES as BINDING_SUITES, buildBindingSuites } from '../bindings/build.mjs';
import { buildSync } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.env.SUITE;
export const suites = readdirSync(join(here, '..', 'browser'))
  .filter((f) => f.endsWith('.mjs') && f !== 'lib.mjs')
  .map((f) => f.slice(0, -4))
  .filter((s) => !only || only.split(',').includes(s));

const TIMEOUT = 10 * 60 * 1000;

/** How to open a page and read its results, per engine; `missing` says why an engine is skipped. */
const ENGINES = {
  Chromium: {
    async start() {
      const browser = await launch();
      return {
        async results(url) {
          const page = await browser.newPage();
          await page.goto(url);
          await page.waitForFunction(() => window.__results, null, { timeout: TIMEOUT, polling: 250 });
          const results = await page.evaluate(() => window.__results);
          await page.close();
          return results;
        },
        close: () => browser.close(),
      };
    },
  },
  Firefox: { missing: () => !haveFirefox() && 'firefox and geckodriver not found', start: () => driven(firefox) },
  WebKit: { missing: () => !haveWebKit() && 'WebKitWebDriver, MiniBrowser or Xvfb not found (apt-get install webkit2gtk-driver xvfb)', start: () => driven(webkit) },
};

async function driven(open) {
  const d = await open();
  return {
    async results(url) {
      await d.goto(url);
      await d.waitFor('return !!window.__results', TIMEOUT);
      return d.run('return window.__results');
    },
    close: () => d.close(),
  };
}

/**
 * The libraries a suite imports from /vendor/, bundled by esbuild as an application's bundler would (with
 * `process.env.NODE_ENV` defined): TanStack Query's core for the modern suite. Returns their folder.
 */
function vendor() {
  const root = join(here, '..', '..');
  const dir = join(root, 'target', 'vendor');
  buildSync({
    stdin: { contents: "export * from '@tanstack/query-core';", resolveDir: root },
    bundle: true,
    format: 'esm',
    define: { 'process.env.NODE_ENV': '"production"' },
    outfile: join(dir, 'query-core.js'),
    logLevel: 'warning',
  });
  return dir;
}

/** Registers one test per suite in `engine`, each with a subtest per in-page test. */
export function runSuites(engine) {
  const e = ENGINES[engine];
  const skip = e.missing?.() || false;
  let server, browser;
  before(async () => {
    if (skip) return;
    // The framework bindings' suites are bundled with their frameworks first (tests/bindings/build.mjs).
    const bindings = suites.filter((s) => s in BINDING_SUITES);
    if (bindings.length) await buildBindingSuites(bindings);
    server = await startServer({ statics: { '/vendor/': vendor() } });
    browser = await e.start();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  for (const suite of suites) {
    test(`${suite} in ${engine}`, { skip, timeout: TIMEOUT }, async (t) => {
      const out = await browser.results(`${server.url}/tests/browser/harness.html?suite=${suite}`);
      for (const f of out.figures) console.log(`[figure] ${engine} ${suite}: ${f.name} = ${f.value}`);
      for (const r of out.results) {
        await t.test(r.name, () => {
          if (!r.ok) assert.fail(r.error);
        });
      }
      assert.ok(out.results.length > 0, 'the suite ran no test');
    });
  }
}
