// The JavaScript half of the browser shell (a wasm-bindgen snippet of src/web/).
//
// It holds no policy. The Rust shell decides when to open, close, wait and give up; it creates and closes
// every EventSource and arms every timer. What lives here is what must sit next to the browser's events:
//
//  - the per-event relay: one function per event type per connection, which keeps the last event (Rust
//    reads its lastEventId only when it needs it) and calls the user's listeners. Ordinary events never
//    enter wasm; only the events policy must see (open, a failure, the retry-hint event) call the shell;
//  - listener bookkeeping with EventTarget's rules (handleEvent objects, once, signal, capture, removal
//    during dispatch), and the on* attributes as the HTML specification registers them;
//  - the thin public class, which reads the user's option object (so a throwing getter throws to the
//    caller, never through wasm) and hands the values to Rust, which validates them.
//
// Nothing here lets an exception reach Rust: every call of user code is caught and reported as a browser
// reports an exception thrown by an event listener.

import {
  I_OPENED, I_FAILED, I_WAKE, I_HIDDEN, I_RESTORED, I_ONLINE, I_OFFLINE, I_HINT, I_RETRY_NOW, I_CLOSE, I_PROBED, I_FIRST_QUESTION,
  I_STATUS, I_READY_STATE, I_ATTEMPT, I_LIVE, I_CLOSED,
  N_STATUS, N_OPEN, N_ERROR, N_RETRY, N_GIVE_UP, N_ID_DROPPED, N_UNAUTHORIZED, N_FLUSH,
  STATUSES, S_OPEN, S_CLOSED, OPTIONS, O_WITH_CREDENTIALS, O_LAST_EVENT_ID_PARAM, O_RETRY_HINT_EVENT,
  O_HEARTBEAT_EVENT, V_PROBE_URL, V_QUEUE_MAX, V_GIVEN, V_RESUME_FROM, V_START, V_COUNT, V_TRANSPORT,
} from './boundary.js';

/** What the shell (or a shared instance's stand-in for it) answers to question `code` (`I_STATUS` and on). */
export const ask = (link, code) => link.s.input(code);
export const NAMES = STATUSES;
export const PREFIX = 'managed-eventsource: ';

/**
 * Set by `define`: `shell(link, values)` builds a Rust shell (which starts it) and returns its handle;
 * `input`, `lastEventId` and `free` take that handle (see `own`).
 */
let hooks;

/** Installs the Rust side. The package's entry calls it once with the wasm exports. */
export function define(h) {
  hooks = h;
}

/** The public API, and how many connections, timers and page listeners a client holds (for the browser
 * tests, which have no package entry). */
export const api = () => ({
  ManagedEventSource,
  createManagedStream,
  live: (me) => ask(link(me), I_LIVE),
  handle: (me) => link(me).s.p,
});

/** Reports an exception thrown by user code without stopping anything (even if reporting throws). */
export function report(e) {
  try {
    (globalThis.reportError ?? console.error)(e);
  } catch {}
}

/** Throws a TypeError with our prefix. */
export const fail = (message) => {
  throw new TypeError(PREFIX + message);
};

/**
 * Runs `f` for Rust, which must never see an exception: one that unwinds through wasm skips its stack's
 * epilogue, and a thousand later the module traps for the whole page. What would throw is reported.
 */
export const guard = (f) =>
  function (...args) {
    try {
      return f.apply(this, args);
    } catch (e) {
      report(e);
    }
  };

/** The error Rust throws for an invalid option: a RangeError or a TypeError, worded as OptionError::message. */
export const error = (range, option, rule) => new (range ? RangeError : TypeError)(PREFIX + 'option ' + option + ' ' + rule);

// ---- the per-event path ---------------------------------------------------------------------------------

const EMPTY = [];

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

/** Calls the listeners of `type` with `e`, as `EventTarget.dispatchEvent` would, with the instance as target. */
export function fire(link, type, e) {
  const s = link.t.get(type);
  if (s && s.l.length !== 0) deliver(link, type, s.l, e);
}

