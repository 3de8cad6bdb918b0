// ManagedWebSocket: the same ladder, machine and shell as ManagedEventSource, over a WebSocket (seed 002),
// with a record and a life of its own kind (client.js). It holds no policy: Rust decides which closes
// reconnect (src/socket.rs) and whether a message sent while disconnected may wait; this file keeps the
// messages that wait (the queue's one place), relays each received message without entering wasm, and
// sends on an open socket straight away. It is its own transport (`socketTransport`), which needs no
// `resolve`: its constructor starts its shell at once, and `new WebSocket` throws for a URL it refuses.

import {
  I_OPENED, I_SOCKET_CLOSED, I_ENQUEUE, I_STATUS, I_CLOSED,
  Q_NOT_QUEUING, Q_FULL, S_CLOSED, V_CODES, V_CODE_COUNT, V_PROTOCOLS, V_TRANSPORT,
} from './boundary.js';
import { attemptOf, begin, close, follow, readyStateOf, recordOf, reconnectNow, statusOf, CLOSED } from './client.js';
import { connectionOf, inputWith } from './connection.js';
import { fail, PREFIX } from './errors.js';
import { deliver, dress } from './events.js';
import { iterate } from './iterate.js';
import { instantiate, rust } from './loader.js';
import { readOptions, signalOf } from './options.js';

/** The transport, as client.js drives it (see eventsource.js for the members every transport has). */
const socketTransport = {
  kind: 1,
  stallAdvice: 'raise it',
  configure(record, o) {
    record.queue = [];
    record.queueMax = o.queue?.max;
  },
  /** A socket relays only messages, from attachSocket on. */
  relay() {},
  /** A failure is told by the close event (the socket's error event has gone to listeners already), or by
   * one made for a failure the browser did not report itself (a stall, a connect timeout). */
  failed: (record) => deliver(record, 'close', record.event ?? new (globalThis.CloseEvent ?? Event)('close', { code: 1006, wasClean: false })),
  /** On open, before the user hears of it: what waited goes out, in order, each once. */
  flush(record) {
    const ws = record.connection?.source;
    for (const m of record.queue.splice(0)) ws.send(m);
  },
  attach: attachSocket,
  detach: detachSocket,
};

function startSocket(client, url, options) {
  if (typeof WebSocket !== 'function') fail('this runtime has no WebSocket');
  if (typeof url !== 'function') url = `${url}`;
  // As `new WebSocket(url, protocols)`: a string or a list of strings in the options' place is the
  // subprotocols.
  if (typeof options === 'string' || Array.isArray(options)) options = { protocols: options };
  const { o, values } = readOptions(options, 2, ['protocols', 'reconnectOnCleanClose', 'signal']);
  const signal = signalOf(o);
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
  const record = recordOf(client, url, socketTransport, null);
  socketTransport.configure(record, o);
  values[V_TRANSPORT] = socketTransport.kind;
  // Built and started here, on the main thread: a socket's members (send above all) need its shell at once.
  instantiate();
  if (signal?.aborted) {
    // Checked by a shell that is never started (it throws an option's error); nothing opens.
    rust.free(rust.shell(record, values));
    close(record);
    return record;
  }
  begin(record, values);
  follow(record, signal, closeSocket);
  return record;
}

/** close(code, reason) with arguments checked, and an abort of the `signal` option (no code). */
function closeSocket(record, code, reason = '') {
  if (record.state === CLOSED) return;
  record.queue = [];
  record.closing = record.connection ? { code, reason } : null;
  close(record);
}

/** For every new socket Rust makes: open and close go to the shell, messages and errors to the user. */
function attachSocket(record, ws) {
  const connection = { ...connectionOf(record, ws), listeners: [] };
  ws.binaryType = record.binaryType;
  const listen = (type, f) => {
    ws.addEventListener(type, f);
    connection.listeners.push([type, f]);
  };
  listen('open', (e) => inputWith(record, e, I_OPENED));
  listen('message', (e) => {
    connection.last = e; // for the stall watchdog
    deliver(record, 'message', e);
  });
  listen('error', (e) => deliver(record, 'error', e));
  listen('close', (e) => inputWith(record, e, I_SOCKET_CLOSED, e.code, +e.wasClean));
  record.connection = connection;
  record.currentUrl = ws.url;
  return connection;
}

/**
 * When Rust lets go of a socket, which it then closes itself: our listeners stop hearing it.
 * One closed by close(code, reason) on a live socket is closed with those, and is CLOSING: its close
 * event, when it comes, still reaches the user.
 */
function detachSocket(connection) {
  const record = connection.record, ws = connection.source;
  if (record.connection === connection) record.connection = null;
  record.last = ws;
  for (const [type, f] of connection.listeners) ws.removeEventListener(type, f);
  const closing = record.closing;
  if (!closing) return;
  // Only the arguments the user gave: Chromium reads close(undefined, '') as code 0, and throws.
  if (closing.code === undefined) ws.close();
  else ws.close(closing.code, closing.reason);
  // What the socket fires once closing reaches the user: an error where it had not opened yet (it fails,
  // CLOSED), then its close.
  const end = (e) => {
    record.closing = null;
    deliver(record, e.type, e);
  };
  ws.addEventListener('error', end, { once: true });
  ws.addEventListener('close', end, { once: true });
}

