// Issue 13: ManagedWebSocket, the same ladder and machine over a WebSocket (seed 002), against a real
// WebSocket server (the `ws` package) on the test server's port.
import { ManagedWebSocket } from '/pkg/websocket.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, WEBKIT, withWarnings } from './lib.mjs';

const wsUrl = (c) => `${location.origin.replace(/^http/, 'ws')}/ws?c=${encodeURIComponent(c)}`;
/** WebKit hands the page a server's clean close with 1012 as an unclean 1006 (measured in WebKitGTK 2.50). */
const fast = { jitter: 'none', baseMs: 50, maxMs: 200 };

function watchSocket(ws) {
  const seen = { statuses: [], closes: [], messages: [], retries: [], opens: 0, errors: 0 };
  ws.onstatus = (s) => seen.statuses.push(s);
  ws.onretry = (r) => seen.retries.push(r.delayMs);
  ws.addEventListener('open', () => seen.opens++);
  ws.addEventListener('error', () => seen.errors++);
  ws.addEventListener('close', (e) => seen.closes.push([e.code, e.wasClean]));
  ws.addEventListener('message', (e) => seen.messages.push(e.data));
  return seen;
}

test('an unclean close (1006) reconnects through the ladder; messages reach listeners with the instance as target', async () => {
  await plan('ws-drop', 'drop:3', 'stream');
  const ws = new ManagedWebSocket(wsUrl('ws-drop'), fast);
  const seen = watchSocket(ws);
  const targets = [];
  ws.onmessage = function (e) {
    targets.push(this === ws && e.target === ws);
  };
  ok(await until(5000, () => seen.messages.length >= 6 && ws.status === 'open'));
  ws.close();
  eq(seen.statuses.slice(0, 3), ['open', 'reconnecting', 'open']);
  eq(seen.closes[0], [1006, false]);
  ok(targets.every(Boolean));
  eq((await log('ws-drop')).attempts.length, 2);
  eq(seen.messages.slice(0, 3), ['message 1', 'message 2', 'message 3']);
});

test('a clean close reconnects only for the codes listed', async () => {
  const outcome = async (c, code, options = {}) => {
    await plan(c, `close:${code}`, 'stream');
    const ws = new ManagedWebSocket(wsUrl(c), { ...fast, ...options });
    const seen = watchSocket(ws);
    await until(3000, () => seen.closes.length >= 1);
    // Settled: closed for good, or open again (a loaded engine may take a while over the second handshake);
    // then a while more, in which nothing else may happen.
    await until(3000, () => seen.statuses.length >= 2 && seen.statuses.at(-1) !== 'reconnecting');
    await sleep(400);
    const result = { statuses: seen.statuses, closes: seen.closes, connections: (await log(c)).attempts.length };
    ws.close();
    return result;
  };
  for (const code of [1001, 1012, 1013]) {
    const r = await outcome(`ws-clean-${code}`, code);
    // Either way it reconnects: a 1006 always does.
    eq(r.closes[0], WEBKIT && code >= 1012 ? [1006, false] : [code, true]);
    eq(r.connections, 2, `${code} reconnects`);
    eq(r.statuses.slice(0, 3), ['open', 'reconnecting', 'open'], `${code}`);
  }
  for (const code of [1000, 1008, 4000]) {
    const r = await outcome(`ws-clean-${code}`, code);
    eq(r.connections, 1, `${code} does not reconnect`);
    eq(r.statuses, ['open', 'closed'], `${code}`);
  }
  const r = await outcome('ws-clean-custom', 4000, { reconnectOnCleanClose: [4000] });
  eq(r.connections, 2, 'a listed application code reconnects');
});