/** The hot path: `list` is a snapshot; entries removed meanwhile are skipped, entries added are not called. */
export function deliver(link, type, list, e) {
  const me = link.me;
  const outer = link.cur; // an event our listeners see already (a dispatch inside a dispatch)
  link.cur = e;
  if (e.target !== me) e = FIELDS ? retarget(me, e) : swap(link, e);
  else e.currentTarget = me;
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x.gone) continue;
    if (x.once) drop(link, type, x);
    const f = x.f;
    try {
      if (typeof f === 'function') f.call(me, e);
      else if (!x.a) f.handleEvent(e);
    } catch (err) {
      report(err);
    }
  }
  link.cur = outer;
  e.currentTarget = outer === e ? me : null; // where FIELDS is false, the prototype's setter ignores it
}

/** Whether an `open` or `error` event is a server's named event (a MessageEvent), not the connection's own. */
const named = (e) => 'data' in e;

/** Listens to `type` on the connection's source, once. `open` and `error` have listeners of their own. */
function relay(c, type) {
  // A socket has one relay, for messages, made by attachSocket.
  if (c.types.has(type) || type === 'open' || type === 'error' || c.link.socket) return;
  const link = c.link;
  const s = slot(link, type);
  const hint = type === link.hint;
  listen(c, type, (e) => arrived(c, type, e, s.l, hint));
  c.types.add(type);
}

/** A server's event of `type` for the listeners `list`; `hint` when it is the retry-hint event. */
export function arrived(c, type, e, list, hint) {
  const link = c.link;
  c.last = e;
  c.first ??= e;
  // The server's retry hint is policy: it goes through Rust, then to any listener.
  if (hint) link.s.input(I_HINT, hintMs(e.data));
  if (list.length !== 0) deliver(link, type, list, e);
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
  c.es.addEventListener(type, f);
  c.fs.push(type, f);
}

/** `until(ev)`: the event for which it returns true has been delivered; then the stream closes. */
function until(link, e) {
  let done = false;
  try {
    done = link.until.call(undefined, e) === true;
  } catch (err) {
    report(err);
  }
  if (done) link.s.input(I_CLOSE);
}

/** Called by Rust for every new EventSource: our listeners on it. */
export const attach = guard(function attach(link, es) {
  const c = { link, es, fs: [], types: new Set(), first: undefined, last: undefined, seen: undefined };
  // The connection's own open and error go to Rust (which ignores `a` for an open), and on from there.
  for (const [type, code] of [['open', I_OPENED], ['error', I_FAILED]]) {
    listen(c, type, (e) => {
      // A server's event named open or error is an ordinary named event, delivered as the browser does.
      if (named(e)) return arrived(c, type, e, link.t.get(type)?.l ?? EMPTY);
      inputWith(link, e, code, es.readyState === 2);
    });
  }
  if (link.hint) relay(c, link.hint);
  if (link.beat) relay(c, link.beat); // its arrival is what the stall watchdog sees
  relay(c, 'message');
  for (const type of link.t.keys()) relay(c, type);
  for (const type of link.sh?.types ?? EMPTY) relay(c, type); // what the other tabs listen to
  // The inner source is never handed to user code; if it is closed anyway, the instance closes with it.
  es.close = () => link.me.close();
  link.c = c;
  link.u = es.url;
  return c;
});

