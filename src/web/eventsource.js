// The EventSource transport: the sources Rust makes for each attempt, our listeners on them, and letting
// them go. A browser event goes on as it came (connection.js, events.js retarget it to the client).
//
// It may not decide anything (when to reconnect, how long to wait): it reports a source's open and error
// to the shell and delivers the rest. It imports connection.js, effects.js, events.js, errors.js and
// boundary.js.
//
// Every transport (this one, fetch.js's, socket.js's) gives client.js the same members: `kind` (the shell's
// transport number), `configure(record, options)`, `resolve(url)`, `relay(connection, type)`, `failed(record)`,
// `flush(record)`, `stallAdvice` (what the warning of recurring stalls advises), `detach(connection)`, and
// `attach(record, source)` for a source Rust makes or `open(record, id, last)` for an attempt the transport
// makes itself (Rust reaches these through connection.js, which guards attach and detach); fetch.js's also
// `awaitsUrl` (a URL function may return a Promise), and its EventSource transport `waitForUrl` (the shell's
// attempt waits for that Promise).

import { I_OPENED, I_FAILED, I_UNUSABLE } from './boundary.js';
import { arrived, connectionOf, inputWith } from './connection.js';
import { neverOpens } from './effects.js';
import { PREFIX } from './errors.js';
import { deliver, slot } from './events.js';

/**
 * The member `name` of `Class` (EventTarget or EventSource) as its prototype chain has it, which reaches a
 * source whatever the source's own prototype is (a page may have replaced the global with a subclass).
 */
function native(Class, name) {
  for (let p = Class.prototype; p !== null; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    if (d) return d;
  }
}

/** Whether an `open` or `error` event is a server's named event (a MessageEvent), not the connection's own. */
const named = (e) => 'data' in e;

/**
 * `e`, a server's event on `connection`, showing the last event id the stream had before this source when
 * it is the source's own that is empty because no event of this source has carried an id yet: a native
 * EventSource keeps its last event id across its reconnects, where each of ours is a new source that starts
 * with none (the id an EventSource reconnect sends, which the instance's `lastEventId` keeps too). An
 * empty `id:` field as a new source's first id reads the same as none, as it does for the instance.
 */
function carry(connection, e) {
  if (e.lastEventId !== '') connection.sawId = true;
  else {
    // The instance's id before this source's first event: the one the stream had when the source was made.
    connection.carried ??= connection.record.shell.lastEventId() ?? '';
    if (connection.carried !== '') Object.defineProperty(e, 'lastEventId', { value: connection.carried, configurable: true });
  }
  return e;
}

/** Listens to `type` on the connection's source, once. */
function listen(connection, type, f) {
  native(EventTarget, 'addEventListener').value.call(connection.source, type, f);
  connection.listeners.push(type, f);
}

/** The transport, as client.js drives it. */
export const eventSourceTransport = {
  kind: 0,
  stallAdvice: "an EventSource cannot see comment lines (': ping'): set heartbeatEvent to a named event the server sends (managed-eventsource/server sends 'heartbeat'), raise stallTimeoutMs, or use transport: 'fetch'",
  /** Its own options: none. */
  configure() {},
  /** The URL as EventSource parses it: a SyntaxError where it does not. */
  resolve(u) {
    try {
      return new URL(u, globalThis.document?.baseURI ?? globalThis.location?.href).href;
    } catch {
      throw new DOMException(`Failed to construct 'EventSource': The URL '${u}' is invalid.`, 'SyntaxError');
    }
  },
  /** Makes sure the connection relays the server's events of `type` (each type once). */
  relay(connection, type) {
    if (connection.types.has(type)) return;
    connection.types.add(type);
    if (type === 'open' || type === 'error') return; // listened to already, see attach
    const listeners = slot(connection.record, type);
    listen(connection, type, (e) => arrived(connection, type, connection.sawId ? e : carry(connection, e), listeners));
  },
  /** Tells the listeners of a failure: the browser's `error` event, or one made for a failure the browser
   * did not report (a stall, a connect timeout). */
  failed: (record) => deliver(record, 'error', record.event ?? new Event('error')),
  /** Nothing waits for an open (a socket's queue does). */
  flush() {},
  attach,
  detach,
};

/** What Rust calls to make an attempt's EventSource; the record is the EventSourceInit (withCredentials). */
export const source = (record, url) => new EventSource(url, record);

/** For every new EventSource Rust makes: our listeners on it. Returns the connection record. */
function attach(record, es) {
  // sawId: whether an event of this source has carried an id; carried: the id before it (see carry).
  const connection = { ...connectionOf(record, es), listeners: [], types: new Set(), sawId: false, carried: undefined };
  const readyState = native(EventSource, 'readyState').get;
  // The connection's own open and error go to Rust (which ignores `a` for an open), and on from there; a
  // server's event named open or error is an ordinary named event. A source the browser gave up on before
  // it opened, whose URL will fail every time (effects.js's neverOpens), fails the stream for good.
  let opened = false;
  listen(connection, 'open', (e) => (named(e) ? arrived(connection, 'open', carry(connection, e)) : ((opened = true), inputWith(record, e, I_OPENED))));
  listen(connection, 'error', (e) => {
    if (named(e)) return arrived(connection, 'error', carry(connection, e));
    const closed = readyState.call(es) === 2, why = closed && !opened && neverOpens(es.url);
    if (why) e.message = PREFIX + why;
    inputWith(record, e, why ? I_UNUSABLE : I_FAILED, closed);
  });
  record.currentUrl = es.url;
  const relay = eventSourceTransport.relay;
  if (record.retryHintEvent) relay(connection, record.retryHintEvent);
  if (record.heartbeatEvent) relay(connection, record.heartbeatEvent); // its arrival is what the stall watchdog sees
  relay(connection, 'message');
  for (const type of record.listeners.keys()) relay(connection, type);
  for (const type of record.remoteTypes) relay(connection, type);
  record.connection = connection;
  return connection;
}

/** When Rust lets go of a source: removes every listener of ours from it, and closes it. */
function detach(connection) {
  const off = native(EventTarget, 'removeEventListener').value, es = connection.source;
  for (let i = 0; i < connection.listeners.length; i += 2) off.call(es, connection.listeners[i], connection.listeners[i + 1]);
  if (connection.record.connection === connection) connection.record.connection = null;
  native(EventSource, 'close').value.call(es);
}
