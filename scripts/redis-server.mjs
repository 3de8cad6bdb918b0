// A real redis-server for a test run, a benchmark or the fleet run: on a free loopback port of its own, with
// no persistence (`--save '' --appendonly no`), stopped by its process id. Debian's `redis-server` package;
// `.ci/run` and scripts/setup.mjs install it when missing.
//
//   const redis = await startRedis();   // { port, url, pid, kill(), start(), stop() }

import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { freePort } from './runner-pool.mjs';

/** The redis-server binary, or an Error that says how to get one. */
export function redisBinary() {
  const r = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = r.stdout.trim();
  if (!path) {
    throw new Error('redis-server is not installed: the event log tests and the fleet run need a real one (Debian: apt-get install -y redis-server; `npm test` as root on Debian installs it)');
  }
  return path;
}

/** Resolves once something accepts connections on the port (a PING gets PONG). */
async function reachable(port, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(String(d).startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startRedis({ port } = {}) {
  const binary = redisBinary();
  const chosen = port ?? (await freePort());
  let child = null;
  const handle = {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    get pid() {
      return child?.pid ?? null;
    },
    /** Starts (again) on the same port; a restarted server has no data (no persistence). */
    async start() {
      if (child) return;
      child = spawn(binary, ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'inherit'] });
      const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`))));
      exited.catch(() => {});
      await Promise.race([reachable(chosen, 10_000), exited]);
    },
    /** SIGKILL: the server is gone at once, as in a crash. Resolves when the process has exited. */
    async kill() {
      if (!child) return;
      const c = child;
      child = null;
      const gone = new Promise((r) => c.once('exit', r));
      process.kill(c.pid, 'SIGKILL');
      await gone;
    },
    async stop() {
      await handle.kill();
    },
  };
  await handle.start();
  return handle;
}
