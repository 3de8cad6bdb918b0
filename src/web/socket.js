// The JavaScript half of ManagedWebSocket (a wasm-bindgen snippet, with the `websocket` feature): the same
// ladder, machine and shell as ManagedEventSource, over a WebSocket (seed 002), reached the same way (see
// `own` in api.js). It holds no policy: Rust decides which closes reconnect (src/socket.rs) and whether a
// message sent while disconnected may wait; this file keeps the messages that wait (the queue's one place),
// relays each received message without entering wasm, and sends on an open socket straight away.

import { linkOf, own } from './api.js';
import { ask, fail, guard, NAMES, PREFIX } from './base.js';
import { dress, slot } from './listeners.js';
import { readOptions } from './options.js';
import { deliver, fire, inputWith, listen, FRESH } from './relay.js';
import {
  I_OPENED, I_RETRY_NOW, I_CLOSE, I_SOCKET_CLOSED, I_ENQUEUE, I_STATUS, I_READY_STATE, I_ATTEMPT, I_CLOSED,
  Q_NOT_QUEUING, Q_FULL, S_CLOSED, V_CODES, V_CODE_COUNT, V_PROTOCOLS, V_START, V_TRANSPORT,
} from './boundary.js';

function startSocket(me, url, options) {
  if (typeof WebSocket !== 'function') fail('this runtime has no WebSocket');
  if (typeof url !== 'function') url = `${url}`;
  const { o, values } = readOptions(options, 2, ['protocols', 'reconnectOnCleanClose']);
  let protocols = o.protocols ?? [];
  if (typeof protocols === 'string') protocols = [protocols];
  if (!Array.isArray(protocols) || !protocols.every((p) => typeof p === 'string')) fail('option protocols must be a string or an array of strings');
  const codes = o.reconnectOnCleanClose;
  if (codes != null && (!Array.isArray(codes) || !codes.every((c) => typeof c === 'number'))) {
    fail('option reconnectOnCleanClose must be an array of close codes');
  }
  values[V_PROTOCOLS] = protocols;
  values[V_CODES] = codes ?? undefined;
  values[V_CODE_COUNT] = codes?.length ?? 0;
  values[V_TRANSPORT] = 1;
  values[V_START] = 1;
  const link = linkOf(me, url, null);
  link.q = []; // messages sent while disconnected, in order: the queue
  link.max = o.queue?.max;
  link.binaryType = 'blob';
  // When Rust lets go of a socket (relay.js's detach): one closed by close(code, reason) on a live socket
  // (`link.closing`, { code, reason }) closes with those, and is CLOSING: its close event, when it comes,
  // still reaches the user.
  link.detached = (c) => {
    const k = link.closing;
    if (!k) return;
    c.es.close(k.code, k.reason);
    c.es.addEventListener(
      'close',
      (e) => {
        link.closing = null;
        fire(link, 'close', e);
      },
      { once: true },
    );
  };
  // A failure is told by the close event (the socket's error event has gone to listeners already), or by
  // one made for a failure the browser did not report itself (a stall, a connect timeout).
  // (A runtime with WebSocket but no CloseEvent, as Node 22, gets an Event: the init's other members are ignored.)
  link.lost = () => fire(link, 'close', link.ev ?? new (globalThis.CloseEvent ?? Event)('close', { code: 1006, wasClean: false }));
  // On open, before the user hears of it: what waited goes out, in order, each once.
  link.flush = () => {
    const ws = link.c?.es;
    for (const m of link.q.splice(0)) ws.send(m);
  };
  link.s = own(link, values);
  return link;
}

/** Called by Rust for every new socket: open and close go to the shell, messages and errors to the user. */
export const attachSocket = guard((link, ws) => {
  const c = { link, es: ws, fs: [], types: new Set(), first: undefined, last: undefined, seen: undefined };
  ws.binaryType = link.binaryType;
  const s = slot(link, 'message');
  listen(c, 'open', (e) => inputWith(link, e, I_OPENED));
  listen(c, 'message', (e) => {
    c.last = e; // for the stall watchdog
    const list = s.l;
    if (list.length !== 0) deliver(link, 'message', list, e, FRESH);
  });
  listen(c, 'error', (e) => fire(link, 'error', e));
  listen(c, 'close', (e) => inputWith(link, e, I_SOCKET_CLOSED, e.code, +e.wasClean));
  // The inner socket is never handed to user code; if it is closed anyway, the instance closes with it.
  ws.close = () => link.me.close();
  link.c = c;
  link.u = ws.url;
  return c;
});

