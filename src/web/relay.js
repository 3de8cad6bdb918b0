// The per-event path: one relay per event type per connection, which keeps the last event (Rust reads its
// lastEventId only when it needs it) and calls the user's listeners. An event from a browser EventSource is
// delivered as it came, with that connection's source as its target, which answers as the instance (see
// face); any other event (made by the fetch transport, by another tab, by the library, or given to
// dispatchEvent) is shown with the instance itself as its target. Ordinary events never enter wasm; only
// those policy must see (open, a failure, the retry-hint event) call the shell. Also what Rust calls for
// each new source (attach, detach) and the stall watchdog's question.
//
// It may not decide anything (when to reconnect, how long to wait): it reports events to Rust and delivers
// them. Nothing here lets an exception reach Rust or stops delivery to the other listeners.

import { I_OPENED, I_FAILED, I_HINT, I_CLOSE } from './boundary.js';
import { EMPTY, guard, report } from './base.js';
import { hintMs } from './control.js';
import { drop, slot } from './listeners.js';
import { tell } from './share.js';

/**
 * Whether events are retargeted with class fields (see Retargeted) rather than a prototype swap (see swap).
 * Both are correct in every engine; which is faster is not. V8 (whose stack traces read "    at") defines a
 * class field through an inline cache it keeps per map, next to nothing an event, where a prototype swap is
 * a runtime call (0.1 µs). SpiderMonkey swaps a prototype in 0.06 µs, but the first own property of a DOM
 * object makes it keep the object's wrapper alive, 0.45 µs an event. Other engines keep the swap.
 */
export const FIELDS = /\n {4}at /.test(new Error().stack);

/** The instance `Retargeted` gives the object it is applied to. */
let to = null;

/** Returns its argument, so that a subclass's fields are defined on that object rather than a new one. */
export class Given {
  constructor(e) {
    return e;
  }
}

/**
 * `new Retargeted(e)` gives `e` own `target`, `srcElement`, `currentTarget` and `composedPath` that show
 * the instance `to`, over those of the event's class (which show the inner source). `currentTarget` is the
 * instance only while our listeners run, as `EventTarget` has it (see deliver).
 */
class Retargeted extends Given {
  target = to;
  srcElement = to;
  currentTarget = to;
  composedPath = composedPath;
}

function composedPath() {
  const at = this.currentTarget;
  return at ? [at] : [];
}

/**
 * Applies Retargeted to `e` with the instance `me`, and returns it. The caller must use what it returns: a
 * bundler that sees a `new` whose value is unused may drop it as free of effects (rollup does).
 */
function retarget(me, e) {
  to = me;
  const r = new Retargeted(e);
  to = null; // so that the module holds no instance
  return r;
}

/**
 * Where FIELDS is false: `e`'s prototype becomes one of the instance's (one per event class) that
 * Retargeted gave the instance, with a `currentTarget` that is the instance while our listeners see `e`.
 * Returns `e`.
 */
function swap(link, e) {
  const proto = Object.getPrototypeOf(e);
  let p = link.protos.get(proto);
  if (!p) {
    link.protos.set(proto, (p = retarget(link.me, Object.create(proto))));
    Object.defineProperty(p, 'currentTarget', { get() { return link.cur === this ? link.me : null; }, set() {} });
  }
  return Object.setPrototypeOf(e, p);
}

/**
 * Calls the listeners of `type` with `e`, as `EventTarget.dispatchEvent` would: with the instance as its
 * target, or as it is when it comes from the connection's source (whose face answers as the instance).
 */
export function fire(link, type, e) {
  const s = link.t.get(type);
  if (s && s.l.length !== 0) deliver(link, type, s.l, e, link.face && faced(link, e.target) ? AS_IS : 0);
}

/** Whether `t` is one of `link`'s sources, wearing its face (see attach). */
const faced = (link, t) => t !== null && Object.getPrototypeOf(t) === link.face;

/** How `deliver` shows an event: as it is (its target is the connection's face), or `FRESH` (see there). */
export const AS_IS = 2, FRESH = 1;

/**
 * The hot path: `list` is a snapshot; entries removed meanwhile are skipped, entries added are not called.
 * `how`: AS_IS, an event of a browser EventSource with its face as target, delivered as it is (the browser
 * keeps its `currentTarget`); FRESH, `e` has just been made for a connection, so it is not shown as the
 * instance's yet and its `target` need not be read (a call into the browser per event); 0, any other.
 */
