// A client's events: the listener table with EventTarget's rules (handleEvent objects, once, signal, capture,
// removal during a dispatch), the on* attributes as the HTML specification registers them, delivery with the
// client as every event's `target` and `currentTarget`, and `dress`, which gives a managed class the members
// it shares with its native one.
//
// It may not decide anything nor talk to Rust: a transport hands it events, and a new event type is told to
// the record's `typeAdded`. It imports only errors.js.

import { fail, report, PREFIX } from './errors.js';

/** A list with nothing in it, shared. */
export const EMPTY = [];

/**
 * Whether events are retargeted with class fields (see Retargeted) rather than a prototype swap (see swap).
 * Both give the same answers in every engine; which costs less is not the same. V8 (whose stack traces
 * read "    at") defines a class field through an inline cache it keeps per map; SpiderMonkey and
 * JavaScriptCore swap a prototype for less than they pay for an own property of a DOM object
 * (docs/performance.md).
 */
export const FIELDS = /\n {4}at /.test(new Error().stack);

/** Returns its argument, so that a subclass's fields are defined on that object rather than a new one. */
export class Given {
  constructor(e) {
    return e;
  }
}

/**
 * `new Retargeted(e, client)` gives `e` own `target`, `srcElement`, `currentTarget`, `eventPhase` and
 * `composedPath` that show `client`, over those of the event's class (which show the inner source, or
 * nothing). `currentTarget` is the client, and `eventPhase` AT_TARGET, only while its listeners run, as
 * `EventTarget` has it (see deliver): an event the library made, never dispatched by the browser, would read
 * NONE. The fields are defined (a class field defines an own property where the event's class has only a
 * getter), then given the client, which no initialiser can see: in V8 that costs what initialising them
 * with it would (`npm run bench:retarget`: 0.90 against 0.87 µs an event, within the rounds' spread).
 */
class Retargeted extends Given {
  target = null;
  srcElement = null;
  currentTarget = null;
  eventPhase = 2;
  composedPath = composedPath;
  constructor(e, client) {
    super(e);
    this.target = this.srcElement = this.currentTarget = client;
  }
}

/** Retargeted, with `stopImmediatePropagation` seen by deliver: for a dispatch to more than one listener. */
class RetargetedStoppable extends Retargeted {
  stopImmediatePropagation = stopImmediatePropagation;
}

/** The events whose listeners must not be called any more in the dispatch under way (EventTarget's "stop
 * immediate propagation flag", which the engine keeps out of sight). deliver forgets each at its end. */
const stopped = new WeakSet();

function stopImmediatePropagation() {
  stopped.add(this);
  Event.prototype.stopImmediatePropagation.call(this);
}

/** The events being delivered, to any client, outermost first: dispatchEvent refuses them, as
 * EventTarget does an event whose dispatch flag is set. */
const inFlight = [];

function composedPath() {
  const at = this.currentTarget;
  return at ? [at] : [];
}

/** `e` retargeted to `client` (see Retargeted; `many`: with RetargetedStoppable's member too). The caller
 * must use what it returns: a bundler may drop an unused `new`. */
function retarget(client, e, many) {
  return many ? new RetargetedStoppable(e, client) : new Retargeted(e, client);
}

/**
 * Where FIELDS is false: `e`'s prototype becomes one of the record's (one per event class) that Retargeted
 * gave the client, whose `currentTarget` is the client, and `eventPhase` AT_TARGET, while its listeners see
 * `e`. Returns `e`.
 */
function swap(record, e) {
  const proto = Object.getPrototypeOf(e);
  let p = record.prototypes.get(proto);
  if (!p) {
    if (record.prototypes.has(proto)) return e; // one of ours already (an event delivered again)
    record.prototypes.set(proto, (p = retarget(record.client, Object.create(proto), true)));
    record.prototypes.set(p, null);
    Object.defineProperty(p, 'currentTarget', { get() { return record.dispatching === this ? record.client : null; }, set() {} });
    Object.defineProperty(p, 'eventPhase', { get() { return record.dispatching === this ? 2 : 0; }, set() {} });
  }
  return Object.setPrototypeOf(e, p);
}