const encoder = new TextEncoder();

/** A WebSocket that reconnects through a jittered exponential backoff ladder. */
export class ManagedWebSocket {
  #l;
  constructor(url, options) {
    // As WebSocket: its URL is required.
    if (arguments.length === 0) fail('1 argument required, but only 0 present: the URL');
    this.#l = startSocket(this, url, options);
  }
  /** @internal */
  static _link(me) {
    return me.#l;
  }
  get url() {
    return this.#l.u;
  }
  /** 0 CONNECTING (also while waiting to reconnect), 1 OPEN, 2 CLOSING (after close()), 3 CLOSED. */
  get readyState() {
    const r = ask(this.#l, I_READY_STATE);
    return r === 2 && !this.#l.closing ? 3 : r;
  }
  get status() {
    return NAMES[ask(this.#l, I_STATUS)];
  }
  get attempt() {
    return ask(this.#l, I_ATTEMPT);
  }
  get bufferedAmount() {
    return this.#l.c?.es.bufferedAmount ?? 0;
  }
  get protocol() {
    return this.#l.c?.es.protocol ?? '';
  }
  get extensions() {
    return this.#l.c?.es.extensions ?? '';
  }
  get binaryType() {
    return this.#l.binaryType;
  }
  set binaryType(v) {
    // As on WebSocket, a value that is not one of the two is ignored.
    if (v !== 'blob' && v !== 'arraybuffer') return;
    this.#l.binaryType = v;
    if (this.#l.c) this.#l.c.es.binaryType = v;
  }
  /** Sends on the open socket; while disconnected, queues (with the queue option) or throws. */
  send(data) {
    const l = this.#l;
    const ws = l.c?.es;
    if (ws && ws.readyState === 1) return ws.send(data);
    if (ask(l, I_CLOSED)) throw new DOMException(PREFIX + 'the socket is closed', 'InvalidStateError');
    if (ask(l, I_STATUS) === S_CLOSED) throw new DOMException(PREFIX + 'the server closed the socket; reconnectNow() reopens it', 'InvalidStateError');
    const room = l.s.input(I_ENQUEUE, l.q.length);
    if (room === Q_NOT_QUEUING) {
      throw new DOMException(`${PREFIX}the socket is not open (status ${this.status}); to queue messages until it is, pass the queue option`, 'InvalidStateError');
    }
    if (room === Q_FULL) {
      throw new DOMException(`${PREFIX}the queue holds ${l.max} messages already; this one was not sent`, 'InvalidStateError');
    }
    l.q.push(data);
  }
  /** Resets the ladder and connects at once, also after status 'failed' or a close by the server. */
  reconnectNow() {
    this.#l.s.input(I_RETRY_NOW);
  }
  /** Closes for good, with the close frame's code and reason; queued messages are dropped. Final in every
   * state, also after the server closed the socket. */
  close(code, reason) {
    if (code !== undefined && !(code === 1000 || (Number.isInteger(code) && code >= 3000 && code <= 4999))) {
      throw new DOMException(`${PREFIX}close code must be 1000 or from 3000 to 4999, not ${code}`, 'InvalidAccessError');
    }
    reason = reason === undefined ? '' : `${reason}`;
    if (encoder.encode(reason).length > 123) throw new DOMException(`${PREFIX}close reason must be at most 123 bytes of UTF-8`, 'SyntaxError');
    const l = this.#l;
    if (ask(l, I_CLOSED)) return;
    l.q = [];
    l.closing = l.c ? { code, reason } : null;
    l.s.input(I_CLOSE);
  }
}

const link = ManagedWebSocket._link;
delete ManagedWebSocket._link;
dress(ManagedWebSocket, link, ['open', 'message', 'error', 'close'], ['onstatus', 'onretry', 'ongiveup'], ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']);