/** Called by Rust before it closes a source: removes every listener of ours from it. */
export const detach = guard(function detach(c) {
  for (let i = 0; i < c.fs.length; i += 2) c.es.removeEventListener(c.fs[i], c.fs[i + 1]);
  delete c.es.close;
  const link = c.link;
  if (link.c === c) link.c = null;
  // A socket closed by close(code, reason) closes with those, and is CLOSING: its close event, when it
  // comes, still reaches the user.
  if (link.closing) {
    c.es.close(link.closing.code, link.closing.reason);
    c.es.addEventListener(
      'close',
      (e) => {
        link.closing = null;
        fire(link, 'close', e);
      },
      { once: true },
    );
  }
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

// ---- the control path -----------------------------------------------------------------------------------

/** An event for a failure the browser did not report itself (a stall, a connect timeout). */
const closeEvent = (type) =>
  type === 'close' && typeof CloseEvent === 'function' ? new CloseEvent('close', { code: 1006, wasClean: false }) : new Event(type);

/** Calls a user callback with one argument; reports what it throws. */
function call(self, f, arg) {
  if (typeof f !== 'function') return;
  try {
    f.call(self, arg);
  } catch (err) {
    report(err);
  }
}

/** What Rust tells the user. Never throws. */
export const notify = guard(function notify(link, what, a, b) {
  const me = link.me, cb = link.cb, st = link.st;
  if (link.sh?.leader) {
    // A leader that closes hands the connection over: the others are not told it closed.
    if (what === N_STATUS && a === S_CLOSED) queueMicrotask(() => leave(link));
    else tell(link, { k: 'note', what, a, b, state: what === N_STATUS ? [a, ask(link, I_READY_STATE), ask(link, I_ATTEMPT)] : undefined });
  }
  if (what === N_STATUS) {
    call(me, cb.onstatus, NAMES[a]);
    call(undefined, st.onStatus, NAMES[a]);
  } else if (what === N_OPEN) {
    fire(link, 'open', link.ev ?? new Event('open'));
    call(undefined, st.onOpen, { attempt: a });
  } else if (what === N_ERROR) {
    // A socket's failure is told by its close event (its error event has gone to listeners already).
    const type = link.socket ? 'close' : 'error';
    fire(link, type, link.ev ?? closeEvent(type));
  } else if (what === N_RETRY) {
    call(me, cb.onretry, { attempt: a, delayMs: b });
    call(undefined, st.onRetryScheduled, { attempt: a, wait: b });
  } else if (what === N_GIVE_UP) {
    call(me, cb.ongiveup, { attempts: a });
    call(undefined, st.onGiveUp, a);
  } else if (what === N_UNAUTHORIZED) {
    call(me, cb.onunauthorized, { status: a });
    call(undefined, st.onUnauthorized, { status: a });
  } else if (what === N_ID_DROPPED) {
    report(new RangeError(`${PREFIX}the last event id is ${a} bytes once encoded, over the ${b} a reconnect URL carries (lastEventIdParam); reconnecting without it`));
  } else if (what === N_FLUSH) link.flush();
});

/** Browsers refuse a URL of about 2 MB (Chromium); longer ones are refused here. */
const MAX_URL = 1 << 21;

/**
 * The URL of the next attempt: the URL given, or what the URL function returns, carrying `id` (the last
 * event id, when Rust decides this attempt resumes with it) in the `lastEventIdParam` parameter. Throws
 * (Rust catches it) what a URL function throws, or a RangeError for a URL no browser would request. A URL
 * function that returns a Promise gets, in the fetch entry, the attempt's wait instead (fetch.js's `later`);
 * the main entry refuses it, with a clear error rather than a request to '/[object Promise]'.
 */
export function urlOf(link, id) {
  const u = typeof link.url === 'function' ? link.url() : link.url;
  if (typeof u?.then !== 'function') return finish(link, u, id);
  if (!hooks.later) fail('the url function returned a Promise (awaited with managed-eventsource/fetch)');
  return hooks.later(link, u, id);
}

/** `u`, a string or what a URL function gave, as the URL of an attempt that carries `id` (see urlOf). */
export function finish(link, u, id) {
  if (u == null) fail('the url function must return a string or a URL');
  u = `${u}`;
  if (id !== undefined) u = withParam(u, link.lp, id);
  if (u.length > MAX_URL) throw new RangeError(`${PREFIX}the url is ${u.length} characters long; browsers refuse more than ${MAX_URL}`);
  return u;
}

// The reconnect URL (seed 003): a new EventSource cannot send a Last-Event-ID header, so with the option
// lastEventIdParam the id travels in the query string. Rust decides whether an attempt carries it, and
// which id (the machine's, at most 4096 bytes once encoded: `resume::encoded_len`); this writes it in.

/** encodeURIComponent, with a lone surrogate (which it refuses) read as U+FFFD, as a USVString is. (No
 * lookbehind, which Safari parses only from 16.4: a pair matches first and is kept.) */
const encode = (s) => encodeURIComponent(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g, (m) => (m.length > 1 ? m : '\uFFFD')));

/** An id's length in a reconnect URL, for Rust (`resume::encoded_len` counts the same); 0 for none. */
export const encodedLen = (id) => (id ? encode(id).length : 0);

/**
 * A query key as encodeURIComponent would write the bytes it stands for: `+` is a space, `%XX` a byte
 * (written back in capitals, or as the character for one it leaves alone), a malformed escape as it is.
 * Two keys name the same parameter when these agree.
 */
const canonical = (key) =>
  key.replace(/%([0-9a-f]{2})|./gisu, (m, hex) => {
    if (!hex) return m === '+' ? '%20' : encode(m);
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[\w.!~*'()-]/.test(c) ? c : '%' + hex.toUpperCase();
  });

/**
 * `url` with the query parameter `name=value`: added with `?` or `&`, name and value encoded as
 * encodeURIComponent encodes them, any parameter already named `name` (however it is encoded, with or
 * without a value) replaced rather than repeated, empty parts dropped, and the fragment kept.
 */
export function withParam(url, name, value) {
  const hash = url.includes('#') ? url.indexOf('#') : url.length;
  const [path, query = ''] = url.slice(0, hash).split(/\?(.*)/s);
  const key = encode(name);
  const kept = query.split('&').filter((pair) => pair !== '' && canonical(pair.split('=')[0]) !== key);
  return path + '?' + [...kept, key + '=' + encode(value)].join('&') + url.slice(hash);
}

// What a server says about waiting. Rust takes the delays as numbers, and decides what they change (a hint
// or a Retry-After is capped by maxHintMs, and only a 429 or 503 is heeded); reading them off the wire is
// done here, where the strings are, so that no string crosses into wasm for them. -1: not a delay.

/** A retry hint's data, read as the `retry:` field is read: ASCII digits, with ASCII whitespace around. */
export const hintMs = (data) => (/^[\t\n\f\r ]*\d+[\t\n\f\r ]*$/.test(data) ? +data : -1);

/**
 * A `Retry-After` header's value as the wait it asks for, in ms from `now`: delay-seconds, or an HTTP date
 * in one of the three forms RFC 9110 has recipients accept, all in GMT: the IMF-fixdate
 * (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and
 * asctime's (`Sun Nov  6 08:49:37 1994`, which names no zone). `Date.parse` reads each once it says GMT. A
 * date in the past asks for no wait.
 */
export function retryAfterMs(value, now = Date.now()) {
  if (typeof value !== 'string') return -1;
  value = value.trim();
  if (/^\d+$/.test(value)) return value * 1000;
  if (/^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$/.test(value)) value += ' GMT';
  const at = /^[A-Z][a-z]+,? [\w -]+ \d\d:\d\d:\d\d( \d{4})? GMT$/.test(value) ? Date.parse(value) : NaN;
  return at === at ? Math.max(0, at - now) : -1;
}

/** A probe that has not had its headers in this long has failed. */
const PROBE_TIMEOUT = 10000;

/** Fetches the probe URL (`probe: 'url'`, else the last attempt's) once for Rust, aborted as soon as the
 * headers arrive (or failed after 10 s), and tells the shell the status (0 for a probe that failed) and any
 * Retry-After, once. Returns what `disarm` cancels it with: Rust drops it when the answer comes, or when the
 * stream closes or starts afresh before, and then nothing answers. */
export const probe = guard((link, id) => {
  const ac = new AbortController();
  let done = false;
  const stop = () => {
    done = true;
    clearTimeout(timer);
    ac.abort();
  };
  const answer = (status, retryAfter) => done || (stop(), link.s.input(I_PROBED, id, status, retryAfterMs(retryAfter)));
  const timer = setTimeout(() => answer(0), PROBE_TIMEOUT);
  fetch(link.pu ?? link.u, {
    credentials: link.withCredentials ? 'include' : 'same-origin',
    cache: 'no-store',
    headers: { Accept: 'text/event-stream' },
    signal: ac.signal,
  }).then(
    (r) => answer(r.status, r.headers.get('retry-after')),
    () => answer(0),
  );
  return stop;
});

/** Element `i` of the option values `start` gives, for Rust. */
export const number = (numbers, i) => numbers[i];
/** The same, for a value Rust takes as it is (a string option, the id to resume from). */
export const item = number;

/** The machine's clock. */
export const now = guard(() => performance.now());
/** A seed for a client's jitter: a random whole number below 2^53. */
export const random = guard(() => Math.random() * 2 ** 53);

/** Arms a timer for Rust: after `ms`, `input(what)`. Returns its id for `disarm`. */
export const arm = guard((link, ms, what) => setTimeout(() => link.s.input(what), ms));
/** Cancels a timer `arm` made (an id, or Node's Timeout object), or stops a probe (a function). */
export const disarm = guard((x) => (typeof x === 'function' ? x() : clearTimeout(x)));

/**
 * Listens to the page for Rust: the back-forward cache (`pageshow` from it, always: a restored page's
 * connection is gone), visibility and resume (`visible`: visible, hidden; a page hidden already says so
 * once Rust has let go of the shell), and the network (`online`).
 */
export const watch = guard(function watch(link, visible, online) {
  const fs = [];
  const g = globalThis, d = g.document;
  const listen = (target, type, f) => {
    if (typeof target?.addEventListener !== 'function') return;
    target.addEventListener(type, f);
    fs.push([target, type, f]);
  };
  listen(g, 'pageshow', (e) => e.persisted && link.s.input(I_RESTORED));
  if (visible) {
    const seen = () => link.s.input(d.visibilityState === 'hidden' ? I_HIDDEN : I_WAKE);
    listen(d, 'visibilitychange', seen);
    listen(d, 'resume', () => link.s.input(I_WAKE));
    if (d?.visibilityState === 'hidden') queueMicrotask(seen);
  }
  if (online) {
    listen(g, 'online', () => link.s.input(I_ONLINE));
    listen(g, 'offline', () => link.s.input(I_OFFLINE));
  }
  return fs;
});

export const unwatch = guard(function unwatch(fs) {
  for (const [target, type, f] of fs) target.removeEventListener(type, f);
});

// ---- listeners, with EventTarget's rules ----------------------------------------------------------------

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

function remove(link, type, f, o) {
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
function setAttribute(link, type, f) {
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
function setCallback(link, name, f) {
  if (f != null && typeof f !== 'function') fail(name + ' must be a function or null');
  link.cb[name] = f ?? null;
}

// ---- the public class -----------------------------------------------------------------------------------

export const quote = (v) => (typeof v === 'string' ? "'" + v + "'" : String(v));

/** Edit distance (Levenshtein) between two short strings. */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] !== b[j - 1]));
    prev = cur;
  }
  return prev[b.length];
}

