// Issue 52: our client and our server, both at their defaults, behind the proxies users put between them:
// Vite's dev proxy, nginx with proxy_buffering on, and a TCP proxy that stops forwarding without closing
// (tests/page/proxies-scene.mjs sets them up, with the node on a real Redis). In Chromium, Firefox and
// WebKit, a client on each transport with no option but the transport must open with nothing published (the
// log's first line), notice the dead connection (the node SIGKILLed behind Vite and nginx, the connection
// frozen behind the TCP proxy) within about two of the log's heartbeat intervals, and come back having lost
// and repeated nothing. `npm run proxies` runs this file; it prints each run's figures.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine } from './browser.mjs';
import { PROXIES, missing, startScene } from './proxies-scene.mjs';

const HEARTBEAT_MS = 1000;
const why = missing();
let scene = null;
before(async () => {
  if (!why) scene = await startScene({ heartbeatMs: HEARTBEAT_MS });
});
after(async () => {
  await scene?.close();
});

inEachEngine("at both defaults, behind Vite's dev proxy, nginx (proxy_buffering on) and a TCP proxy that stops forwarding: open at once, a dead connection noticed within about two heartbeats, nothing lost or repeated", async (engine, page) => {
  assert.equal(why, '', why);
  for (const proxy of PROXIES) {
    const r = await scene.run(proxy, page);
    for (const [transport, f] of Object.entries(r)) {
      const label = `${proxy} ${engine} ${transport}`;
      console.log(`[proxies] ${label.padEnd(26)} open ${String(f.openMs).padStart(5)} ms, dead connection noticed after ${String(f.noticeMs).padStart(5)} ms (heartbeat ${HEARTBEAT_MS} ms), open again after ${String(f.reopenMs).padStart(5)} ms, lost ${f.lost}, repeated ${f.repeated}, reloads ${f.reloads}, received ${f.received}`);
      assert.ok(f.openMs < HEARTBEAT_MS, `${label}: open after ${f.openMs} ms, before any event or heartbeat`);
      // Two intervals, looked at every half interval: 2 to 2.5, and a busy machine's lateness.
      if (proxy !== 'nginx') assert.ok(f.noticeMs >= 1.5 * HEARTBEAT_MS && f.noticeMs <= 2.5 * HEARTBEAT_MS + 1500, `${label}: noticed after ${f.noticeMs} ms`);
      assert.deepEqual([f.lost, f.repeated, f.reloads], [0, 0, 0], `${label}: lost, repeated, reloads`);
      // Behind the TCP proxy the browser may send its reconnect over an idle pooled connection the proxy
      // froze: it never opens, and the connect timeout the announcement set (two intervals) ends it. Without
      // it, about a minute (the browsers' own timeouts).
      if (proxy === 'tcp') assert.ok(f.reopenMs <= 15 * HEARTBEAT_MS, `${label}: open again after ${f.reopenMs} ms`);
    }
  }
});
