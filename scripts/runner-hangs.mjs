// How often a wasm-bindgen test page never starts its scripts, with wasm-bindgen-test-runner's waiting
// threads held (scripts/runner-pool.mjs, as `npm test` runs it) and without, taking turns, against the
// fault-injecting test server on loopback (docs/reliability.md). A page counts as never started when the
// runner has not loaded the module 60 s after it asked the driver for the page (PAGE_HANG, as npm test
// cuts it); that run is then cut. The runs' output is shown as they go.
//
//   node scripts/runner-hangs.mjs [--runs 12] [--browser chrome|firefox] [--target web]
//
// --runs is per mode; the crate's wasm tests must have been built once (npm test does it).

import { freePort, holdPool } from './runner-pool.mjs';
import { PAGE_HANG, run } from './run.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const runs = Number(arg('runs', 12));
const browser = arg('browser', 'chrome');
const target = arg('target', 'web');

/** One `wasm-pack test` of `target`; resolves to whether its page started, and in how many seconds. */
async function once(server, held) {
  const port = await freePort();
  const pool = held ? holdPool(port) : null;
  const t0 = Date.now();
  try {
    const r = await run(
      'wasm-pack',
      ['test', '--headless', `--${browser}`, '--features', 'stream,fetch', '--test', target],
      { SSE_TEST_SERVER: server.url, WASM_BINDGEN_TEST_TIMEOUT: '300', WASM_BINDGEN_TEST_ADDRESS: `127.0.0.1:${port}` },
      PAGE_HANG,
    );
    return { started: /Loading Wasm module/.test(r.out), passed: r.code === 0, seconds: (Date.now() - t0) / 1000 };
  } finally {
    pool?.stop();
  }
}

const { startServer } = await import('../tests/server/sse-server.mjs');
const server = await startServer();
const tally = { held: [], free: [] };
try {
  for (let i = 0; i < runs; i++) {
    for (const held of [false, true]) {
      const r = await once(server, held);
      tally[held ? 'held' : 'free'].push(r);
      console.log(`[runner-hangs] run ${i + 1}, threads ${held ? 'held' : 'not held'}: ${r.started ? 'started' : 'NEVER STARTED'}${r.started && !r.passed ? ' (a test failed)' : ''}, ${r.seconds.toFixed(0)} s`);
    }
  }
} finally {
  await server.close();
}
const line = (rs) => `${rs.filter((r) => !r.started).length} of ${rs.length} pages never started`;
console.log(`\n${browser}, tests/${target}.rs: the runner's waiting threads not held: ${line(tally.free)}; held: ${line(tally.held)}`);