test('after the server closes it, reconnectNow opens it again; after close(), nothing does', async () => {
  await plan('ws-ended', 'close:1000', 'stream');
  const ws = new ManagedWebSocket(wsUrl('ws-ended'), fast);
  const seen = watchSocket(ws);
  ok(await until(3000, () => ws.status === 'closed'));
  eq(ws.readyState, 3);
  ws.reconnectNow();
  ok(await until(3000, () => ws.status === 'open'));
  ws.close(4001, 'done here');
  eq(ws.readyState, 2, 'CLOSING until the close event');
  ok(await until(3000, () => ws.readyState === 3));
  ok(await until(3000, () => seen.closes.length === 2), 'onclose for the client close');
  ws.reconnectNow();
  await sleep(300);
  const l = await log('ws-ended');
  eq(l.attempts.length, 2);
  eq(l.closes.at(-1), { code: 4001, reason: 'done here' });
});

test('trace: a clean close is recorded with its code and is not final; reconnectNow() reopens it, and close() ends the record', async () => {
  await plan('ws-trace', 'close:1000', 'stream');
  const records = [];
  const ws = new ManagedWebSocket(wsUrl('ws-trace'), { ...fast, trace: (r) => records.push(r) });
  ok(await until(3000, () => ws.status === 'closed'));
  ws.reconnectNow();
  ok(await until(3000, () => ws.status === 'open'));
  ws.close();
  eq(records.map((r) => r.type), ['attempt', 'open', 'ended', 'closed', 'attempt', 'open', 'closed']);
  eq([records[2].cause, records[2].code], ['serverEnded', 1000]);
  eq([records[3].by, records[4].trigger, records[6].by], ['server', 'reconnectNow', 'user']);
  eq(records[0].url, wsUrl('ws-trace'));
  eq((await log('ws-trace')).attempts.length, 2, 'one attempt record per connection');
});

test('close() after the server closed the socket is final: reconnectNow() opens nothing, the page is let go', async () => {
  // The bug a review found: the server's clean close left status 'closed' (which reconnectNow may revive),
  // and the user's close() then did nothing, so a later reconnectNow() opened a second life.
  await plan('ws-ended-final', 'close:1000', 'stream');
  const ws = new ManagedWebSocket(wsUrl('ws-ended-final'), fast);
  ok(await until(3000, () => ws.status === 'closed'));
  ws.close();
  ws.reconnectNow();
  dispatchEvent(new Event('online'));
  await sleep(400);
  eq([ws.status, ws.readyState], ['closed', 3]);
  const l = await log('ws-ended-final');
  eq(l.attempts.length, 1, 'no second connection');
  eq(l.open, 0);
  const e = throws(() => ws.send('x'));
  ok(e.name === 'InvalidStateError' && !/reconnectNow/.test(e.message), e.message);
});

test('stallTimeoutMs: a socket that goes silent is treated as dropped; one that talks stays open', async () => {
  // 'echo' answers only what it is sent: silence once open.
  await plan('ws-stall', 'echo', 'stream');
  const ws = new ManagedWebSocket(wsUrl('ws-stall'), { ...fast, stallTimeoutMs: 600 });
  const seen = watchSocket(ws);
  let opened = 0;
  ws.addEventListener('open', () => (opened ||= performance.now()));
  ok(await until(10000, () => seen.opens === 2 && seen.messages.length >= 3), 'reconnected, and the new one streams');
  const l = await log('ws-stall');
  eq(l.attempts.length, 2);
  ok(l.attempts[1].t - l.attempts[0].t >= 600, 'not before the timeout');
  await sleep(1000);
  eq(seen.opens, 2, 'a socket that receives messages is not stalled');
  ws.close();
});

test('stallTimeoutMs: a socket that keeps stalling after it delivered messages is warned about once, with advice for a socket', async () => {
  await withWarnings(async (warned) => {
    // 'echo' on every connection: the one message each open sends comes back, then silence.
    await plan('ws-stalls', '', 'echo');
    const ws = new ManagedWebSocket(wsUrl('ws-stalls'), { ...fast, stallTimeoutMs: 300 });
    ws.onopen = () => ws.send('hello');
    let opens = 0;
    ws.addEventListener('open', () => opens++);
    ok(await until(10000, () => opens >= 4), `${opens} opens`);
    ws.close();
    eq(warned.length, 1, `warned once: ${JSON.stringify(warned)}`);
    ok(/stallTimeoutMs ended 2 connections in a row that had delivered events; raise it$/.test(warned[0]), warned[0]);
  });
});

