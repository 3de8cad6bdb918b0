// Our client and our server, both at their defaults, behind the proxies users put between them (issue 52):
//   vite   Vite's dev server (`vite` from npm, `server.proxy`): it forwards a response's headers only with its
//          first body byte, and keeps the browser's response open after its backend died
//   nginx  nginx with `proxy_buffering on` (its default), which holds a response in its buffer unless the
//          upstream says `X-Accel-Buffering: no`
//   tcp    a TCP proxy that stops forwarding without closing: a half-open connection, as after a network
//          switch or a laptop's sleep
// Behind them one node, scripts/fleet-node.mjs (pkg/server.js as it ships, an event log on a real Redis);
// beside it a publisher appending a numbered event every PUBLISH_MS through a log of its own on the same Redis
// key (another node), so events go on while the node is dead. A page loaded through the proxy runs a client
// on each transport with no option but the transport, as a newcomer writes it.
//
// Each run: the clients open and receive; then the fault (vite and nginx: the node is SIGKILLed and started
// again once both clients noticed; tcp: every connection through the proxy stops moving); then the clients
// must come back and catch up with the publisher, having lost and repeated nothing.
//
// tests/page/proxies.test.mjs runs it in each engine, asserts, and prints per proxy, engine and transport
// the time to open, the time to notice the dead connection, and the events lost and repeated
// (`npm run proxies`).

import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startRedis } from '../../scripts/redis-server.mjs';
import { freePort } from '../../scripts/runner-pool.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PROXIES = ['vite', 'nginx', 'tcp'];
const PUBLISH_MS = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const nginxBinary = () => spawnSync('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];

/** Why this machine cannot run the scene, or ''. */
export const missing = () => (nginxBinary() ? '' : 'nginx is not installed (Debian: apt-get install -y nginx-light; `npm test` as root on Debian installs it)');


/** The node: scripts/fleet-node.mjs on `port`, its log's heartbeat every `heartbeatMs`. */
function startNode(port, redisUrl, key, heartbeatMs) {
  const proc = fork(join(root, 'scripts', 'fleet-node.mjs'), ['--port', String(port), '--store', 'redis', '--redis', redisUrl, '--key', key, '--heartbeat', String(heartbeatMs), '--page'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise((resolve, reject) => {
    proc.once('message', (m) => resolve(m.ready));
    proc.once('exit', (code) => reject(new Error(`fleet-node exited with ${code} before it was ready`)));
  });
  return ready.then(() => ({ proc, gone: new Promise((r) => proc.once('exit', r)) }));
}

/** A TCP proxy to `port` whose `freeze()` stops every connection it holds from moving, without closing any;
 * connections made after it are forwarded as usual. */
async function startTcpProxy(port) {
  const held = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const pair = { client, upstream };
    held.add(pair);
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => (client.destroy(), upstream.destroy(), held.delete(pair)));
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    freeze() {
      for (const { client, upstream } of held) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      held.clear(); // frozen for good: neither end hears from the other again until the test ends
    },
    close: () => new Promise((r) => (server.close(r), server.emit('close-all'))),
  };
}

/** nginx in the foreground on a free port, proxying everything to `port` with `proxy_buffering on`. */
async function startNginx(port) {
  const dir = mkdtempSync(join(tmpdir(), 'proxies-nginx-'));
  chmodSync(dir, 0o777);
  const listen = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${listen};
    location / {
      proxy_pass http://127.0.0.1:${port};
      proxy_http_version 1.1;
      proxy_set_header Connection '';
      proxy_buffering on;
    }
  }
}
`,
  );
  const proc = spawn(nginxBinary(), ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((_, reject) => proc.once('exit', (code) => reject(new Error(`nginx exited with ${code}; see ${dir}/error.log`))));
  exited.catch(() => {});
  const until = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = net.connect(listen, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > until) throw new Error('nginx did not listen within 10 s');
    await Promise.race([sleep(50), exited]);
  }
  return {
    port: listen,
    async close() {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGQUIT');
      await Promise.race([gone, sleep(3000).then(() => proc.kill('SIGKILL'))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Vite's dev server on a free port: the repository as its root (so it serves pkg/ as an app's module),
 * `/events` and `/page` proxied to `port`. */
async function startVite(port) {
  const { createServer } = await import(pathToFileURL(join(root, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href);
  const target = `http://127.0.0.1:${port}`;
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    appType: 'custom',
    optimizeDeps: { noDiscovery: true, include: [] },
    server: { host: '127.0.0.1', port: await freePort(), strictPort: true, watch: null, hmr: false, proxy: { '/events': target, '/page': target } },
  });
  await server.listen();
  return { port: server.config.server.port, close: () => server.close() };
}

/**
 * The scene: Redis, the node, the publisher and the three proxies. `heartbeatMs` is the node's (the
 * client's watchdog takes two intervals). Returns `{ url(proxy), run(proxy, page), close() }`.
 */
