// The public API of the stream clients: ManagedEventSource and createManagedStream. A constructor reads its
// arguments (so that a throwing getter throws to the caller, never through wasm), makes the client's record
// and starts it (client.js), or hands it to share.js (which the share entry adds). It holds no policy: Rust
// validates the options and decides everything after.
//
// The rooms of the JavaScript half, each of which says what it holds and what it may not do; a room
// imports only rooms below it:
//
//   api.js, socket.js   the public classes                        (top)
//   share.js            one connection for all tabs
//   iterate.js          async iteration: a listener and a status watcher of the client, with a queue
//   client.js           a client's record and lifecycle; what the shell tells it
//   eventsource.js, fetch.js   the transports
//   parse.js            the fetch transport's event-stream parser
//   connection.js       what every transport does with its connection's events
//   events.js           listeners with EventTarget's rules, delivery with the client as target
//   effects.js          what Rust calls to act: URLs, timers, page listeners, the probe
//   loader.js           the wasm module's life: compile, instantiate, prepare(); the option check
//   options.js, errors.js, boundary.js                           (bottom)

import { O_WITH_CREDENTIALS, O_LAST_EVENT_ID_PARAM, O_RETRY_HINT_EVENT, O_HEARTBEAT_EVENT, O_STALL_TIMEOUT_MS, O_CONNECT_TIMEOUT_MS, S_CLOSED, S_FAILED, V_PROBE_URL, V_RESUME_FROM, V_TRANSPORT } from './boundary.js';
import { abortedAtStart, announce, attemptOf, close, follow, lastEventIdOf, launch, readyStateOf, recordOf, reconnectNow, statusOf, traceOption } from './client.js';
import { finish } from './effects.js';
import { fail } from './errors.js';
import { add, dress } from './events.js';
import { eventSourceTransport } from './eventsource.js';
import { iterate } from './iterate.js';
import { readOptions, signalOf } from './options.js';

export { prepare } from './loader.js';

/** The transports a client may name in its `transport` option; the fetch entry adds `fetch`. */
const transports = new Map([['eventsource', eventSourceTransport]]);

/** Adds the transport `t` as `name` (the fetch entry, and the test build with the fetch feature). */
export const addTransport = (name, t) => transports.set(name, t);

/** Sharing across tabs, `{ sharing, startShared }` of share.js, once the share entry (or the classic script)
 * adds it: a page that never shares pays nothing for it. */
let tabs = null;

/** Adds sharing across tabs (the share entry, and the classic script, which has everything). */
export const addSharing = (s) => (tabs = s);

/** The options of the fetch transport, which the others refuse. */
const FETCH = ['headers', 'method', 'body', 'fetch'];

/**
 * What the constructor asks of the first attempt's URL, as the transport will (a URL function is called
 * here, once, and the attempt takes its answer): what the function throws, or a URL the transport refuses,
 * is thrown to the caller, as EventSource's constructor throws a SyntaxError.
 */
function askFirstUrl(record) {
  const u = typeof record.url === 'function' ? record.url() : record.url;
  if (typeof u?.then === 'function') {
    if (!record.transport.awaitsUrl) fail('the url function returned a Promise (awaited with managed-eventsource/fetch)');
    // The first attempt awaits it (and reports a rejection) only once the shell starts, tasks later:
    // until then it must not count as an unhandled rejection.
    if (u instanceof Promise) u.catch(() => {});
  } else record.currentUrl = record.transport.resolve(finish(record, u));
  record.firstUrl = u;
}

/**
 * Reads the constructor's arguments into a record, gives it to `own` (the instance's field: its members work
 * from then on, in a callback told while the constructor runs, such as the trace's first record), and
 * starts it.
 */
