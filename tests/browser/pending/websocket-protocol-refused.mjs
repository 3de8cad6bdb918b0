// Pending (not registered: tests/page/suites.mjs reads only tests/browser/*.mjs). A server that accepts the
// upgrade but chooses none of the subprotocols the client asked for. Chromium fails the connection (error,
// close 1006) and a native WebSocket is done; Firefox and WebKit open it (RFC 6455 lets a server answer no
// subprotocol). Where native fails, ManagedWebSocket sees an unclean close (1006), which it cannot tell from
// a dropped connection, and retries through the ladder for ever: the same refusal every time, as the
// unusable URL schemes were. Fails in Chromium; passes in Firefox and WebKit. Run it as any suite, with
// ?suite=pending/websocket-protocol-refused on tests/browser/harness.html.
import { ManagedWebSocket } from '/pkg/websocket.js';
import { test, until, sleep, ok, eq, plan, log } from '../lib.mjs';

const wsUrl = (c) => `${location.origin.replace(/^http/, 'ws')}/ws?c=${encodeURIComponent(c)}`;

test('a server that chooses none of the subprotocols asked for: native fails once; ours should fail too, not retry for ever', async () => {
  await plan('noproto-native', '', 'noproto');
  const native = new WebSocket(wsUrl('noproto-native'), ['chat']);
  const n = [];
  native.onerror = () => n.push('error');
  native.onclose = (e) => n.push(`close ${e.code}`);
  await until(1000, () => native.readyState === 3);
  const fails = native.readyState === 3;
  native.close();
  if (fails) eq(n, ['error', 'close 1006'], 'native');
  await plan('noproto-ours', '', 'noproto');
  const ours = new ManagedWebSocket(wsUrl('noproto-ours'), { protocols: ['chat'], jitter: 'none', baseMs: 20, maxMs: 50 });
  await sleep(1000);
  const attempts = (await log('noproto-ours')).attempts.length;
  const status = ours.status;
  ours.close();
  if (fails) eq([status, attempts], ['failed', 1], 'ours: failed after the one attempt, as native');
  else eq([status, attempts], ['open', 1], 'ours: open, as native');
});