test('a refused upgrade takes the ladder, and maxAttempts ends in failed', async () => {
  await plan('ws-refuse', '', 'refuse');
  const ws = new ManagedWebSocket(wsUrl('ws-refuse'), { ...fast, maxAttempts: 2 });
  const seen = watchSocket(ws);
  const gaveUp = [];
  ws.ongiveup = (i) => gaveUp.push(i);
  ok(await until(5000, () => ws.status === 'failed'));
  await sleep(300);
  eq(gaveUp, [{ attempts: 2 }]);
  eq((await log('ws-refuse')).attempts.length, 3);
  eq(seen.retries, [50, 100]);
  ws.close();
});

test('a hung upgrade is given up after connectTimeoutMs', async () => {
  await plan('ws-hang', 'hang', 'stream');
  const t0 = performance.now();
  // The timeout also bounds the healthy second handshake: wide enough for a loaded engine to finish it.
  const ws = new ManagedWebSocket(wsUrl('ws-hang'), { ...fast, connectTimeoutMs: 1500 });
  const seen = watchSocket(ws);
  ok(await until(20000, () => ws.status === 'open'));
  const took = performance.now() - t0;
  ws.close();
  ok(took >= 1500, `opened after ${took} ms`);
  eq((await log('ws-hang')).attempts.length, 2);
  eq(seen.statuses.slice(0, 2), ['reconnecting', 'open']);
  figure('a hung upgrade with connectTimeoutMs 600 given up and reconnected after (ms)', Math.round(took));
});

test("queue 'all': messages sent while disconnected arrive on the next open, in order, once", async () => {
  await plan('ws-queue', 'drop:0', 'echo');
  const ws = new ManagedWebSocket(wsUrl('ws-queue'), { jitter: 'none', baseMs: 300, queue: 'all' });
  const seen = watchSocket(ws);
  ok(await until(3000, () => seen.retries.length === 1), 'waiting to reconnect');
  for (let i = 1; i <= 5; i++) ws.send(`queued ${i}`);
  ws.onopen = () => ws.send('from onopen');
  ok(await until(3000, () => seen.messages.length >= 6));
  ws.send('while open');
  ok(await until(3000, () => seen.messages.length >= 7));
  ws.close();
  const { received } = await log('ws-queue');
  eq(received, ['queued 1', 'queued 2', 'queued 3', 'queued 4', 'queued 5', 'from onopen', 'while open']);
});

test("what waited goes out first, also before a send from onstatus('open'), which is heard before the open event's flush", async () => {
  await plan('ws-order', 'drop:0', 'echo');
  const ws = new ManagedWebSocket(wsUrl('ws-order'), { jitter: 'none', baseMs: 300, queue: 'all' });
  const seen = watchSocket(ws);
  ok(await until(3000, () => seen.retries.length === 1), 'waiting to reconnect');
  ws.send('queued 1');
  ws.send('queued 2');
  ws.onstatus = (s) => s === 'open' && ws.send('from onstatus');
  ok(await until(3000, () => seen.messages.length >= 3), `echoed: ${seen.messages}`);
  ws.close();
  eq((await log('ws-order')).received, ['queued 1', 'queued 2', 'from onstatus']);
});

test('close() from the URL function of a later attempt: no socket is made for it (a WebSocket starts its handshake as it is made)', async () => {
  await plan('ws-url-close', 'drop:0', 'echo');
  let calls = 0;
  const ws = new ManagedWebSocket(() => (++calls === 2 && ws.close(), wsUrl('ws-url-close')), { jitter: 'none', baseMs: 100 });
  ok(await until(3000, () => calls === 2 && ws.status === 'closed'), `${calls} calls, ${ws.status}`);
  await sleep(300); // a handshake made anyway would have reached the server by now
  eq([(await log('ws-url-close')).attempts.length, ws.readyState, ws.status], [1, 3, 'closed']);
});

