// Shared by the page tests: the system Chromium through playwright-core (Playwright cannot download its
// own browser here), with the flags a closed network and a root user need.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firefox, haveFirefox, webkit, haveWebKit } from './webdriver.mjs';

export const artifacts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'artifacts');
mkdirSync(artifacts, { recursive: true });

function chromePath() {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    } catch {}
  }
  throw new Error('Chromium not found: apt-get install -y chromium chromium-driver');
}

export function launch() {
  return chromium.launch({
    executablePath: chromePath(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Opens a page that collects uncaught exceptions and console errors, except failed network loads,
 * which a browser reports for every refused reconnect by design. */
export async function pageWithErrors(browser) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource|net::ERR_|EventSource's response|WebSocket connection to/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });
  return { page, errors };
}

/** Registers before/after hooks that start a browser and the servers a test file needs, and stop them.
 * `dev`: options for the development server (www/server.mjs); `sse`: start the fault-injecting server. */
export function setUp({ dev, sse = false } = {}) {
  const ctx = {};
  before(async () => {
    const { startDevServer } = await import('../../www/server.mjs');
    const { startServer } = await import('../server/sse-server.mjs');
    if (dev) ctx.dev = await startDevServer({ port: 0, ...dev });
    if (sse) ctx.sse = await startServer();
    ctx.browser = await launch();
  });
  after(async () => {
    await ctx.browser?.close();
    await ctx.dev?.close();
    await ctx.sse?.close();
  });
  return ctx;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Starts a server on 127.0.0.1 for a page test: `handle(req, res, url)` answers what it knows and returns
 * false for the rest, which is a file of the built package under /pkg/ or a 404. Resolves to { url, close }.
 */
export async function pageServer(handle) {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (handle(req, res, u) !== false) return;
    const file = normalize(join(root, u.pathname));
    if (!file.startsWith(join(root, 'pkg') + '/') || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/javascript' });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

/**
 * A pageServer (closed after the file's tests) for the testing entry's scripts: `/` is an empty page titled
 * `title`, and `/feed?c=<name>` is served by the script set under `name` in `scripted` (server.handle).
 */
export async function scriptedServer(title) {
  const scripted = new Map();
  const server = await pageServer((req, res, u) => {
    if (u.pathname === '/feed') return void scripted.get(u.searchParams.get('c')).handle(req, res);
    if (u.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title>`);
    }
    return false;
  });
  after(() => server.close());
  return { server, scripted };
}

/**
 * Reads `window.__r`, the JSON-serialisable record a page test's script keeps, every 100 ms until
 * `reached(r)` (or `r.done`), and returns it; at most `limitMs`, then fails with what it last was (a page
 * that never gets there fails its test rather than hang it).
 */
export async function pageReached(page, reached, limitMs) {
  const t0 = Date.now();
  for (;;) {
    const r = JSON.parse(await page.evaluate('JSON.stringify(window.__r)'));
    if (r.done || reached(r)) return r;
    if (Date.now() - t0 > limitMs) assert.fail(`the page did not finish in ${limitMs} ms: ${JSON.stringify(r)}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/**
 * Registers `title` once per engine: Chromium through Playwright, Firefox and WebKit through WebDriver (each
 * skipped when its browser is missing). `body(engine, page)` drives one fresh browser with one page, closed
 * after it: `page.goto(url)`, `page.back()`, and `page.evaluate(source)`, the completion value of a script
 * (JSON-serialisable; a promise is awaited); in Chromium also `page.heapUsed()`, the page's heap in bytes
 * after a full collection, which no driver of Firefox or WebKit can ask for. `engine` is 'chromium',
 * 'firefox' or 'webkit'.
 */
export function inEachEngine(title, body) {
  test(`Chromium: ${title}`, async () => {
    const browser = await launch();
    try {
      const p = await browser.newPage();
      const cdp = await p.context().newCDPSession(p);
      // The page's JavaScript heap in bytes after a full collection (DevTools' protocol; Chromium only).
      const heapUsed = async () => (await cdp.send('HeapProfiler.collectGarbage'), (await cdp.send('Runtime.getHeapUsage')).usedSize);
      await body('chromium', { goto: (u) => p.goto(u), back: () => p.goBack(), evaluate: (s) => p.evaluate(s), heapUsed });
    } finally {
      await browser.close();
    }
  });
  for (const [engine, label, start, have] of [
    ['firefox', 'Firefox', firefox, haveFirefox],
    ['webkit', 'WebKit', webkit, haveWebKit],
  ]) {
    test(`${label}: ${title}`, { skip: !have() && `no ${label}` }, async () => {
      const b = await start();
      try {
        await body(engine, { goto: (u) => b.goto(u), back: () => b.back(), evaluate: (s) => b.run('return eval(arguments[0])', s) });
      } finally {
        await b.close();
      }
    });
  }
}

/** How long a page of in-page tests may take to leave its results. */
const RESULTS_TIMEOUT = 10 * 60 * 1000;

/**
 * Pages that run in-page tests and leave them in `window.__results` (tests/browser/lib.mjs's runner, the
 * Angular test application), per engine: `missing()` says why an engine is skipped; `start()` opens the
 * browser, whose `results(url)` loads a page and returns what it left.
 */
export const RESULT_ENGINES = {
  Chromium: {
    async start() {
      const browser = await launch();
      return {
        async results(url) {
          const page = await browser.newPage();
          await page.goto(url);
          await page.waitForFunction(() => window.__results, null, { timeout: RESULTS_TIMEOUT, polling: 250 });
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
      await d.waitFor('return !!window.__results', RESULTS_TIMEOUT);
      return d.run('return window.__results');
    },
    close: () => d.close(),
  };
}

/** Reports a page's results (`RESULT_ENGINES`) as subtests of `t`, and prints its figures under `label`. */
export async function reportResults(t, out, label) {
  for (const f of out.figures) console.log(`[figure] ${label}: ${f.name} = ${f.value}`);
  for (const r of out.results) {
    await t.test(r.name, () => {
      if (!r.ok) assert.fail(r.error);
    });
  }
  assert.ok(out.results.length > 0, `${label}: the page ran no test`);
}