export function deliver(link, type, list, e, how) {
  const me = link.me;
  if (how === AS_IS) {
    for (let i = 0; i < list.length; i++) call(link, type, list[i], me, e);
    return;
  }
  const outer = link.cur; // an event our listeners see already (a dispatch inside a dispatch)
  link.cur = e;
  if (how === FRESH || e.target !== me) e = FIELDS ? retarget(me, e) : swap(link, e);
  else if (FIELDS) e.currentTarget = me;
  for (let i = 0; i < list.length; i++) call(link, type, list[i], me, e);
  link.cur = outer;
  // Where FIELDS is false, the swapped prototype's currentTarget reads link.cur, and has no use for this.
  if (FIELDS) e.currentTarget = outer === e ? me : null;
}

/** Calls the listener entry `x` with `e` (and the instance as `this`), unless it was removed meanwhile. */
function invoke(link, type, x, me, e) {
  if (x.gone) return;
  if (x.once) drop(link, type, x);
  const f = x.f;
  if (typeof f === 'function') f.call(me, e);
  else if (!x.a) f.handleEvent(e);
}

/** `invoke`, reporting what the listener throws. */
function call(link, type, x, me, e) {
  try {
    invoke(link, type, x, me, e);
  } catch (err) {
    report(err);
  }
}

/**
 * The face of `link`'s instance: an object that inherits from the instance's class and whose every member
 * (the attributes, the methods, `close`, `Symbol.dispose`) is the instance's, made once. A browser
 * EventSource of the instance's gets it as its prototype (see attach), so that a listener that uses its
 * event's `target` or `currentTarget` (to close, to read `readyState`, to remove itself) reaches the
 * instance, never the inner source, at no cost per event. Only identity tells them apart.
 */
function face(link) {
  if (link.face) return link.face;
  const me = link.me, proto = Object.getPrototypeOf(me), d = {};
  // Every member of the class and of those it extends (a user's subclass of ours), the nearest first.
  for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Reflect.ownKeys(p)) {
      if (k === 'constructor' || k in d) continue;
      const x = Object.getOwnPropertyDescriptor(p, k);
      if (typeof x.value === 'function') d[k] = { value: (...a) => me[k](...a), configurable: true };
      else if (!('value' in x)) d[k] = { get: () => me[k], set: (v) => (me[k] = v), configurable: true };
      else d[k] = x;
    }
  }
  return (link.face = Object.create(proto, d));
}

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

/**
 * Whether `es` is a browser's EventSource, or a subclass of it that keeps its close and dispatchEvent: a
 * polyfill calls those on itself (Node's eventsource package does), so it must keep its own.
 */
const browsers = (es) => [es.close, es.dispatchEvent].every((f) => /\[native code\]/.test(Function.prototype.toString.call(f)));

/** Closes `es` with EventSource's own close, whatever its prototype. */
export const shut = (es) => native(EventSource, 'close').value.call(es);

/** Whether an `open` or `error` event is a server's named event (a MessageEvent), not the connection's own. */
const named = (e) => 'data' in e;

/** Listens to `type` on the connection's source, once. `open` and `error` have listeners of their own. */
export function relay(c, type) {
  // A socket (a link with `lost`, see socket.js) has one relay, for messages, made by attachSocket.
  if (c.types.has(type) || type === 'open' || type === 'error' || c.link.lost) return;
  const link = c.link;
  const s = slot(link, type);
  if (type === link.hint) listen(c, type, (e) => arrived(c, type, e, s.l, true));
  else {
    listen(c, type, (e) => {
      // The commonest case, whole here, so that the engine calls one small function per event rather than
      // two more (WebKit: 1.00 to 1.04 of native `onmessage` against the build before, in one page;
      // docs/performance.md): one listener, a function that is not `once`, on a browser EventSource's
      // event, nothing of ours after it. An entry in `s.l` now was not removed (see drop), and it is called
      // outside a try, as in `arrived`. Everything else goes there.
      const list = s.l;
      if (list.length === 1 && c.face && !link.sh && !link.until) {
        const x = list[0], f = x.f;
        if (!x.once && typeof f === 'function') {
          c.last = e;
          c.first ??= e;
          f.call(link.me, e);
          return;
        }
      }
      arrived(c, type, e, list, false);
    });
  }
  c.types.add(type);
}

