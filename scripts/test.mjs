// `npm test`: sets up what is missing, then runs every check and ends with one summary line.
//
//   formatting, clippy (host and wasm32), native tests (cargo test), the seam tests in a browser
//   (wasm-pack test --headless, in Chromium and in Firefox, against tests/server/sse-server.mjs), the build
//   scripts' own tests (node:test, tests/node/), the npm package build, and the page tests (node:test;
//   playwright-core drives the system Chromium, a small WebDriver client drives Firefox through geckodriver
//   and WebKitGTK's MiniBrowser through WebKitWebDriver). Page test files share nothing (each starts its own
//   servers and browsers on ports of their own), so they run PAGE_CONCURRENCY at a time. Among them,
//   tests/page/angular.test.mjs builds the Angular test application (tests/angular, whose packages the
//   set-up step installs) with `ng build` and runs it in the three engines: about a minute.
//
// A first run on a fresh machine compiles wasm-pack and wasm-bindgen-cli (about 8 minutes) and the crate
// graph for two targets (a few minutes more). It exits non-zero if anything failed.

import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finished } from './cargo-output.mjs';
import { freePort, holdPool } from './runner-pool.mjs';
import { PAGE_HANG, run } from './run.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Page test files at once: they wait on servers and timers more than they compute. */
const PAGE_CONCURRENCY = Number(process.env.PAGE_CONCURRENCY ?? 3);
const started = Date.now();
const results = [];
let figures = [];