/** The option of `known` that `k` probably misspells (same letters but for case, or up to two edits away). */
const misspelt = (k, known) =>
  known.find((o) => o.toLowerCase() === k.toLowerCase() || (k.length > 4 && distance(o.toLowerCase(), k.toLowerCase()) <= 2));

/**
 * Reads `options` as a dictionary argument is read: the options of class `cls` in OPTIONS (from
 * boundary.js, which Rust's table writes) checked for their JavaScript type, and `others` (names read by
 * the caller). Returns the options object and the values for Rust (see boundary.rs): numbers as they are,
 * booleans as 0 or 1, a choice as its index, strings as they are, with a bit in `values[V_GIVEN]` for
 * each option given. Rust checks every value and holds every default.
 */
export function readOptions(options, cls, others) {
  if (options != null && typeof options !== 'object' && typeof options !== 'function') fail('options must be an object');
  const o = options ?? {};
  const mine = OPTIONS.filter((x) => x[2] & cls);
  const known = [...mine.map(([k]) => k), ...others];
  // A key the API does not know is ignored, as EventSource ignores it, unless it looks like one of ours
  // misspelt: then silently taking the default would hide the mistake.
  for (const k of Object.keys(o)) {
    const meant = known.includes(k) ? null : misspelt(k, known);
    if (meant) fail(`unknown option '${k}' (did you mean '${meant}'?)`);
  }
  const values = new Array(V_COUNT); // undefined where not given
  let given = 0;
  OPTIONS.forEach(([k, type, classes], i) => {
    let v = classes & cls ? o[k] : undefined;
    if (v == null) return;
    if (type === 'probe') {
      if (typeof v === 'string') {
        values[V_PROBE_URL] = v;
        v = true;
      } else if (typeof v !== 'boolean') fail('option probe must be true, false or a URL');
    } else if (type === 'queue') {
      // 'none' | 'all' | { max }
      if (v === 'none' || v === 'all') v = +(v === 'all');
      else if (typeof v === 'object' && typeof v.max === 'number') {
        values[V_QUEUE_MAX] = v.max;
        v = 2;
      } else fail("option queue must be 'none', 'all' or { max: number }");
    } else if (typeof type === 'string' ? typeof v !== type : !type.includes(v)) {
      const rule = typeof type === 'string' ? 'a ' + type : type.filter((v) => v !== true).map(quote).join(', ').replace(/, ([^,]*)$/, ' or $1');
      fail('option ' + k + ' must be ' + rule);
    }
    values[i] = type === 'string' ? v : typeof type === 'object' ? type.indexOf(v) : +v;
    given |= 1 << i;
  });
  values[V_GIVEN] = given;
  return { o, values };
}

