// ManagedWebSocket: the same ladder, machine and shell as ManagedEventSource, over a WebSocket (seed 002),
// with a record and a life of its own kind (client.js). The shell decides when to open, wait, reconnect and
// give up; this file holds the socket's own policy (seed 002), which the shell's module has none of, so that
// a page without this entry pays nothing for it: which closes reconnect (`ends`), which close codes may be
// listed, and what may wait for the next open (`send`, the queue's one place). It is its own transport
// (`socketTransport`), which opens each attempt's socket itself (`open`, through connection.js, as the fetch
// transport does), relays each received message without entering wasm, and sends on an open socket straight
// away. It needs no `resolve`: its constructor starts its shell at once, and `new WebSocket` throws for a
// URL it refuses.

import { I_OPENED, I_FAILED, I_ENDED, I_STATUS, I_CLOSED, S_CLOSED, V_TRANSPORT } from './boundary.js';
import { attemptOf, begin, close, follow, readyStateOf, recordOf, reconnectNow, statusOf, traceOption, CLOSED } from './client.js';
import { connectionOf, inputWith } from './connection.js';
import { urlOf } from './effects.js';
import { error, fail, PREFIX } from './errors.js';
import { deliver, dress } from './events.js';
import { iterate } from './iterate.js';
import { instantiate, rust } from './loader.js';
import { readOptions, signalOf } from './options.js';

/** The close codes after which a clean close still reconnects, by default: 1001 going away (a server
 * shutting down or restarting), 1012 service restart, 1013 try again later. */
export const RECONNECT_CODES = [1001, 1012, 1013];

/** Whether a close with `code` (`clean` when it closed with a handshake) ends the stream: only a clean one
 * whose code `codes` does not list. An unclean close, and 1006 (never clean, whatever a caller says),
 * reconnects through the ladder. */
export const ends = (clean, code, codes) => clean && code !== 1006 && !codes.includes(code);

/** Whether `code` may be listed in `reconnectOnCleanClose`: one a close frame can carry (1000 to 4999, not
 * the reserved 1004, 1005, 1006 and 1015, which are never sent). */
export const closeCode = (code) => Number.isInteger(code) && code >= 1000 && code <= 4999 && ![1004, 1005, 1006, 1015].includes(code);

/**
 * The `queue` option as the most messages that may wait for the next open: undefined for 'none' (the
 * default: `send` while disconnected throws), Infinity for 'all', `max` for `{ max }` (a whole number, 0 or
 * more). Throws a TypeError or RangeError naming the option.
 */
export function queueMax(queue = 'none') {
  if (queue === 'none') return undefined;
  if (queue === 'all') return Infinity;
  const max = queue?.max;
  if (typeof queue !== 'object' || typeof max !== 'number') fail("option queue must be 'none', 'all' or { max: number }");
  if (!(Number.isInteger(max) && max >= 0 && max <= 0xffffffff)) throw error(true, 'queue', 'max must be a whole number, 0 or more');
  return max;
}

