// Keeps wasm-bindgen-test-runner's server from leaving a browser's connection unread (docs/reliability.md).
//
// The runner serves its test page with tiny_http, which hands each accepted connection to a pool of
// threads, four of which are kept waiting. A new connection goes to a waiting thread if the pool counts
// one, else to a thread made for it. The count of waiting threads drops only once a woken thread has run
// again, so when a browser opens five or six connections at once (the test page's module graph), a
// connection can be queued for a thread that was already woken for another: it is then unread until a
// thread comes free, and each thread is held by a connection the browser keeps alive (Chromium closes an
// idle one after 300 s).
//
// `holdPool(port)` takes the four waiting threads first: it opens four connections to the runner's server,
// one at a time, each with a request that a thread has to answer, and keeps them open, idle. With no thread
// waiting, the pool makes a thread for each connection the browser opens, and none is queued. Between two
// runners on the same port (cargo runs one per test target) it connects again as soon as the next server
// listens, which is before the runner has started its browser.

import net from 'node:net';

/** tiny_http's MIN_THREADS: the threads its pool keeps waiting. */
export const WAITING = 4;

/**
 * Holds WAITING connections to the server on 127.0.0.1:`port` whenever one listens there, until `stop()`.
 * `log` is told each time they are all held. Returns { stop, held } (`held()`: how many are held now).
 */
export function holdPool(port, { log = () => {}, retryMs = 20 } = {}) {
  let stopped = false, timer = null;
  const open = new Set();

  /** One connection whose request the server has answered, or null if it could not be had. */
  const take = () =>
    new Promise((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      let got = '', done = false;
      const end = (v) => {
        if (done) return;
        done = true;
        resolve(v);
      };
      s.setNoDelay(true);
      s.on('connect', () => s.write(`GET /__pool HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
      s.on('data', (d) => {
        if (done) return; // an answer to nothing: the connection stays open and idle regardless
        got += d;
        // The status line and the headers are enough: a thread read the request and answered it.
        if (got.includes('\r\n\r\n')) end(s);
      });
      s.on('error', () => end(null));
      s.on('close', () => {
        open.delete(s);
        end(null);
        if (!stopped) schedule(); // the runner has gone: hold the next one's
      });
    });

  let busy = false;
  async function fill() {
    timer = null;
    if (stopped || busy) return;
    busy = true;
    try {
      while (!stopped && open.size < WAITING) {
        const s = await take();
        if (!s) break;
        if (stopped) s.destroy();
        else open.add(s);
      }
      if (!stopped && open.size === WAITING) log(`[test] holding the runner's ${WAITING} waiting threads on port ${port}`);
    } finally {
      busy = false;
    }
    if (!stopped && open.size < WAITING) schedule();
  }
  const schedule = () => {
    if (!timer && !stopped) timer = setTimeout(fill, retryMs);
  };
  fill();
  return {
    held: () => open.size,
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const s of open) s.destroy();
      open.clear();
    },
  };
}

/** A port free on 127.0.0.1 now, for the runner to listen on (WASM_BINDGEN_TEST_ADDRESS). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