/** A server's event of `type` for the listeners `list`; `hint` when it is the retry-hint event. */
export function arrived(c, type, e, list, hint) {
  const link = c.link;
  c.last = e;
  c.first ??= e;
  // The server's retry hint is policy: it goes through Rust, then to any listener.
  if (hint) link.s.input(I_HINT, hintMs(e.data));
  if (c.face && !link.sh && !link.until) {
    // Called by the browser's dispatch (only a browser EventSource has a face), with nothing of ours after
    // the listeners: the last is called outside a try, so that what it throws reaches the browser, which
    // reports it as it reports a throw from EventSource's own listener. JavaScriptCore charges a listener
    // with a try up to 0.1 µs an event, a sixth of its native dispatch (`npm run bench:retarget`).
    const n = list.length - 1;
    for (let i = 0; i < n; i++) call(link, type, list[i], link.me, e);
    if (n >= 0) invoke(link, type, list[n], link.me, e);
    return;
  }
  if (list.length !== 0) deliver(link, type, list, e, c.face ? AS_IS : FRESH);
  if (link.sh) tell(link, { k: 'event', type, data: e.data, id: e.lastEventId, origin: e.origin });
  if (link.until) until(link, e);
}

/** Gives the shell input `code` with `a` and `b`, while `ev` is the event a notification it makes carries
 * (the browser's open, error or close event, or one of the fetch transport's). */
export function inputWith(link, ev, code, a, b) {
  link.ev = ev;
  link.s.input(code, a, b);
  link.ev = null;
}

export function listen(c, type, f) {
  native(EventTarget, 'addEventListener').value.call(c.es, type, f);
  c.fs.push(type, f);
}

/** `until(ev)`: the event for which it returns true has been delivered; then the stream closes. */
export function until(link, e) {
  let done = false;
  try {
    done = link.until.call(undefined, e) === true;
  } catch (err) {
    report(err);
  }
  if (done) link.s.input(I_CLOSE);
}

/**
 * Called by Rust for every new EventSource: our listeners on it. `first` (from a constructor that leaves
 * the shell for later, see later in api.js): only the listeners to its open and error, which build the
 * shell; the shell's own attach, which an open or an error calls before anything is delivered, adds the
 * rest. No other event can come first: an EventSource dispatches its messages only after its open.
 */
export const attach = guard(function attach(link, es, first) {
  let c = link.c;
  if (c?.es !== es) {
    c = link.c = { link, es, fs: [], types: new Set(), first: undefined, last: undefined, seen: undefined, face: false, all: false };
    const state = native(EventSource, 'readyState').get;
    // The connection's own open and error go to Rust (which ignores `a` for an open), and on from there.
    for (const [type, code] of [['open', I_OPENED], ['error', I_FAILED]]) {
      listen(c, type, (e) => {
        // A server's event named open or error is an ordinary named event, delivered as the browser does.
        if (named(e)) return arrived(c, type, e, link.t.get(type)?.l ?? EMPTY);
        inputWith(link, e, code, state.call(es) === 2);
      });
    }
    link.u = es.url;
  }
  if (first || c.all) return c;
  c.all = true;
  if (link.hint) relay(c, link.hint);
  if (link.beat) relay(c, link.beat); // its arrival is what the stall watchdog sees
  relay(c, 'message');
  for (const type of link.t.keys()) relay(c, type);
  for (const type of link.sh?.types ?? EMPTY) relay(c, type); // what the other tabs listen to
  // The inner source is never handed to user code but as its events' target, where it wears the instance's
  // face: what a listener does to it, it does to the instance. A polyfill keeps its prototype (it calls its
  // own close and dispatchEvent) and its events are shown with the instance as target.
  if (browsers(es)) {
    Object.setPrototypeOf(es, face(link));
    c.face = true;
  } else es.close = () => link.me.close();
  return c;
});

/** Called by Rust to let go of a source: removes every listener of ours from it, and closes it. */
export const detach = guard(function detach(c) {
  const off = native(EventTarget, 'removeEventListener').value;
  for (let i = 0; i < c.fs.length; i += 2) off.call(c.es, c.fs[i], c.fs[i + 1]);
  if (!c.face) delete c.es.close;
  const link = c.link;
  if (link.c === c) link.c = null;
  link.detached?.(c); // a socket's last word (socket.js)
  if (!link.lost) shut(c.es); // a socket (with `lost`) Rust closes itself
});

/** The `lastEventId` of the connection's first (`which` 0) or last (1) event; undefined before any. */
export const eventId = guard(function eventId(c, which) {
  return (which ? c.last : c.first)?.lastEventId;
});

/** Whether an event arrived since the last call (for the stall watchdog). */
export const active = guard(function active(c) {
  const moved = c.last !== c.seen;
  c.seen = c.last;
  return moved;
});