/** The fields of a client's JavaScript half that the relay and the listeners use. */
export const linkOf = (me, url, st) => ({
  me,
  url,
  u: '', // the URL of the current or last attempt
  s: null,
  t: new Map(), // type -> { l: listener entries }
  on: {}, // the on<type> attributes set (null when unset)
  cb: {}, // the callback properties set (null when unset)
  st: st ?? {},
  c: null,
  ev: null,
  until: null,
  protos: new Map(), // an event class's prototype -> ours (see swap)
  cur: null, // the event our listeners are being called with
});

/** Frees a shell once nothing can reach its instance (see `own`). */
let shells;

/**
 * Builds the Rust shell for `link` from the option values `values` (see readOptions) and returns it as
 * this file calls it (`link.s`), freed once `link` is collected: nothing calls a shell but through its link
 * (the instance, its listeners and timers hold the link), and Rust holds the link until the stream is
 * closed. A handle Rust no longer knows (freed) finds nothing, so no stale handle can do harm.
 */
export function own(link, values) {
  const p = hooks.shell(link, values);
  shells ??= typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((p) => hooks.free(p)) : { register() {} };
  shells.register(link, p);
  return { p, input: (code, a, b, c) => hooks.input(p, code, a, b, c), lastEventId: () => hooks.lastEventId(p) };
}

