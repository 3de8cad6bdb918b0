// A real Redis Cluster for a test run: three `redis-server` processes (Debian's package) on free loopback
// ports with cluster mode on, no persistence, their node files in a directory of their own, joined by
// `redis-cli --cluster create` with no replicas (each owns a third of the slots). Stopped by process id.
//
//   const cluster = await startRedisCluster();   // { urls, ports, stop() }

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisBinary } from './redis-server.mjs';

/** A free loopback port whose cluster bus port (the port + 10000) is free too. */
async function freeClusterPort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    const free = await Promise.all([port, port + 10000].map((p) => new Promise((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(p, '127.0.0.1', () => srv.close(() => resolve(true)));
    })));
    if (free.every(Boolean)) return port;
  }
}

/** One command to a node over a raw socket (no client library), resolving to its reply's text. */
function ask(port, command) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d) => {
      text += d;
      // A bulk string: $<length>\r\n<body>\r\n.
      const m = /^\$(\d+)\r\n/.exec(text);
      if (!m || text.length >= m[0].length + Number(m[1]) + 2) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.once('error', () => resolve(''));
  });
}

async function waitFor(what, test, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`the Redis Cluster: ${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedisCluster({ nodes = 3 } = {}) {
  const binary = redisBinary();
  const cli = spawnSync('sh', ['-c', 'command -v redis-cli'], { encoding: 'utf8' }).stdout.trim();
  if (!cli) throw new Error('redis-cli is not installed (Debian: it comes with redis-server, in redis-tools)');
  const dir = mkdtempSync(join(tmpdir(), 'managed-eventsource-cluster-'));
  const ports = [];
  for (let i = 0; i < nodes; i++) {
    let port;
    do port = await freeClusterPort();
    while (ports.includes(port));
    ports.push(port);
  }
  const children = ports.map((port) =>
    spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'inherit'] }),
  );
  const stop = async () => {
    await Promise.all(
      children.map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return null;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGKILL');
        return gone;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('every node answering PING', async () => (await Promise.all(ports.map((p) => ask(p, 'PING')))).every((r) => r.startsWith('+PONG')), 10_000);
    const created = spawnSync(cli, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await waitFor('cluster_state:ok on every node', async () => (await Promise.all(ports.map((p) => ask(p, 'CLUSTER INFO')))).every((r) => r.includes('cluster_state:ok')), 20_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, urls: ports.map((p) => `redis://127.0.0.1:${p}`), stop };
}
