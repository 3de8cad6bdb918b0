// The JavaScript half of the browser shell: the public classes, ManagedEventSource and createManagedStream,
// and the entry points Rust imports. The package's entries (scripts/build.mjs) import this file; the rest
// of the half is in rooms of its own, each of which says what it holds and what it may not do:
//
//   base.js       the hooks to Rust, error helpers, the guard that keeps exceptions out of wasm
//   relay.js      the per-event path: events in, listeners called, the instance as their target
//   listeners.js  EventTarget's listener rules, the on* attributes, the members a class shares
//   control.js    what Rust calls to act (timers, page listeners, the probe, URLs) and the user's callbacks
//   options.js    reading the user's option object into the values Rust checks
//   share.js      one connection for all tabs
//
// This file holds no policy either: a constructor reads its arguments (so that a throwing getter throws to
// the caller, never through wasm), hands the values to Rust, which validates them and starts the shell, and
// keeps what the instance's members read. (A first constructor with nothing left for Rust to check hands
// them over later, once the module is compiled: see `later`.) Nothing here lets an exception reach Rust.

import {
  I_RETRY_NOW, I_CLOSE, I_STATUS, I_READY_STATE, I_ATTEMPT, I_LIVE,
  O_WITH_CREDENTIALS, O_LAST_EVENT_ID_PARAM, O_RETRY_HINT_EVENT, O_HEARTBEAT_EVENT, V_PROBE_URL, V_RESUME_FROM, V_START, V_TRANSPORT,
} from './boundary.js';
import { ask, fail, guard, hooks, EMPTY, NAMES } from './base.js';
import { add, dress } from './listeners.js';
import { finish } from './control.js';
import { attach, shut } from './relay.js';
import { readOptions } from './options.js';
import { sharing, startShared } from './share.js';

// What Rust imports from this file (src/web/js.rs), and what the entries and the tests call.
export { define, error, report } from './base.js';
export { attach, detach, eventId, active } from './relay.js';
export { encodedLen, notify, urlOf, arm, disarm, watch, unwatch, probe, number, item, now, random } from './control.js';

/** The public API, and how many connections, timers and page listeners a client holds (for the browser
 * tests, which have no package entry). */
export const api = () => ({
  ManagedEventSource,
  createManagedStream,
  live: (me) => ask(link(me), I_LIVE),
  handle: (me) => link(me).s.p,
});

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
  face: null, // what a browser EventSource of the instance's shows it as (see face in relay.js)
  cur: null, // the event our listeners are being called with
  pre: null, // the source the constructor started, until Rust takes it (see early)
  pu0: '', // and its URL
  asked: null, // what a URL function gave (u) or threw (e) for the first attempt, until urlOf hands it over
  quiet: false, // while a shell built after its constructor starts (see later)
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
  link.until = until; // undefined or null when not given: read only as a condition
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
    // Checks the options, so that they throw here, in every tab: with the option check while no client's
    // shell has run (see passes in the entry; a tab that never leads then never compiles the module), else
    // with a shell never started, which goes at once.
    if (!hooks.passes?.(values)) hooks.free(hooks.shell(link, Object.assign([...values], { [V_START]: 0 })));
    startShared(link, make, share === true ? url : share);
  } else {
    // The first attempt, started before the shell is built (for the fetch transport the fetch entry's
    // `first`, fetch.js's early; the browser tests' hooks, src/web/mod.rs, have none).
    if (viaFetch) hooks.first?.(link);
    else early(link, url);
    if (!link.pre || !later(link, values, make)) build(link, make);
  }
  return link;
}

/**
 * Builds the shell (`make`) as `link.s`, and returns it. The first attempt the constructor started (see
 * early) is then Rust's, or, if the shell did not take it (the options or the URL were refused, and this
 * throws), ended.
 */
function build(link, make) {
  try {
    return (link.s = make());
  } finally {
    const pre = link.pre;
    link.pre = null;
    // The fetch transport's record (fetch.js's stop), or EventSource's own close, not the instance's that
    // the relay gave it (see attach), which would build again.
    if (pre) link.f ? hooks.stop(pre) : shut(pre);
  }
}

/**
 * The first construct, when its first attempt is started (see early: an EventSource, or the fetch
 * transport's request) and the options pass the option check, a module of a few kilobytes that runs the
 * shell's own reading and rules (src/check.rs; see soon in the entry). Then the shell's module need not run
 * in the constructor: the relay listens to the source's open and error at once (which build the shell, so no
 * event is missed: nothing else comes before them; the fetch transport's
 * bytes wait for the shell, which parses them), and the shell is built and started once the module is
 * compiled, off the main thread, in a task of its own. Whatever needs the shell before that (an open or an
 * error from the source, the fetch transport's response or bytes, a member of the instance) builds it then,
 * synchronously. Its start tells only what it would have told in
 * the constructor (see quiet in notify). Returns false, for the synchronous path, where the module is
 * ready and a client's shell has run already, the options fail (the shell, built there, throws the error) or
 * the page may not compile.
 */
function later(link, values, make) {
  let s = null;
  const take = () => {
    if (!s) {
      link.quiet = true;
      try {
        s = build(link, make);
      } finally {
        link.quiet = false;
      }
    }
    return s;
  };
  if (!hooks.soon?.(guard(take), values)) return false;
  if (!link.f) attach(link, link.pre, true);
  link.s = {
    get p() {
      return take().p;
    },
    input: (code, a, b, c) => take().input(code, a, b, c),
    lastEventId: () => take().lastEventId(),
  };
  return true;
}

/**
 * Starts the first attempt's EventSource before the shell is built: on the first construct that is before
 * the wasm is compiled and run, so the request is on its way meanwhile. Rust's first attempt takes it (see
 * source): in the constructor, before any event can reach it (the construct is one task), or later, with
 * the relay listening to it from the constructor on (see later). A URL function is asked here, once, for the
 * first attempt's URL: what it gives or throws is kept for that attempt (see urlOf), so it is called once an
 * attempt, as before. A URL the attempt would refuse (or a Promise) makes nothing here; the shell then
 * refuses it (or waits for it), after checking the options, as without this.
 */
function early(link, url) {
  if (typeof url === 'function') {
    try {
      url = link.url();
    } catch (e) {
      link.asked = { e };
      return;
    }
    link.asked = { u: url };
    if (typeof url?.then === 'function') return;
  }
  try {
    const u = finish(link, url);
    link.pre = new EventSource(u, link);
    link.pu0 = u;
  } catch {}
}

/** What Rust calls to make an attempt's EventSource: the one `early` started, when this is its attempt. */
export function source(link, url) {
  const p = link.pre;
  if (p) {
    link.pre = null;
    if (url === link.pu0) return p;
    shut(p);
  }
  return new EventSource(url, link);
}

/**
 * For prepare(), once the wasm is compiled: reads an empty options object and makes a shell that is never
 * started (as a shared instance checks its options), then frees it, so that the engine has run that code
 * once before the first client. Nothing connects, arms a timer or listens.
 */
export function warm() {
  const { values } = readOptions({}, 1, EMPTY);
  values[V_START] = 0;
  hooks.free(hooks.shell(linkOf({}, ''), values));
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