/** The transport, as client.js drives it (see eventsource.js for the members every transport has). */
const socketTransport = {
  kind: 1,
  stallAdvice: 'raise it',
  /** Reads the socket's own options: its subprotocols, the clean closes that reconnect, its queue. */
  configure(record, o) {
    let protocols = o.protocols ?? [];
    if (typeof protocols === 'string') protocols = [protocols];
    if (!Array.isArray(protocols) || !protocols.every((p) => typeof p === 'string')) fail('option protocols must be a string or an array of strings');
    const codes = o.reconnectOnCleanClose;
    if (codes != null && (!Array.isArray(codes) || !codes.every((c) => typeof c === 'number'))) {
      fail('option reconnectOnCleanClose must be an array of close codes');
    }
    record.queueMax = queueMax(o.queue ?? undefined);
    if (codes != null && !codes.every(closeCode)) {
      throw error(true, 'reconnectOnCleanClose', 'must hold close codes from 1000 to 4999 (not 1004, 1005, 1006 or 1015)');
    }
    record.protocols = protocols;
    record.codes = codes ? [...codes] : RECONNECT_CODES;
    /** What was sent while disconnected, in order, for the next open. */
    record.queue = [];
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
  open: openSocket,
  detach(connection) {
    detachSocket(connection);
    connection.source?.close();
  },
};

function startSocket(client, url, options, own) {
  if (typeof WebSocket !== 'function') fail('this runtime has no WebSocket');
  if (typeof url !== 'function') url = `${url}`;
  // As `new WebSocket(url, protocols)`: a string or a list of strings in the options' place is the
  // subprotocols.
  if (typeof options === 'string' || Array.isArray(options)) options = { protocols: options };
  const { o, values } = readOptions(options, 2, ['protocols', 'reconnectOnCleanClose', 'queue', 'signal', 'trace']);
  const signal = signalOf(o);
  const record = recordOf(client, url, socketTransport, null);
  own(record); // the instance's members work in a callback told while the constructor runs
  traceOption(record, o, values);
  socketTransport.configure(record, o);
  values[V_TRANSPORT] = socketTransport.kind;
  // Built and started here, on the main thread: a socket's members (send above all) need its shell at once.
  instantiate();
  if (signal?.aborted) {
    // Checked by a shell that is never started (it throws an option's error); nothing opens.
    rust.free(rust.shell(record, values));
    return close(record);
  }
  begin(record, values);
  follow(record, signal, closeSocket);
}

/** close(code, reason) with arguments checked, and an abort of the `signal` option (no code). */
function closeSocket(record, code, reason = '') {
  if (record.state === CLOSED) return;
  record.queue = [];
  record.closing = record.connection ? { code, reason } : null;
  close(record);
}

/**
 * Each attempt's socket, when the shell asks for one (connection.js's `open`): at the URL carrying `id` in
 * `lastEventIdParam` unless it is undefined. Throws what the URL function throws, and the SyntaxError of
 * `new WebSocket` for a URL or subprotocol it refuses (the first attempt's constructor rethrows it).
 */
function openSocket(record, id) {
  const url = urlOf(record, id);
  // A URL function that closed the client (close(), its signal) gets no socket: a WebSocket starts its
  // handshake as it is made. The shell drops this empty connection with the close it has queued.
  if (record.closeCalled) return { ...connectionOf(record, null), listeners: [] };
  return attachSocket(record, new WebSocket(url, record.protocols));
}

/** A new socket's listeners: open and close go to the shell, messages and errors to the user. */
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
  listen('close', (e) => inputWith(record, e, ends(e.wasClean, e.code, record.codes) ? I_ENDED : I_FAILED, 1));
  record.connection = connection;
  record.currentUrl = ws.url;
  return connection;
}

/**
 * When Rust lets go of a socket, which `detach` then closes: our listeners stop hearing it.
 * One closed by close(code, reason) on a live socket is closed with those, and is CLOSING: its close
 * event, when it comes, still reaches the user.
 */
function detachSocket(connection) {
  const record = connection.record, ws = connection.source;
  if (record.connection === connection) record.connection = null;
  if (!ws) return; // none was made (openSocket)
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
    startSocket(this, url, options, (record) => (this.#record = record));
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
    if (ws && ws.readyState === 1) {
      // What waited goes first, also when this send comes before the open's own flush (from onstatus).
      if (record.queue.length) socketTransport.flush(record);
      return ws.send(data);
    }
    const shell = record.shell;
    if (!shell || shell.input(I_CLOSED)) throw new DOMException(PREFIX + 'the socket is closed', 'InvalidStateError');
    if (shell.input(I_STATUS) === S_CLOSED) throw new DOMException(PREFIX + 'the server closed the socket; reconnectNow() reopens it', 'InvalidStateError');
    if (record.queueMax === undefined) {
      throw new DOMException(`${PREFIX}the socket is not open (status ${this.status}); to queue messages until it is, pass the queue option`, 'InvalidStateError');
    }
    if (record.queue.length >= record.queueMax) {
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