function start(client, url, options, handlers, own) {
  const { o, values } = readOptions(options, 1, ['until', 'share', 'transport', 'signal', 'trace', 'lastEventIdKey', 'lastEventIdStorage', ...FETCH]);
  // A JavaScript object, which never reaches Rust: read here, used once the client is checked.
  const signal = signalOf(o);
  const name = o.transport ?? 'eventsource';
  const transport = typeof name === 'string' ? transports.get(name) : undefined;
  if (!transport) fail("option transport must be 'eventsource' or 'fetch' (with managed-eventsource/fetch)");
  if (name !== 'fetch') for (const k of FETCH) if (o[k] != null) fail(`option ${k} needs transport 'fetch'`);
  if (transport.kind === eventSourceTransport.kind && typeof EventSource !== 'function') {
    fail(
      "this runtime has no EventSource: use transport 'fetch'. In Node, install the eventsource package and set it: " +
        "import { EventSource } from 'eventsource'; globalThis.EventSource = EventSource;",
    );
  }
  // ToString, as the EventSource constructor converts its argument (a Symbol throws a TypeError).
  if (typeof url !== 'function') url = `${url}`;
  const until = o.until;
  if (until != null && typeof until !== 'function') fail('option until must be a function');
  const share = o.share;
  if (share != null && typeof share !== 'boolean' && (typeof share !== 'string' || share === '')) {
    fail('option share must be true, false or a non-empty name');
  }
  if (share === true && typeof url === 'function') fail('option share needs a name (share: "feed") with a url function');
  // Not a silent connection per tab: that would hide the mistake until the server counts them.
  if (share && !tabs) fail("option share needs managed-eventsource/share: import it once, anywhere in the app (import 'managed-eventsource/share')");
  const kept = keptIn(o, name, values);
  const record = recordOf(client, url, transport, handlers);
  own(record);
  traceOption(record, o, values);
  record.until = until ?? null;
  // The strings as Rust checks them: the shell reads none of these back.
  record.withCredentials = values[O_WITH_CREDENTIALS] === 1;
  record.lastEventIdParam = values[O_LAST_EVENT_ID_PARAM];
  record.retryHintEvent = values[O_RETRY_HINT_EVENT];
  record.heartbeatEvent = values[O_HEARTBEAT_EVENT] ?? 'heartbeat'; // what managed-eventsource/server sends
  record.stallGiven = values[O_STALL_TIMEOUT_MS] !== undefined;
  record.connectGiven = values[O_CONNECT_TIMEOUT_MS] !== undefined;
  record.probeUrl = values[V_PROBE_URL];
  transport.configure(record, o);
  values[V_TRANSPORT] = transport.kind;
  for (const [type, f] of handlers?.events ?? []) add(record, type, f);
  if (handlers?.onMessage) add(record, 'message', handlers.onMessage);
  if (signal?.aborted) {
    // Nothing opens: no URL function is called, no module compiled, no request, no timer.
    if (typeof url !== 'function') record.currentUrl = transport.resolve(url);
    abortedAtStart(record, values);
  } else if (share && tabs.sharing()) {
    if (typeof url !== 'function') record.currentUrl = transport.resolve(url);
    tabs.startShared(record, values, share === true ? url : share);
  } else {
    askFirstUrl(record);
    // A URL function may abort the signal: then nothing opens either.
    if (signal?.aborted) abortedAtStart(record, values);
    else launch(record, values);
  }
  follow(record, signal);
  if (kept) keep(record, kept);
  // The first status, which the instance's own callbacks cannot hear yet: createManagedStream's can.
  announce(record);
}

/** The keys of lastEventIdKey being forgotten after this task (see keep): key -> the close's token. */
const forgetting = new Map();

/**
 * The `lastEventIdKey` option: `{ key, storage }` (storage `lastEventIdStorage`, by default sessionStorage),
 * or null. The id kept there by the page before (a reload) is where the first connection resumes from.
 */
function keptIn(o, transportName, values) {
  const key = o.lastEventIdKey;
  if (key == null) return null;
  if (typeof key !== 'string' || key === '') fail('option lastEventIdKey must be a non-empty string');
  const storage = o.lastEventIdStorage === undefined ? globalThis.sessionStorage : o.lastEventIdStorage;
  if (typeof storage?.getItem !== 'function' || typeof storage.setItem !== 'function' || typeof storage.removeItem !== 'function') {
    fail('option lastEventIdStorage must be a Storage (getItem, setItem and removeItem), such as sessionStorage');
  }
  // A native EventSource sends no Last-Event-ID on its first connection: only a URL parameter can carry it.
  if (transportName !== 'fetch' && values[O_LAST_EVENT_ID_PARAM] === undefined) {
    fail("option lastEventIdKey needs lastEventIdParam on the EventSource transport, whose first connection can carry the id only in its URL (managed-eventsource/server reads 'lastEventId')");
  }
  let id = null;
  try {
    id = storage.getItem(key);
  } catch {} // a storage that refuses (private mode) keeps nothing
  forgetting.delete(key); // a client closed in this task (StrictMode's cleanup) hands it on
  if (typeof id === 'string' && id !== '') values[V_RESUME_FROM] = id;
  return { key, storage };
}

/**
 * Keeps the record's last event id under `kept.key` when the page goes (pagehide, or hidden: a mobile
 * browser may discard a hidden page with no pagehide), never per event; forgets it when the stream ends
 * (closed or failed: a reload then starts afresh).
 */
