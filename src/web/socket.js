// The JavaScript half of ManagedWebSocket (a wasm-bindgen snippet, with the `websocket` feature): the same
// ladder, machine and shell as ManagedEventSource, over a WebSocket (seed 002). It holds no policy: Rust
// decides which closes reconnect (src/socket.rs) and how much may wait in the queue; this file keeps the
// queued messages, relays each received message without entering wasm, and sends on an open socket
// straight away.

import { deliver, dress, fail, fire, guard, linkOf, listen, NAMES, num, own, readNumbers, slot, PREFIX } from './api.js';

/** Inputs of the shell's `input`, as in api.js. */
const OPENED = 0, RETRY_NOW = 7;

/** Set by `defineSocket`: `socket(link, numbers, given, protocols, codes)` builds the Rust shell and returns
 * its address; `closed`, `enqueue` and `closeWith` take that address. */
let hooks;

/** Installs the Rust side (the package's websocket entry calls it once). */
export function defineSocket(h) {
  hooks = h;
}

// The options: name and JavaScript type, or the names it may take (see readNumbers in api.js). The order
// is `socket_options` in src/web/mod.rs.
const NUMBERS = [
  ['jitter', ['full', 'equal', 'decorrelated', 'none']],
  ['baseMs', 'number'],
  ['maxMs', 'number'],
  ['factor', 'number'],
  ['maxAttempts', 'number'],
  ['minUptimeMs', 'number'],
  ['reconnectOnVisible', 'boolean'],
  ['reconnectOnOnline', 'boolean'],
  ['connectTimeoutMs', 'number'],
];
const OTHERS = ['protocols', 'queue', 'reconnectOnCleanClose'];

function startSocket(me, url, options) {
  if (typeof WebSocket !== 'function') fail('this runtime has no WebSocket');
  if (typeof url !== 'function') url = `${url}`;
  const { o, values, given } = readNumbers(options, NUMBERS, OTHERS);
  const numbers = new Float64Array(NUMBERS.length + 2);
  numbers.set(values);
  let bits = given;
  // queue: 'none' | 'all' | { max }
  const q = o.queue;
  if (q != null) {
    if (q === 'none' || q === 'all') numbers[9] = q === 'all' ? 1 : 0;
    else if (typeof q === 'object' && typeof q.max === 'number') {
      numbers[9] = 2;
      numbers[10] = q.max;
    } else fail("option queue must be 'none', 'all' or { max: number }");
    bits |= (1 << 9) | (1 << 10);
  }
  let protocols = o.protocols ?? [];
  if (typeof protocols === 'string') protocols = [protocols];
  if (!Array.isArray(protocols) || !protocols.every((p) => typeof p === 'string')) fail('option protocols must be a string or an array of strings');
  const codes = o.reconnectOnCleanClose;
  if (codes != null && (!Array.isArray(codes) || !codes.every((c) => typeof c === 'number'))) {
    fail('option reconnectOnCleanClose must be an array of close codes');
  }
  const link = linkOf(me, url, null);
  link.socket = true;
  link.q = []; // messages sent while disconnected, in order
  link.max = q?.max;
  link.binaryType = 'blob';
  link.closing = null; // close(code, reason) was called on a live socket: it is CLOSING until its close event
  link.s = own(link, hooks.socket(link, numbers, bits, protocols, codes ?? undefined));
  return link;
}

/** Called by Rust for every new socket: open and close go to the shell, messages and errors to the user. */
export const attachSocket = guard((link, ws) => {
  const c = { link, es: ws, fs: [], types: new Set(), first: undefined, last: undefined, seen: undefined };
  ws.binaryType = link.binaryType;
  const s = slot(link, 'message');
  listen(c, 'open', (e) => {
    link.ev = e;
    link.s.input(OPENED);
    link.ev = null;
  });
  listen(c, 'message', (e) => {
    const list = s.l;
    if (list.length !== 0) deliver(link, 'message', list, e);
  });
  listen(c, 'error', (e) => fire(link, 'error', e));
  listen(c, 'close', (e) => {
    link.ev = e;
    hooks.closed(link.s.p, e.code, e.wasClean);
    link.ev = null;
  });
  // The inner socket is never handed to user code; if it is closed anyway, the instance closes with it.
  ws.close = () => link.me.close();
  link.c = c;
  link.u = ws.url;
  return c;
});

/** Sends the first `n` queued messages, in order, on the socket that just opened. */
export const flush = guard((link, n) => {
  const ws = link.c?.es;
  for (const m of link.q.splice(0, n)) ws.send(m);
});

const encoder = new TextEncoder();

/** A WebSocket that reconnects through a jittered exponential backoff ladder. */
export class ManagedWebSocket {
  #l;
  constructor(url, options) {
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
    const r = num(this.#l, 1);
    return r === 2 ? (this.#l.closing ? 2 : 3) : r;
  }
  get status() {
    return NAMES[num(this.#l, 0)];
  }
  get attempt() {
    return num(this.#l, 2);
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
    if (num(l, 0) === 4) throw new DOMException(PREFIX + 'the socket is closed; reconnectNow() reopens one the server closed', 'InvalidStateError');
    const room = hooks.enqueue(l.s.p);
    if (room === 1) {
      throw new DOMException(`${PREFIX}the socket is not open (status ${this.status}); to queue messages until it is, pass the queue option`, 'InvalidStateError');
    }
    if (room === 2) {
      throw new DOMException(`${PREFIX}the queue holds ${l.max} messages already; this one was not sent`, 'InvalidStateError');
    }
    l.q.push(data);
  }
  /** Resets the ladder and connects at once, also after status 'failed' or a close by the server. */
  reconnectNow() {
    this.#l.s.input(RETRY_NOW);
  }
  /** Closes for good, with the close frame's code and reason; queued messages are dropped. */
  close(code, reason) {
    if (code !== undefined && !(code === 1000 || (Number.isInteger(code) && code >= 3000 && code <= 4999))) {
      throw new DOMException(`${PREFIX}close code must be 1000 or from 3000 to 4999, not ${code}`, 'InvalidAccessError');
    }
    reason = reason === undefined ? '' : `${reason}`;
    if (encoder.encode(reason).length > 123) throw new DOMException(`${PREFIX}close reason must be at most 123 bytes of UTF-8`, 'SyntaxError');
    const l = this.#l;
    if (num(l, 0) === 4) return;
    l.q = [];
    l.closing = l.c ? true : null;
    hooks.closeWith(l.s.p, code ?? 0, reason);
  }
}

const link = ManagedWebSocket._link;
delete ManagedWebSocket._link;
dress(ManagedWebSocket, link, ['open', 'message', 'error', 'close'], ['onstatus', 'onretry', 'ongiveup'], ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']);