/**
 * Calls the listeners of `type` with `e`, as `EventTarget.dispatchEvent` does: `e` shows the client as its
 * `target` and, while they run, as its `currentTarget`; each listener is called with the client as `this`.
 * The list is a snapshot: entries removed meanwhile are skipped, entries added are not called; after a
 * listener calls `stopImmediatePropagation()`, none is. What a listener throws is reported and the others
 * still run. `listeners`: the type's slot (see `slot`), where the caller holds it.
 */
export function deliver(record, type, e, listeners = record.listeners.get(type)) {
  const list = listeners?.list;
  if (!list || list.length === 0) return;
  const client = record.client, outer = record.dispatching; // an event its listeners see already (a dispatch inside one)
  const many = list.length > 1;
  record.dispatching = e;
  inFlight.push(e);
  e = FIELDS ? retarget(client, e, many) : swap(record, e);
  for (let i = 0; i < list.length; i++) {
    call(record, type, list[i], client, e);
    if (many && stopped.has(e)) break;
  }
  if (many) stopped.delete(e);
  if (FIELDS) {
    e.currentTarget = outer === e ? client : null;
    e.eventPhase = outer === e ? 2 : 0;
  }
  inFlight.pop();
  record.dispatching = outer;
}

/**
 * Whether the listener entry `x` is gone: removed, or added with a `signal` that is aborted now. A closed
 * client keeps its listeners but no handler on their signals (see letGo), so an abort after `close()` takes
 * effect here, when the entry is next looked at; an open client's handler removes the entry at the abort.
 */
const gone = (x) => x.removed || x.signal?.aborted === true;

/** Calls the listener entry `x` with `e` (and the client as `this`), unless it is gone. */
function call(record, type, x, client, e) {
  if (gone(x)) return;
  if (x.once) drop(record, type, x);
  try {
    if (typeof x.listener === 'function') x.listener.call(client, e);
    else if (!x.attribute) x.listener.handleEvent(e);
  } catch (err) {
    report(err);
  }
}

/** The listeners of `type`, made empty on first use. */
export function slot(record, type) {
  let s = record.listeners.get(type);
  if (!s) record.listeners.set(type, (s = { list: EMPTY }));
  return s;
}

/**
 * Whether `v` is an `Interface`, of this realm or another (an iframe's): the interface's `getter` answers for
 * any of them and throws for anything else, the brand check EventTarget makes (where `instanceof` is false
 * across realms).
 */
function branded(Interface, getter, v) {
  try {
    Object.getOwnPropertyDescriptor(Interface.prototype, getter).get.call(v);
    return true;
  } catch {
    return false;
  }
}

/** `capture` from the third argument of add/removeEventListener. */
const capture = (o) => (typeof o === 'boolean' ? o : o != null && typeof o === 'object' && !!o.capture);

export function add(record, type, listener, o) {
  type = `${type}`; // ToString, as EventTarget converts it (a Symbol throws)
  if (listener == null) return;
  if (typeof listener !== 'function' && typeof listener !== 'object') {
    fail("addEventListener's listener must be a function or an object with handleEvent");
  }
  const object = o != null && typeof o === 'object';
  const signal = object ? o.signal : undefined;
  if (signal !== undefined && !branded(AbortSignal, 'aborted', signal)) fail("addEventListener's signal must be an AbortSignal");
  if (signal?.aborted) return;
  const s = slot(record, type);
  const c = capture(o);
  if (s.list.some((x) => !x.attribute && !gone(x) && x.listener === listener && x.capture === c)) return;
  const x = { listener, capture: c, once: object && !!o.once, removed: false, attribute: false, signal, abort: null };
  s.list = [...s.list, x];
  // The signal holds a handler only while the client is open and the entry listed: drop and letGo take it off.
  if (signal && record.signalled) {
    x.abort = () => drop(record, type, x);
    signal.addEventListener('abort', x.abort, { once: true });
    record.signalled.add(x);
  }
  record.typeAdded(record, type);
}