function keep(record, { key, storage }) {
  const save = () => {
    const id = lastEventIdOf(record);
    try {
      if (id !== '') storage.setItem(key, id);
    } catch {}
  };
  const hidden = () => document.visibilityState === 'hidden' && save();
  const doc = typeof document === 'object' ? document : null;
  let listening = false;
  const listen = (on) => {
    if (on === listening) return;
    listening = on;
    const how = on ? 'addEventListener' : 'removeEventListener';
    globalThis[how]?.('pagehide', save);
    doc?.[how]('visibilitychange', hidden);
  };
  // Closed is for good; failed may come back (reconnectNow() after a new sign-in), and keeps again then.
  const forget = () => {
    try {
      storage.removeItem(key);
    } catch {}
  };
  const watch = (s) => {
    const ended = s === S_CLOSED || s === S_FAILED;
    if (ended && listening) {
      if (s === S_FAILED) forget();
      else {
        // Closed: forgotten after this task, unless a client made meanwhile with the same key takes it on
        // (React StrictMode closes and makes a client again in one task).
        const closing = {};
        forgetting.set(key, closing);
        queueMicrotask(() => {
          if (forgetting.get(key) !== closing) return; // taken on, or closed again since
          forgetting.delete(key);
          forget();
        });
      }
    }
    listen(!ended);
    if (s === S_CLOSED) record.watchers.delete(watch);
  };
  record.watchers.add(watch);
  watch(record.status); // ended already (an aborted signal)
}

/** What createManagedStream passes the constructor before its handlers, which no other caller can pass. */
const WITH_HANDLERS = Symbol('handlers');

/** An EventSource that reconnects through a jittered exponential backoff ladder. */
export class ManagedEventSource {
  #record;
  constructor(url, options) {
    // createManagedStream's handlers, the only callbacks that exist while the constructor runs.
    const handlers = arguments[2] === WITH_HANDLERS ? arguments[3] : null;
    // As EventSource: its URL is required (ToString would make undefined a path).
    if (arguments.length === 0) fail('1 argument required, but only 0 present: the URL');
    start(this, url, options, handlers, (record) => (this.#record = record));
  }
  /** @internal */
  static _record(client) {
    return client.#record;
  }
  get url() {
    return this.#record.currentUrl;
  }
  get lastEventId() {
    return lastEventIdOf(this.#record);
  }
  get status() {
    return statusOf(this.#record);
  }
  get readyState() {
    return readyStateOf(this.#record);
  }
  get attempt() {
    return attemptOf(this.#record);
  }
  get withCredentials() {
    return this.#record.withCredentials;
  }
  /** Whether this instance holds the connection (with share, one instance of all that share it does). */
  get leader() {
    return this.#record.share?.leader ?? true;
  }
  /** Resets the ladder and connects at once, also after status 'failed'. Does nothing after close(). */
  reconnectNow() {
    reconnectNow(this.#record);
  }
  /** Closes for good: the source, any pending retry; status 'closed'. */
  close() {
    close(this.#record);
  }
  /** The events of `types` ('message' by default) as an AsyncIterable; the loop owns the client (iterate.js). */
  events(types, options) {
    return iterate(this.#record, types, options);
  }
  /** `for await (const ev of source)`: its messages (see events). */
  [Symbol.asyncIterator]() {
    return iterate(this.#record);
  }
}

const streamRecord = ManagedEventSource._record;
delete ManagedEventSource._record;
dress(ManagedEventSource, streamRecord, ['open', 'message', 'error'], ['onstatus', 'onretry', 'ongiveup', 'onunauthorized'], ['CONNECTING', 'OPEN', 'CLOSED']);

const HANDLERS = ['onOpen', 'onMessage', 'events', 'onRetryScheduled', 'onGiveUp', 'onStatus', 'onUnauthorized'];

/** Seed 000's createManagedStream: connects and returns a function that stops the stream. */
export function createManagedStream(url, handlers, options) {
  if (handlers == null || typeof handlers !== 'object') fail('handlers must be an object');
  for (const k of Object.keys(handlers)) if (!HANDLERS.includes(k)) fail("unknown handler '" + k + "'");
  const checked = {};
  for (const k of HANDLERS) {
    const f = handlers[k];
    if (f == null) continue;
    if (k === 'events') {
      if (typeof f !== 'object') fail('handler events must be an object');
      checked.events = Object.entries(f);
      for (const [type, g] of checked.events) if (typeof g !== 'function') fail("events['" + type + "'] must be a function");
    } else if (typeof f !== 'function') fail('handler ' + k + ' must be a function');
    else checked[k] = f;
  }
  const client = new ManagedEventSource(url, options, WITH_HANDLERS, checked);
  return () => client.close();
}

/** For the test build (src/web/mod.rs's js_api): the classes, and a client's shell handle. */
export const api = () => ({ ManagedEventSource, createManagedStream, handle: (client) => streamRecord(client).shell?.handle });
