// The fleet run's front (scripts/fleet.mjs): a small TCP proxy on 127.0.0.1, as a layer-4 load balancer
// is. Each new client connection goes to the next node in turn; a node that refuses the connection (down, or
// restarting) is skipped for the next one. A connection whose node goes away is closed on the client's side
// too, so the client sees the drop and reconnects through the proxy, to whichever node is up.
//
//   node scripts/fleet-proxy.mjs --port P --to PORT1,PORT2
//
// It says `{ ready: port }` over IPC once it listens.

import net from 'node:net';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const backends = arg('to', '').split(',').filter(Boolean).map(Number);
let next = 0;

/** Connects to the first node that accepts, trying each once from the next in turn; null if none does. */
async function connectUpstream() {
  const first = next++;
  for (let i = 0; i < backends.length; i++) {
    const port = backends[(first + i) % backends.length];
    const upstream = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket));
      socket.once('error', () => {
        socket.destroy();
        resolve(null);
      });
    });
    if (upstream) return upstream;
  }
  return null;
}

const server = net.createServer(async (client) => {
  client.pause();
  client.on('error', () => {});
  const upstream = await connectUpstream();
  if (!upstream || client.destroyed) {
    upstream?.destroy();
    return client.destroy();
  }
  upstream.on('error', () => {});
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
});
server.listen(Number(arg('port', '0')), '127.0.0.1', () => process.send?.({ ready: server.address().port }));