export function remove(record, type, listener, o) {
  type = `${type}`;
  const c = capture(o);
  const x = record.listeners.get(type)?.list.find((x) => !x.attribute && !gone(x) && x.listener === listener && x.capture === c);
  if (x) drop(record, type, x);
}

/** Removes a listener entry, and its handler on its signal; a dispatch under way skips it (EventTarget's
 * "removed" flag). */
function drop(record, type, x) {
  x.removed = true;
  const s = record.listeners.get(type);
  s.list = s.list.filter((y) => y !== x);
  if (x.abort) {
    record.signalled?.delete(x);
    detach(x);
  }
}

/** Takes the listener entry `x`'s handler off its signal. */
function detach(x) {
  x.signal.removeEventListener('abort', x.abort);
  x.abort = null;
}

/**
 * The client closed for good: the listeners' signals let go of it (a signal that outlives the client, one
 * AbortController for a whole app, would otherwise keep every closed client and its shell reachable). Its
 * listeners stay, as on a closed `EventSource`; one whose signal aborts later is gone (see gone).
 */
export function letGo(record) {
  const signalled = record.signalled;
  record.signalled = null;
  for (const x of signalled ?? EMPTY) detach(x);
}

/**
 * An on* attribute: a function or an object is registered where it is first set, as a listener (whose
 * `listener` follows the attribute); anything else is null, and clears it.
 */
function setAttribute(record, type, f) {
  if (f === null || (typeof f !== 'function' && typeof f !== 'object')) f = null;
  record.attributes[type] = f;
  const s = slot(record, type);
  const x = s.list.find((x) => x.attribute);
  if (x && f === null) drop(record, type, x);
  else if (x) x.listener = f;
  else if (f !== null) {
    s.list = [...s.list, { listener: f, capture: false, once: false, removed: false, attribute: true }];
    record.typeAdded(record, type);
  }
}

/** A callback property of our own: a function, or null/undefined to clear. */
function setCallback(record, name, f) {
  if (f != null && typeof f !== 'function') fail(name + ' must be a function or null');
  record.callbacks[name] = f ?? null;
}

/**
 * Gives a managed class what it shares with its native one: the `on<type>` attributes, the callback
 * properties, the EventTarget methods, the readyState constants (on the class and its prototype) and
 * `Symbol.dispose` (so that `using` closes it). `recordOf` reads an instance's record, and throws a
 * TypeError for anything else, as a class's own methods do.
 */
export function dress(Class, recordOf, attributes, callbacks, states) {
  const proto = Class.prototype;
  const props = (names, get, set) =>
    Object.fromEntries(names.map((n) => [n, { get() { return get(recordOf(this), n); }, set(f) { set(recordOf(this), n, f); }, enumerable: true, configurable: true }]));
  Object.defineProperties(proto, props(attributes.map((t) => 'on' + t), (r, n) => r.attributes[n.slice(2)] ?? null, (r, n, f) => setAttribute(r, n.slice(2), f)));
  Object.defineProperties(proto, props(callbacks, (r, n) => r.callbacks[n] ?? null, setCallback));
  const methods = {
    addEventListener(type, listener, options) {
      add(recordOf(this), type, listener, options);
    },
    removeEventListener(type, listener, options) {
      remove(recordOf(this), type, listener, options);
    },
    dispatchEvent(event) {
      const record = recordOf(this);
      if (!branded(Event, 'type', event)) fail('dispatchEvent needs an Event');
      if (event.eventPhase !== Event.NONE || inFlight.includes(event)) {
        throw new DOMException(PREFIX + 'dispatchEvent: the event is being dispatched already', 'InvalidStateError');
      }
      deliver(record, event.type, event);
      return !event.defaultPrevented;
    },
  };
  for (const [name, value] of Object.entries(methods)) Object.defineProperty(proto, name, { value, writable: true, configurable: true });
  for (const [i, name] of states.entries()) {
    const d = { value: i, enumerable: true };
    Object.defineProperty(Class, name, d);
    Object.defineProperty(proto, name, d);
  }
  if (typeof Symbol.dispose === 'symbol') proto[Symbol.dispose] = proto.close;
}
