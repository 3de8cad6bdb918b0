// The in-browser suites (tests/browser/*.mjs) in one engine, against the package in pkg/ and a
// fault-injecting server of the engine's own (which also serves the pages), so that the three engines'
// files (suites.*.test.mjs) can run at once without sharing a client name at the server. Every in-page test
// is reported as a test of its own.
import { test, before, after } from 'node:test';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESULT_ENGINES, reportResults } from './browser.mjs';
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
  const e = RESULT_ENGINES[engine];
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
      await reportResults(t, await browser.results(`${server.url}/tests/browser/harness.html?suite=${suite}${process.env.GREP ? `&grep=${encodeURIComponent(process.env.GREP)}` : ''}`), `${engine} ${suite}`);
    });
  }
}