test("queue { max } refuses the one past it; 'none' refuses any; neither drops silently", async () => {
  await plan('ws-max', 'drop:0', 'echo');
  const ws = new ManagedWebSocket(wsUrl('ws-max'), { jitter: 'none', baseMs: 300, queue: { max: 2 } });
  const seen = watchSocket(ws);
  ok(await until(3000, () => seen.retries.length === 1));
  ws.send('a');
  ws.send('b');
  const e = throws(() => ws.send('c'));
  eq([e.name, /holds 2 messages/.test(e.message)], ['InvalidStateError', true]);
  ok(await until(3000, () => seen.messages.length >= 2));
  ws.close();
  eq((await log('ws-max')).received, ['a', 'b']);
  await plan('ws-none', 'drop:0', 'echo');
  const none = new ManagedWebSocket(wsUrl('ws-none'), { jitter: 'none', baseMs: 300 });
  const s2 = watchSocket(none);
  ok(await until(3000, () => s2.retries.length === 1));
  eq(throws(() => none.send('x')).name, 'InvalidStateError');
  none.close();
  eq(throws(() => none.send('y')).name, 'InvalidStateError');
});

test('members: url, protocol, binaryType, bufferedAmount, constants; bad input throws what WebSocket throws', async () => {
  await plan('ws-members', '', 'echo');
  const ws = new ManagedWebSocket(wsUrl('ws-members'), { protocols: [] });
  ok(await until(3000, () => ws.readyState === ws.OPEN));
  eq([ws.url, ws.protocol, ws.binaryType, ws.bufferedAmount], [wsUrl('ws-members'), '', 'blob', 0]);
  ws.binaryType = 'arraybuffer';
  ws.binaryType = 'nonsense';
  eq(ws.binaryType, 'arraybuffer');
  ws.send(new Uint8Array([1, 2, 3]));
  eq([ManagedWebSocket.CONNECTING, ManagedWebSocket.OPEN, ManagedWebSocket.CLOSING, ManagedWebSocket.CLOSED], [0, 1, 2, 3]);
  eq(throws(() => ws.close(1001)).name, 'InvalidAccessError');
  eq(throws(() => ws.close(1000, 'x'.repeat(124))).name, 'SyntaxError');
  ok(await until(3000, async () => (await log('ws-members')).received.includes('binary:3')));
  ws.close(1000);
  for (const [o, E] of [
    [{ queue: 'some' }, TypeError],
    [{ queue: { max: -1 } }, RangeError],
    [{ reconnectOnCleanClose: [1006] }, RangeError],
    [{ reconnectOnCleanClose: 1001 }, TypeError],
    [{ protocols: 7 }, TypeError],
    [{ connectTimeoutMs: -5 }, RangeError],
    [{ baseMS: 1 }, TypeError],
  ]) {
    const e = throws(() => new ManagedWebSocket(wsUrl('x'), o));
    ok(e instanceof E, `${JSON.stringify(o)}: ${e}`);
  }
});

/** Runs `f(make, c)` with the native WebSocket and with ours, each on a client of its own; returns both. */
async function sideBySide(name, f) {
  const out = {};
  for (const [who, make] of [
    ['native', (u, p) => new WebSocket(u, p)],
    ['ours', (u, p) => new ManagedWebSocket(u, p === undefined ? undefined : { protocols: p })],
  ]) {
    out[who] = await f(make, `${name}-${who}`, who);
  }
  return out;
}

/** What close(...args) does on an open socket: what it throws (by name), and what the server receives. */
const closeCases = [['4000', 'x'], [1000.5], [' 1000 '], [[4000]], [4000.5, 'half'], [3000.7], [NaN], [1001], [-1], [66536], [true]];