/** Test counts from cargo test, wasm-bindgen-test and node:test output. */
function counts(out) {
  let passed = 0;
  let failed = 0;
  for (const m of out.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  for (const m of out.matchAll(/^(?:#|ℹ) pass (\d+)$/gm)) passed += Number(m[1]);
  for (const m of out.matchAll(/^(?:#|ℹ) fail (\d+)$/gm)) failed += Number(m[1]);
  return { passed, failed };
}

async function step(name, fn) {
  console.log(`\n=== ${name}`);
  const t0 = Date.now();
  let code;
  let out = '';
  try {
    ({ code, out } = await fn());
  } catch (e) {
    console.error(e);
    code = 1;
  }
  const c = counts(out);
  // A step that failed without a failing test (a lint, a crash) still counts as one failure.
  if (code !== 0 && c.failed === 0) c.failed = 1;
  results.push({ name, ok: code === 0, seconds: (Date.now() - t0) / 1000, ...c });
  return code === 0;
}

const cargo = (...args) => () => run('cargo', args);

/** The crate's test targets as cargo names them in its output, and the flags that select each. */
const TARGETS = [
  { label: 'unittests src/lib.rs', args: ['--lib'] },
  ...readdirSync(join(root, 'tests'))
    .filter((f) => f.endsWith('.rs'))
    .sort()
    .map((f) => ({ label: `tests/${f}`, args: ['--test', f.slice(0, -3)] })),
];

/** The wasm-bindgen browser tests in one browser, against a fresh fault-injecting server on loopback. */
async function browserTests(browser) {
  // Imported here, not at the top: the server needs `ws`, which the set-up step installs on a new machine.
  const { startServer } = await import('../tests/server/sse-server.mjs');
  const server = await startServer();
  console.log(`[test] SSE test server on ${server.url}`);
  // wasm-bindgen-test-runner's server leaves a connection unread when a page opens several at once while
  // its pool counts threads as waiting that were already woken; holding those threads first makes it start
  // a thread for each of the browser's connections (scripts/runner-pool.mjs, docs/reliability.md). Every
  // runner of this step listens on the same port, one after another.
  const port = await freePort();
  const pool = holdPool(port, { log: console.log });
  try {
    // With `stream` and `fetch`, so that the Rust API's `events()` and fetch transport are tested too
    // (tests/rust_api.rs).
    // A test page that has not started its scripts 60 s after the runner asked the driver for it is cut
    // short (PAGE_HANG; webdriver.json also keeps Firefox to two connections). With the pool held this has
    // not been seen; the cut and the retries below stay, for a server that does it some other way.
    const once = (only) =>
      run(
        'wasm-pack',
        ['test', '--headless', `--${browser}`, '--features', 'stream,fetch', ...only],
        { SSE_TEST_SERVER: server.url, WASM_BINDGEN_TEST_TIMEOUT: '300', WASM_BINDGEN_TEST_ADDRESS: `127.0.0.1:${port}` },
        PAGE_HANG,
      );
    // A page that never started its scripts (cut short as above, or the runner's "Loading scripts..." left
    // in place at its own time-out) ran none of our code. Then what had not run (that target and the ones
    // after it, which cargo never started) runs again, at most seven more times, and it is said; the targets
    // that had finished are not run again, so that each retry opens as few pages as it can. (A retry names
    // its targets, so the doc-tests, which `cargo test` runs natively too, are not run in it.)
    const stuck = (r) => r.code !== 0 && (r.hung || /Loading scripts\.\.\.Failed to detect test as having been run/.test(r.out));
    let r = await once([]);
    let out = r.out;
    for (let retry = 0; retry < 7 && stuck(r); retry++) {
      const left = TARGETS.filter((t) => !finished(out, t.label));
      console.log(`[test] ${browser} never started a test page's scripts; running again what had not run: ${left.map((t) => t.label).join(', ')}`);
      r = await once(left.flatMap((t) => t.args));
      out += r.out;
    }
    return { code: r.code, out };
  } finally {
    pool.stop();
    figures = figures.concat(server.figures.map((f) => ({ ...f, name: `${browser}: ${f.name}` })));
    await server.close();
  }
}

const ready = await step('set-up', () => run('node', ['scripts/setup.mjs', '--browser']));
if (ready) {
  await step('cargo fmt --check', cargo('fmt', '--check'));
  await step('cargo clippy (host) -D warnings', cargo('clippy', '--all-targets', '--', '-D', 'warnings'));
  await step('cargo clippy (wasm32) -D warnings', cargo('clippy', '--target', 'wasm32-unknown-unknown', '--all-targets', '--', '-D', 'warnings'));
  await step('cargo clippy (wasm32, fetch) -D warnings', cargo('clippy', '--target', 'wasm32-unknown-unknown', '--all-targets', '--features', 'fetch', '--', '-D', 'warnings'));
  await step('cargo clippy (wasm32, the option check) -D warnings', cargo('clippy', '--target', 'wasm32-unknown-unknown', '--lib', '--features', 'small,check', '--', '-D', 'warnings'));
  await step('cargo clippy (wasm32, all features) -D warnings', cargo('clippy', '--target', 'wasm32-unknown-unknown', '--all-targets', '--features', 'fetch,demo,stream', '--', '-D', 'warnings'));
  await step('native tests: cargo test', cargo('test'));
  for (const browser of ['chrome', 'firefox']) {
    await step(`browser tests in ${browser}: wasm-pack test --headless --${browser}`, () => browserTests(browser));
  }
  const built = await step('npm package: node scripts/build.mjs', () => run('node', ['scripts/build.mjs']));
  if (built) {
    await step("scripts' and server module's tests: node --test tests/node", () => run('node', ['--test', '--test-reporter=spec', 'tests/node/']));
    await step('size report: node scripts/size.mjs', () => run('node', ['scripts/size.mjs']));
    await step('population run, quick: node scripts/population.mjs --quick', () => run('node', ['scripts/population.mjs', '--quick']));
    await step('fleet run, quick: node scripts/population.mjs --fleet --quick', () => run('node', ['scripts/population.mjs', '--fleet', '--quick']));
    await step(`page tests: node --test tests/page, ${PAGE_CONCURRENCY} files at a time`, () =>
      run('node', ['--test', '--test-reporter=spec', `--test-concurrency=${PAGE_CONCURRENCY}`, 'tests/page/']),
    );
  }
}

if (figures.length) {
  console.log('\n=== figures measured by the browser tests');
  for (const f of figures) console.log(`${f.name.padEnd(52)} ${f.value}`);
}

console.log('\n=== summary');

for (const r of results) {
  const tests = r.passed || r.failed ? `${r.passed} passed, ${r.failed} failed` : '';
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(52)} ${r.seconds.toFixed(1).padStart(6)} s  ${tests}`);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const allOk = results.every((r) => r.ok) && results.length > 0;
console.log(`summary: ${passed} passed, ${failed} failed, in ${((Date.now() - started) / 1000).toFixed(0)} s of wall time`);
process.exit(allOk && failed === 0 ? 0 : 1);