/** The options of the fetch transport, which api.js reads only to refuse them without it (fetch.js reads them). */
const FETCH = ['headers', 'method', 'body', 'fetch'];

/** Reads `options` as a dictionary argument is read, then builds the Rust shell (which starts it). */
function start(me, url, options, st) {
  const { o, values } = readOptions(options, 1, ['until', 'share', 'transport', ...FETCH]);
  // The fetch transport's options are read by fetch.js, in the entry that has it; here they are refused.
  const t = o.transport ?? 'eventsource', viaFetch = t === 'fetch';
  if (viaFetch ? !hooks.fetch : t !== 'eventsource') fail("option transport must be 'eventsource' or 'fetch' (with managed-eventsource/fetch)");
  for (const k of FETCH) if (!viaFetch && o[k] != null) fail(`option ${k} needs transport 'fetch'`);
  if (!viaFetch && typeof EventSource !== 'function') {
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
  const link = linkOf(me, url, st);
  link.until = until ?? null;
  link.withCredentials = values[O_WITH_CREDENTIALS] === 1; // the link is the EventSourceInit Rust creates sources with
  // The strings, as Rust checks them: the shell reads none of these back.
  link.lp = values[O_LAST_EVENT_ID_PARAM];
  link.hint = values[O_RETRY_HINT_EVENT];
  link.beat = values[O_HEARTBEAT_EVENT];
  link.pu = values[V_PROBE_URL];
  if (viaFetch) {
    hooks.fetch(link, o);
    values[V_TRANSPORT] = 2;
  }
  for (const [type, f] of st?.events ?? EMPTY) add(link, type, f);
  if (st?.onMessage) add(link, 'message', st.onMessage);
  values[V_START] = 1;
  const make = (from) => {
    values[V_RESUME_FROM] = from;
    return own(link, values);
  };
  if (share && sharing()) {
    // Checks the options, so that they throw here, in every tab; the shell, never started, goes at once.
    hooks.free(hooks.shell(link, Object.assign([...values], { [V_START]: 0 })));
    startShared(link, make, share === true ? url : share);
  } else link.s = make();
  return link;
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

// ---- one connection for all tabs (share) ---------------------------------------------------------------
//
// Instances with `share` in pages of one origin and the same URL (or share name) hold one connection: the
// one that holds a Web Lock named after it is the leader, with a Rust shell and a real EventSource; it
// relays every event and every notification over a BroadcastChannel of the same name. The others hold a
// stand-in for the shell that mirrors the leader. When the leader closes, or its page goes, the lock passes
// to the next one, which starts a shell of its own, resuming after the last event it saw. Nothing here
// decides anything: the browser grants the lock, and the leader's machine does the rest.

/** Whether this runtime has what sharing needs (else each instance holds a connection of its own). */
const sharing = () =>
  typeof BroadcastChannel === 'function' && typeof navigator === 'object' && typeof navigator.locks?.request === 'function';

function startShared(link, make, key) {
  const name = 'managed-eventsource:' + key;
  const sh = { ch: new BroadcastChannel(name), ac: new AbortController(), types: new Set(), state: [0, 0, 0], lastId: '', leader: false, release: null };
  link.sh = sh;
  // Until it leads, the instance's shell is a stand-in that reads the leader's state and asks it to act.
  link.s = {
    input: (code) =>
      code === I_CLOSED
        ? +!!sh.left
        : code >= I_FIRST_QUESTION
          ? sh.state[code - I_FIRST_QUESTION] ?? 0
          : code === I_CLOSE
            ? leave(link)
            : code === I_RETRY_NOW && sh.ch.postMessage({ k: 'retryNow' }),
    lastEventId: () => sh.lastId,
  };
  sh.ch.onmessage = (m) => fromChannel(link, m.data);
  sh.ch.postMessage({ k: 'hello', types: [...link.t.keys()] });
  navigator.locks
    .request(name, { signal: sh.ac.signal }, () => new Promise((release) => lead(link, make, release)))
    .catch(() => {}); // aborted: closed before it led
}

/** This instance got the lock: it holds the connection now. */
function lead(link, make, release) {
  const sh = link.sh;
  sh.release = release;
  sh.leader = true;
  try {
    link.s = make(sh.lastId || undefined);
  } catch (e) {
    report(e);
    leave(link);
  }
}

/** Closes a shared instance: a follower just stops listening; a leader hands the connection over. */
function leave(link) {
  const sh = link.sh;
  if (!sh || sh.left) return;
  sh.left = true;
  sh.ch.close();
  sh.ac.abort();
  if (!sh.leader) {
    sh.state[0] = S_CLOSED;
    sh.state[1] = 2;
    notify(link, N_STATUS, S_CLOSED); // 'closed', to both kinds of callback
  }
  sh.leader = false;
  sh.release?.();
}

/** Tells the followers, if this instance leads. */
const tell = (link, message) => link.sh?.leader && !link.sh.left && link.sh.ch.postMessage(message);

/** What a follower does with the leader's news, and what a leader does with a follower's request. */
function fromChannel(link, m) {
  const sh = link.sh;
  if (sh.leader) {
    if (m.k === 'hello' || m.k === 'types') {
      for (const type of m.types) {
        sh.types.add(type);
        if (link.c) relay(link.c, type);
      }
      if (m.k === 'hello') tell(link, { k: 'state', state: [I_STATUS, I_READY_STATE, I_ATTEMPT].map((q) => ask(link, q)), id: link.s.lastEventId() });
    } else if (m.k === 'retryNow') link.s.input(I_RETRY_NOW);
    return;
  }
  if (m.k === 'event') {
    if (m.id !== '') sh.lastId = m.id;
    const e = new MessageEvent(m.type, { data: m.data, lastEventId: m.id, origin: m.origin });
    fire(link, m.type, e);
    if (link.until) until(link, e);
  } else if (m.k === 'note') {
    if (m.what === N_STATUS) sh.state = m.state;
    notify(link, m.what, m.a, m.b);
  } else if (m.k === 'state') {
    // The leader's state when this instance joined: as if it had connected itself.
    const was = sh.state[0];
    sh.state = m.state;
    if (m.id) sh.lastId = m.id;
    if (m.state[0] !== was) notify(link, N_STATUS, m.state[0], 0);
    if (m.state[0] === S_OPEN) notify(link, N_OPEN, 0, 0);
  }
}

/** createManagedStream's handlers for the instance being constructed (not a constructor argument). */
let pending = null;

/** An EventSource that reconnects through a jittered exponential backoff ladder. */
export class ManagedEventSource {
  #l;
  constructor(url, options) {
    const st = pending;
    pending = null;
    // As EventSource: its URL is required (ToString would make undefined a path).
    if (arguments.length === 0) fail('1 argument required, but only 0 present: the URL');
    this.#l = start(this, url, options, st);
  }
  /** @internal */
  static _link(me) {
    return me.#l;
  }
  get url() {
    return this.#l.u;
  }
  get lastEventId() {
    return this.#l.s.lastEventId() ?? '';
  }
  get status() {
    return NAMES[ask(this.#l, I_STATUS)];
  }
  get readyState() {
    return ask(this.#l, I_READY_STATE);
  }
  get attempt() {
    return ask(this.#l, I_ATTEMPT);
  }
  get withCredentials() {
    return this.#l.withCredentials;
  }
  /** Whether this instance holds the connection (with share, one instance of all that share it does). */
  get leader() {
    const sh = this.#l.sh;
    return sh ? sh.leader : true;
  }
  /** Resets the ladder and connects at once, also after status 'failed'. Does nothing after close(). */
  reconnectNow() {
    this.#l.s.input(I_RETRY_NOW);
  }
  /** Closes for good: the source, any pending retry; status 'closed'. */
  close() {
    this.#l.s.input(I_CLOSE);
  }
}

const link = ManagedEventSource._link;
delete ManagedEventSource._link;
dress(ManagedEventSource, link, ['open', 'message', 'error'], ['onstatus', 'onretry', 'ongiveup', 'onunauthorized'], ['CONNECTING', 'OPEN', 'CLOSED']);

const STREAM = ['onOpen', 'onMessage', 'events', 'onRetryScheduled', 'onGiveUp', 'onStatus', 'onUnauthorized'];

/** Seed 000's createManagedStream: connects and returns a function that stops the stream. */
export function createManagedStream(url, handlers, options) {
  if (handlers == null || typeof handlers !== 'object') fail('handlers must be an object');
  const st = {};
  for (const k of Object.keys(handlers)) {
    if (!STREAM.includes(k)) fail("unknown handler '" + k + "'");
  }
  for (const k of STREAM) {
    const f = handlers[k];
    if (f == null) continue;
    if (k === 'events') {
      if (typeof f !== 'object') fail('handler events must be an object');
      st.events = Object.entries(f);
      for (const [type, g] of st.events) {
        if (typeof g !== 'function') fail("events['" + type + "'] must be a function");
      }
    } else if (typeof f !== 'function') {
      fail('handler ' + k + ' must be a function');
    } else st[k] = f;
  }
  pending = st;
  const me = new ManagedEventSource(url, options);
  return () => me.close();
}
