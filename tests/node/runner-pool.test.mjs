// scripts/runner-pool.mjs: holding wasm-bindgen-test-runner's waiting threads, against a real HTTP server on
// loopback that keeps connections alive, as the runner's does.
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { freePort, holdPool, WAITING } from '../../scripts/runner-pool.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits up to `ms` for `cond`. */
async function until(ms, cond) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

/** A keep-alive server on `port` that logs each connection and each answer, in order. */
function serve(port) {
  const log = [], sockets = new Set();
  const server = http.createServer((req, res) => {
    log.push(`answer ${req.url}`);
    res.writeHead(404, { 'Content-Length': '0' }).end();
  });
  server.keepAliveTimeout = 0; // never closed by the server for being idle, as tiny_http never does
  server.on('connection', (s) => {
    log.push('connection');
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () =>
      resolve({
        log,
        open: () => sockets.size,
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
      }),
    ),
  );
}

test('holds four connections, each opened only once the one before was answered, and keeps them open', async () => {
  const port = await freePort();
  const server = await serve(port);
  const pool = holdPool(port);
  try {
    assert.ok(await until(3000, () => pool.held() === WAITING), `held ${pool.held()}`);
    // Each request answered before the next connection: a thread of the runner's pool took each in turn.
    assert.deepEqual(server.log, Array.from({ length: WAITING }, () => ['connection', 'answer /__pool']).flat());
    await sleep(300);
    assert.equal(server.open(), WAITING, 'still open, idle');
    assert.equal(server.log.length, 2 * WAITING, 'and nothing more asked of the server');
  } finally {
    pool.stop();
    await server.close();
  }
});

test('waits for a server that is not listening yet, holds the next one on the same port, and stop() lets go', async () => {
  const port = await freePort();
  const pool = holdPool(port);
  try {
    await sleep(100); // nothing listens: it keeps trying
    assert.equal(pool.held(), 0);
    const first = await serve(port);
    assert.ok(await until(3000, () => pool.held() === WAITING), 'held once the first server listens');
    await first.close(); // the runner of one test target exits ...
    assert.ok(await until(3000, () => pool.held() === 0));
    const second = await serve(port); // ... and the next one listens on the same port
    assert.ok(await until(3000, () => pool.held() === WAITING), 'held again');
    assert.equal(second.open(), WAITING);
    pool.stop();
    assert.ok(await until(3000, () => second.open() === 0), 'stop() closes them');
    const asked = second.log.length;
    await sleep(200);
    assert.equal(second.log.length, asked, 'and connects no more');
    await second.close();
  } finally {
    pool.stop();
  }
});