test('close(code, reason) converts its code as WebSocket does ([Clamp] unsigned short): numeric strings and fractions are codes, the rest throws', async () => {
  const { native, ours } = await sideBySide('ws-code', async (make, c) => {
    const thrown = [];
    for (const [i, args] of closeCases.entries()) {
      await plan(`${c}-${i}`, '', 'echo');
      const ws = make(wsUrl(`${c}-${i}`));
      ok(await until(3000, () => ws.readyState === 1), `${c} ${i} open`);
      try {
        ws.close(...args);
        thrown.push('none');
      } catch (e) {
        thrown.push(e.name);
        ws.close();
      }
    }
    // What the server received, for the codes every engine converts alike (WebKit truncates 3000.7).
    const received = [];
    for (const i of [0, 1, 2, 3, 4]) {
      ok(await until(3000, async () => (await log(`${c}-${i}`)).closes.length === 1), `${c} ${i} closed at the server`);
      received.push((await log(`${c}-${i}`)).closes[0]);
    }
    return { thrown, received };
  });
  eq(ours, native);
  eq(native.thrown, ['none', 'none', 'none', 'none', 'none', 'none', 'InvalidAccessError', 'InvalidAccessError', 'InvalidAccessError', 'InvalidAccessError', 'InvalidAccessError']);
  eq(native.received.map((r) => r.code), [4000, 1000, 1000, 4000, 4000]);
});

test('the subprotocols may be the second argument, a string or an array, as WebSocket takes them', async () => {
  for (const protocols of ['chat', ['chat', 'v2'], ['v2']]) {
    await plan('ws-positional', '', 'echo');
    const native = new WebSocket(wsUrl('ws-positional'), protocols);
    const ours = new ManagedWebSocket(wsUrl('ws-positional'), protocols);
    ok(await until(3000, () => native.readyState === 1 && ours.readyState === 1), `${protocols}: open`);
    eq([ours.protocol, native.protocol], [protocols === 'chat' ? 'chat' : protocols[0], protocols === 'chat' ? 'chat' : protocols[0]], `${protocols}`);
    native.close();
    ours.close();
  }
  // Options still work, and a bad protocol throws the SyntaxError WebSocket throws.
  eq(throws(() => new WebSocket(wsUrl('ws-positional'), 'a b')).name, 'SyntaxError');
  eq(throws(() => new ManagedWebSocket(wsUrl('ws-positional'), 'a b')).name, 'SyntaxError');
  eq(throws(() => new ManagedWebSocket(wsUrl('ws-positional'), ['a', 'a'])).name, 'SyntaxError');
});

test('close() while connecting: error, then close (1006), with readyState CLOSED in both, as WebSocket', async () => {
  for (const step of ['hang', 'echo']) {
    const { native, ours } = await sideBySide(`ws-early-${step}`, async (make, c) => {
      await plan(c, '', step);
      const ws = make(wsUrl(c));
      const seen = [];
      for (const type of ['open', 'error', 'close', 'message']) {
        ws.addEventListener(type, (e) => seen.push([type, ws.readyState, e.code ?? null, e.wasClean ?? null]));
      }
      ws.close();
      seen.push(['after close()', ws.readyState]);
      ok(await until(3000, () => seen.some((s) => s[0] === 'close')), `${c}: closed`);
      await sleep(100);
      return seen;
    });
    eq(ours, native, `${step}:`);
    eq(native.map((s) => s[0]), ['after close()', 'error', 'close'], `${step}: native`);
  }
});

test('protocol keeps the negotiated subprotocol once closed, as WebSocket', async () => {
  for (const how of ['client', 'server']) {
    const { native, ours } = await sideBySide(`ws-proto-${how}`, async (make, c) => {
      await plan(c, how === 'server' ? 'close:1000' : '', 'echo');
      const ws = make(wsUrl(c), ['chat']);
      let atClose = null;
      ws.addEventListener('close', () => (atClose = ws.protocol));
      ok(await until(3000, () => ws.readyState === 1 || atClose !== null), `${c}: open`);
      if (how === 'client') ws.close(1000);
      ok(await until(3000, () => atClose !== null), `${c}: closed`);
      return [atClose, ws.protocol, ws.readyState];
    });
    eq(ours, native, `${how}:`);
    eq(native, ['chat', 'chat', 3], `${how}: native`);
  }
});
