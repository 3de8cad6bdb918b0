// Listener bookkeeping with EventTarget's rules (handleEvent objects, once, signal, capture, removal during a
// dispatch), the on* attributes as the HTML specification registers them, and `dress`, which gives a managed
// class the members it shares with its native one.
//
// It may not call user code (relay.js delivers) nor talk to Rust; a new event type only asks the relay to
// listen for it.

import { EMPTY, fail } from './base.js';
import { fire, relay } from './relay.js';

/** The listeners of `type`, made empty on first use. */
export function slot(link, type) {
  let s = link.t.get(type);
  if (!s) link.t.set(type, (s = { l: EMPTY }));
  return s;
}

/** `capture` from the third argument of add/removeEventListener. */
const capture = (o) => (typeof o === 'boolean' ? o : o != null && typeof o === 'object' && !!o.capture);

export function add(link, type, f, o) {
  type = `${type}`; // ToString, as EventTarget converts it (a Symbol throws)
  if (f == null) return;
  if (typeof f !== 'function' && typeof f !== 'object') {
    fail("addEventListener's listener must be a function or an object with handleEvent");
  }
  const object = o != null && typeof o === 'object';
  const signal = object ? o.signal : undefined;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    fail("addEventListener's signal must be an AbortSignal");
  }
  if (signal?.aborted) return;
  const s = slot(link, type);
  const c = capture(o);
  if (s.l.some((x) => !x.a && x.f === f && x.c === c)) return;
  const x = { f, c, once: object && !!o.once, gone: false, a: false };
  s.l = [...s.l, x];
  signal?.addEventListener('abort', () => drop(link, type, x), { once: true });
  if (link.c) relay(link.c, type);
  else if (link.sh && !link.sh.leader && !link.sh.left) link.sh.ch.postMessage({ k: 'types', types: [type] });
}

export function remove(link, type, f, o) {
  type = `${type}`;
  const s = link.t.get(type);
  const c = capture(o);
  const x = s?.l.find((x) => !x.a && x.f === f && x.c === c);
  if (x) drop(link, type, x);
}

/** Removes a listener entry; a dispatch under way skips it (EventTarget's "removed" flag). */
export function drop(link, type, x) {
  x.gone = true;
  const s = link.t.get(type);
  s.l = s.l.filter((y) => y !== x);
}

/**
 * An on* attribute: a function or an object is registered where it is first set, as a listener (whose `f`
 * follows the attribute); anything else is null, and clears it.
 */
export function setAttribute(link, type, f) {
  if (f === null || (typeof f !== 'function' && typeof f !== 'object')) f = null;
  link.on[type] = f;
  const s = slot(link, type);
  const x = s.l.find((x) => x.a);
  if (x && f === null) drop(link, type, x);
  else if (x) x.f = f;
  else if (f !== null) {
    s.l = [...s.l, { f, c: false, once: false, gone: false, a: true }];
    if (link.c) relay(link.c, type);
  }
}

/** A callback property of our own: a function, or null/undefined to clear. */
export function setCallback(link, name, f) {
  if (f != null && typeof f !== 'function') fail(name + ' must be a function or null');
  link.cb[name] = f ?? null;
}

/**
 * Gives a managed class what it shares with its native one: the `on<type>` attributes, the callback
 * properties, the EventTarget methods, the readyState constants (on the class and its prototype) and
 * `Symbol.dispose` (so that `using` closes it). `link` reads an instance's link, and throws a TypeError for
 * anything else, as a class's own methods do.
 */
export function dress(Class, link, attributes, callbacks, states) {
  const proto = Class.prototype;
  const props = (names, get, set) =>
    Object.fromEntries(names.map((n) => [n, { get() { return get(link(this), n); }, set(f) { set(link(this), n, f); }, enumerable: true, configurable: true }]));
  Object.defineProperties(proto, props(attributes.map((t) => 'on' + t), (l, n) => l.on[n.slice(2)] ?? null, (l, n, f) => setAttribute(l, n.slice(2), f)));
  Object.defineProperties(proto, props(callbacks, (l, n) => l.cb[n] ?? null, setCallback));
  const methods = {
    addEventListener(type, listener, options) {
      add(link(this), type, listener, options);
    },
    removeEventListener(type, listener, options) {
      remove(link(this), type, listener, options);
    },
    dispatchEvent(event) {
      const l = link(this);
      if (!(event instanceof Event)) fail('dispatchEvent needs an Event');
      fire(l, event.type, event);
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