/** A close code as WebSocket's close() converts it (WebIDL's [Clamp] unsigned short): a number (what
 * ToNumber throws for, a Symbol, is thrown), NaN as 0, clamped to 0..65535, rounded to the nearest whole
 * number, a half to the even one. */
function clampCode(code) {
  let x = +code;
  if (x !== x) return 0;
  x = Math.min(Math.max(x, 0), 65535);
  const whole = Math.floor(x), rest = x - whole;
  return rest > 0.5 || (rest === 0.5 && whole % 2 === 1) ? whole + 1 : whole;
}

const encoder = new TextEncoder();

/** A WebSocket that reconnects through a jittered exponential backoff ladder. */
export class ManagedWebSocket {
  #record;
  constructor(url, options) {
    // As WebSocket: its URL is required.
    if (arguments.length === 0) fail('1 argument required, but only 0 present: the URL');
    this.#record = startSocket(this, url, options);
  }
  /** @internal */
  static _record(client) {
    return client.#record;
  }
  get url() {
    return this.#record.currentUrl;
  }
  /** 0 CONNECTING (also while waiting to reconnect), 1 OPEN, 2 CLOSING (after close()), 3 CLOSED. */
  get readyState() {
    const r = readyStateOf(this.#record);
    return r === 2 && !this.#record.closing ? 3 : r;
  }
  get status() {
    return statusOf(this.#record);
  }
  get attempt() {
    return attemptOf(this.#record);
  }
  get bufferedAmount() {
    return (this.#record.connection?.source ?? this.#record.last)?.bufferedAmount ?? 0;
  }
  get protocol() {
    return (this.#record.connection?.source ?? this.#record.last)?.protocol ?? '';
  }
  get extensions() {
    return (this.#record.connection?.source ?? this.#record.last)?.extensions ?? '';
  }
  get binaryType() {
    return this.#record.binaryType;
  }
  set binaryType(v) {
    // As on WebSocket, a value that is not one of the two is ignored.
    if (v !== 'blob' && v !== 'arraybuffer') return;
    this.#record.binaryType = v;
    if (this.#record.connection) this.#record.connection.source.binaryType = v;
  }
  /** Sends on the open socket; while disconnected, queues (with the queue option) or throws. */
  send(data) {
    const record = this.#record;
    const ws = record.connection?.source;
    if (ws && ws.readyState === 1) return ws.send(data);
    const shell = record.shell;
    if (!shell || shell.input(I_CLOSED)) throw new DOMException(PREFIX + 'the socket is closed', 'InvalidStateError');
    if (shell.input(I_STATUS) === S_CLOSED) throw new DOMException(PREFIX + 'the server closed the socket; reconnectNow() reopens it', 'InvalidStateError');
    const room = shell.input(I_ENQUEUE, record.queue.length);
    if (room === Q_NOT_QUEUING) {
      throw new DOMException(`${PREFIX}the socket is not open (status ${this.status}); to queue messages until it is, pass the queue option`, 'InvalidStateError');
    }
    if (room === Q_FULL) {
      throw new DOMException(`${PREFIX}the queue holds ${record.queueMax} messages already; this one was not sent`, 'InvalidStateError');
    }
    record.queue.push(data);
  }
  /** Resets the ladder and connects at once, also after status 'failed' or a close by the server. */
  reconnectNow() {
    reconnectNow(this.#record);
  }
  /** Closes for good, with the close frame's code and reason; queued messages are dropped. Final in every
   * state, also after the server closed the socket. */
  close(code, reason) {
    if (code !== undefined) {
      const given = code;
      code = clampCode(code);
      if (!(code === 1000 || (code >= 3000 && code <= 4999))) {
        throw new DOMException(`${PREFIX}close code must be 1000 or from 3000 to 4999, not ${String(given)}`, 'InvalidAccessError');
      }
    }
    reason = reason === undefined ? '' : `${reason}`;
    if (encoder.encode(reason).length > 123) throw new DOMException(`${PREFIX}close reason must be at most 123 bytes of UTF-8`, 'SyntaxError');
    closeSocket(this.#record, code, reason);
  }
  /** The events of `types` ('message' by default) as an AsyncIterable; the loop owns the socket (iterate.js). */
  events(types, options) {
    return iterate(this.#record, types, options);
  }
  /** `for await (const ev of socket)`: its messages. */
  [Symbol.asyncIterator]() {
    return iterate(this.#record);
  }
}

const socketRecord = ManagedWebSocket._record;
delete ManagedWebSocket._record;
dress(ManagedWebSocket, socketRecord, ['open', 'message', 'error', 'close'], ['onstatus', 'onretry', 'ongiveup'], ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']);