export async function startScene({ heartbeatMs = 1000 } = {}) {
  const redis = await startRedis();
  const key = `proxies-${process.pid}`;
  const nodePort = await freePort();
  let node = await startNode(nodePort, redis.url, key, heartbeatMs);
  const { createEventLog, createRedisStore } = await import(pathToFileURL(join(root, 'pkg', 'server.js')).href);
  const publisher = createEventLog({ store: await createRedisStore({ url: redis.url, key }), heartbeatMs: 0 });
  let published = 0;
  let publishing = true;
  let paused = false;
  const appending = (async () => {
    while (publishing) {
      if (!paused) {
        const id = await publisher.append({ data: String(published + 1) }).catch(() => null);
        if (id !== null) published++;
      }
      await sleep(PUBLISH_MS);
    }
  })();
  const tcp = await startTcpProxy(nodePort);
  const nginx = await startNginx(nodePort);
  const vite = await startVite(nodePort);
  const ports = { vite: vite.port, nginx: nginx.port, tcp: tcp.port };
  const url = (proxy) => `http://127.0.0.1:${ports[proxy]}`;

  async function killNode() {
    const n = node;
    node = null;
    n.proc.kill('SIGKILL');
    await n.gone;
  }

  /**
   * One run through `proxy` in `page` (tests/page/browser.mjs's page: goto, evaluate). Resolves to, per
   * transport, `{ openMs, noticeMs, reopenMs, lost, repeated, reloads, received }`.
   */
  async function run(proxy, page) {
    await page.goto(`${url(proxy)}/page`);
    // Nothing published until both are open: what opens them is the log's first line.
    paused = true;
    await page.evaluate(CLIENTS);
    const read = async () => JSON.parse(await page.evaluate('JSON.stringify(window.__r)'));
    const waitFor = async (what, test, limitMs) => {
      const t0 = Date.now();
      for (;;) {
        const r = await read();
        if (test(r)) return r;
        if (Date.now() - t0 > limitMs) throw new Error(`${proxy}: ${what} not within ${limitMs} ms: ${JSON.stringify(summary(r))}`);
        await sleep(50);
      }
    };
    const both = (f) => (r) => r.eventsource && r.fetch && f(r.eventsource) && f(r.fetch);
    try {
      await waitFor('both clients open with nothing published', both((c) => c.opens.length > 0), 15_000);
    } finally {
      paused = false;
    }
    await waitFor('both clients receiving', both((c) => c.got.length >= 5), 15_000);
    // An idle keep-alive connection in the browser's pool, frozen with the rest: a reconnect the browser sends
    // over it never opens (it failed a full run so, in Chromium), which the connect timeout the server's
    // announcement sets (two heartbeat intervals) must end.
    if (proxy === 'tcp') await page.evaluate("fetch('/page').then((r) => r.text()).then(() => 1)");
    const faultAt = Date.now();
    if (proxy === 'tcp') tcp.freeze();
    else await killNode();
    const noticeLimit = heartbeatMs * 2.5 + 3000;
    const noticed = await waitFor('both clients noticing the dead connection', both((c) => c.errors.some((t) => t >= faultAt)), noticeLimit);
    if (!node) node = await startNode(nodePort, redis.url, key, heartbeatMs);
    // Caught up: each has received what was published by now, or later.
    const target = published;
    const done = await waitFor(`both clients back and caught up with event ${target}`, both((c) => c.got.length > 0 && c.got.at(-1) >= target), 60_000);
    const out = {};
    for (const transport of ['eventsource', 'fetch']) {
      const c = done[transport];
      const first = c.got[0];
      const last = c.got.at(-1);
      const seen = new Set(c.got);
      let lost = 0;
      for (let n = first; n <= last; n++) if (!seen.has(n)) lost++;
      out[transport] = {
        openMs: c.opens[0] - c.t0,
        noticeMs: noticed[transport].errors.find((t) => t >= faultAt) - faultAt,
        // Open again, from the fault (behind Vite and nginx: with the node's restart in it).
        reopenMs: c.opens.find((t) => t >= faultAt) - faultAt,
        lost,
        repeated: c.got.length - seen.size,
        reloads: c.reloads,
        received: c.got.length,
      };
    }
    await page.evaluate('window.__close(); "closed"');
    return out;
  }

  return {
    url,
    run,
    heartbeatMs,
    async close() {
      publishing = false;
      await appending;
      await vite.close().catch(() => {});
      await nginx.close().catch(() => {});
      await tcp.close().catch(() => {});
      if (node) await killNode();
      await publisher.close();
      await redis.stop();
    },
  };
}

const summary = (r) => Object.fromEntries(Object.entries(r ?? {}).map(([k, c]) => [k, { got: c.got.length, last: c.got.at(-1), errors: c.errors.length, statuses: c.statuses.slice(-6) }]));

/** The page's clients: one on each transport, no option but the transport. */
const CLIENTS = `
  window.__r = {};
  window.__clients = [];
  window.__close = () => window.__clients.forEach((c) => c.close());
  Promise.all([import('/pkg/index.js'), import('/pkg/fetch.js')]).then(([main, fetchEntry]) => {
    for (const [name, Client, options] of [['eventsource', main.ManagedEventSource, {}], ['fetch', fetchEntry.ManagedEventSource, { transport: 'fetch' }]]) {
      const r = (window.__r[name] = { t0: Date.now(), got: [], opens: [], errors: [], statuses: [], reloads: 0 });
      const es = new Client('/events', options);
      window.__clients.push(es);
      es.onopen = () => r.opens.push(Date.now());
      es.onerror = () => r.errors.push(Date.now());
      es.onstatus = (s) => r.statuses.push(s);
      es.onmessage = (e) => r.got.push(Number(e.data));
      es.addEventListener('reload', () => r.reloads++);
    }
  });
  'started'`;
