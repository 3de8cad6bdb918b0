// The fetch transport's JavaScript half (a wasm-bindgen snippet; only the package's fetch entry has it).
//
// It holds no policy either. Rust decides when an attempt starts and ends, what a status means and how long
// to wait; it parses the bytes. What lives here is what must be JavaScript: the user's headers, body and URL
// functions awaited before each attempt, the `fetch` call, the status and type of the response read for
// Rust, the reader, and the relay that turns a chunk's events (one string from Rust, see src/web/fetch.rs)
// into `MessageEvent`s for the listeners, through the same `arrived` as the EventSource transport's events.
//
// Nothing here may act once a connection is stopped: every step after an `await` checks `c.dead`, which
// `stop` sets (Rust calls it when it drops the connection), and `stop` aborts the fetch and cancels the
// reader.

import { I_OPENED, I_FAILED, I_REFUSED, I_URL } from './boundary.js';
import { fail, guard, report, PREFIX } from './base.js';
import { finish, retryAfterMs } from './control.js';
import { arrived, inputWith, FIELDS, Given } from './relay.js';

/** The methods `fetch` refuses. */
const FORBIDDEN = /^(connect|trace|track)$/i;
/** A method is an HTTP token. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
/** The methods `fetch` writes in capitals, whatever case they are given in. */
const NORMAL = /^(delete|get|head|options|post|put)$/i;

/**
 * Reads the fetch transport's options into `link.f` (called by api.js's `start`, which has read the
 * others): `headers`, `method`, `body`, `fetch`. Throws a TypeError naming the option for what `fetch` would
 * refuse. `chunk(handle, bytes)` is the wasm export that takes a stream's bytes.
 */
export function fetchOptions(link, o, chunk) {
  const { headers = null, body = null } = o;
  let { method = 'GET', fetch: f } = o;
  if (headers !== null && typeof headers !== 'object' && typeof headers !== 'function') fail('option headers must be an object or a function');
  if (typeof method !== 'string' || !TOKEN.test(method) || FORBIDDEN.test(method)) fail('option method must be an HTTP method fetch sends (not ' + String(method) + ')');
  if (NORMAL.test(method)) method = method.toUpperCase();
  if (body !== null && (method === 'GET' || method === 'HEAD')) fail('option body cannot go with method ' + method + ' (fetch refuses a body on GET and HEAD)');
  if (f == null) {
    if (typeof fetch !== 'function') fail('this runtime has no fetch; pass one as option fetch');
    // Called with no `this`, which a Window's own fetch takes as itself (a bound copy fails in Firefox
    // when the page's script runs from a WebDriver eval: its globalThis is not the Window's).
    f = (url, init) => fetch(url, init);
  } else if (typeof f !== 'function') fail('option fetch must be a function');
  link.f = { headers, method, body, fetch: f, chunk };
}

/** Headers as a plain object: a Headers or a list of pairs as fetch reads them, an object copied. */
const plain = (h) => (h == null ? {} : typeof h[Symbol.iterator] === 'function' ? Object.fromEntries(new Headers(h)) : { ...h });

/** Whether `r` is a Response, or looks enough like one (a polyfill's) to be read as one. */
const response = (r) => r != null && typeof r.status === 'number' && typeof r.headers?.get === 'function';

/** An `error` event with the response's `status` (undefined for a network failure) and a `message`. */
const failure = (status, message) => Object.assign(new Event('error'), { status, message: PREFIX + message });

/** A response's body, if it is not the stream: dropped, so that the connection goes. */
const discard = (r) => {
  try {
    r.body?.cancel?.().catch(() => {});
  } catch {}
};

/** The record's `types` (see relay.js's `relay`): every type is relayed already, as `events` sees them all. */
const ALL = { has: () => true };

/** The URL of an attempt: the user's (or its function's) as a string, with `id` in `lastEventIdParam`. */
function target(link, u, id) {
  u = finish(link, u, id);
  // As EventSource parses its URL against the document's: one that does not parse fails here.
  const href = new URL(u, globalThis.location?.href).href;
  return [u, href];
}

/**
 * Starts an attempt for Rust and returns its record. `id`: the id the URL carries (undefined for none);
 * `last`: the Last-Event-ID header's (empty for none). A URL that is a string (or that a URL function
 * returns at once) is checked now, so that the first attempt's constructor throws for it; what a function
 * returns later, and everything after, fails the attempt. The first attempt of a first construct was
 * started by the constructor, before the shell was built (see `early`): that one is taken as it is.
 */
export function open(link, id, last) {
  const pre = link.pre, asked = link.asked;
  link.pre = link.asked = null;
  if (pre) {
    if (id === undefined && !last) return pre;
    stop(pre);
  }
  if (asked) throw asked.e;
  const c = { link, ac: new AbortController(), dead: false, rd: null, first: undefined, last: undefined, seen: undefined, id: last ?? '', origin: '', types: ALL };
  let u = link.url;
  if (typeof u === 'function') u = u();
  let url = typeof u?.then === 'function' ? null : target(link, u, id);
  if (url) link.u = url[1];
  link.c = c;
  read(c, u, url, id);
  return c;
}

/**
 * For a first construct that can wait for the module (api.js's `later`): starts the first attempt before
 * the shell is built, so that its request is on its way while the module compiles; Rust's first attempt
 * takes it (see `open`). Until the shell is built, what the attempt tells it (its response, its failure, its
 * bytes) builds it, through `link.s`. What a URL function throws is kept for that attempt, so that it is
 * still called once an attempt (the constructor then builds the shell, which throws it).
 */
export function early(link) {
  try {
    link.pre = open(link, undefined, '');
  } catch (e) {
    link.asked = { e };
  }
}

async function read(c, u, url, id) {
  const link = c.link, f = link.f;
  let step = 'url', ended;
  try {
    // Nothing here runs inside the call that opened the attempt: the first one's is the constructor's,
    // before the instance has its shell (or, see `early`, before the shell is built at all).
    await null;
    if (c.dead) return;
    if (!url) {
      url = target(link, await u, id);
      if (c.dead) return;
      link.u = url[1];
    }
    step = 'headers';
    const given = plain(typeof f.headers === 'function' ? await f.headers() : f.headers);
    step = 'body';
    const body = typeof f.body === 'function' ? await f.body() : f.body;
    if (c.dead) return;
    const headers = Object.keys(given).some((k) => k.toLowerCase() === 'accept') ? given : { Accept: 'text/event-stream', ...given };
    if (c.id !== '') headers['Last-Event-ID'] = c.id;
    const init = { method: f.method, headers, cache: 'no-store', credentials: link.withCredentials ? 'include' : 'same-origin', redirect: 'follow', mode: 'cors', signal: c.ac.signal };
    if (body != null) init.body = body;
    step = 'fetch';
    const r = await f.fetch(url[0], init);
    if (c.dead) return discard(r);
    step = 'response';
    if (!response(r)) throw new TypeError(PREFIX + 'option fetch must return a Response (or a Promise of one)');
    const status = r.status;
    const type = r.headers.get('content-type') ?? '';
    const stream = status === 200 && /^text\/event-stream[\t ]*(;|$)/i.test(type.trim()) && typeof r.body?.getReader === 'function';
    if (!stream) {
      discard(r);
      const why = status !== 200 ? 'the server answered ' + status : r.body ? 'the response is ' + (type || 'untyped') + ', not text/event-stream' : 'the response has no body to read';
      return inputWith(link, failure(status, why), I_REFUSED, status === 200 ? 0 : status, retryAfterMs(r.headers.get('retry-after')));
    }
    c.origin = new URL(r.url || url[1]).origin;
    c.rd = r.body.getReader();
    inputWith(link, Object.assign(new Event('open'), { status, headers: r.headers }), I_OPENED);
    step = 'read';
    for (;;) {
      if (c.dead) return;
      const { done, value } = await c.rd.read();
      if (c.dead) return;
      if (done) break;
      // Not `instanceof`: a chunk may come from another realm (Firefox gives a page script run from a
      // WebDriver eval its own), and anything but bytes is the fetch option's fault.
      if (Object.prototype.toString.call(value) !== '[object Uint8Array]') {
        step = 'response';
        throw new TypeError(PREFIX + "the response's body must be a stream of bytes");
      }
      c.seen = c; // bytes count as life for the stall watchdog (relay.js's `active`), comments included
      f.chunk(link.s.p, value);
    }
    ended = failure(undefined, 'the server ended the stream');
  } catch (e) {
    if (c.dead) return;
    // The user's own code failed (or handed us something fetch could not use): that is reported, as a
    // listener's exception is. A fetch that rejects is the network's failure, told by the error event.
    const network = step === 'fetch' || step === 'read';
    if (!network) report(e);
    const why = String(e?.message ?? e).replace(PREFIX, '');
    ended = failure(undefined, network ? 'the request failed: ' + why : 'the ' + step + ' failed: ' + why);
  }
  inputWith(link, ended, I_FAILED, 1);
}

/**
 * An EventSource attempt waiting for the Promise `p` a URL function returned (control.js's `urlOf`): Rust
 * holds what this returns as the attempt's connection and drops it (calling it, see `disarm`) if the
 * attempt ends first. Settled in time, the URL goes in its element 0 and Rust is told (`I_URL`); a
 * rejection or a URL that cannot be used is reported, and the attempt fails.
 */
export function later(link, p, id) {
  const w = () => (w.dead = true);
  p.then((u) => {
    if (w.dead) return;
    w[0] = finish(link, u, id);
    link.s.input(I_URL);
  }).catch((e) => {
    if (w.dead) return;
    report(e);
    link.s.input(I_FAILED, 1);
  });
  return w;
}

/**
 * `e` with an own `data` and `origin` (see relay.js's Retargeted for the class-field trick). In V8 a
 * MessageEvent given `data` in its init costs about 1.5 µs more, and `origin` about 3 µs more (the `any` is
 * wrapped, the USVString converted, for every event: `npm run bench:fetch`), where class fields cost next to
 * nothing; other engines take the init's (SpiderMonkey pays for any own property of a DOM object). The own
 * properties read the same as the event's getters; unlike them they are writable.
 */
function own(d, o, e) {
  data = d;
  origin = o;
  const r = new Fields(e);
  data = null; // so that the module holds no event's data
  return r;
}
let data = null, origin = '';
class Fields extends Given {
  data = data;
  origin = origin;
}

/** Called by Rust when it drops the connection: nothing of it acts later. */
export const stop = guard(function stop(c) {
  c.dead = true;
  c.ac.abort();
  const rd = c.rd;
  if (rd) rd.cancel().catch(() => {});
  if (c.link.c === c) c.link.c = null;
});

/**
 * A chunk's events, from Rust: fields ended by CR, three an event (type, empty for `message`; data; the
 * last event id, or U+0000 for the previous event's). Each is a MessageEvent for the listeners.
 */
export const events = guard(function events(c, text) {
  const link = c.link, f = text.split('\r');
  for (let i = 0; i + 2 < f.length; i += 3) {
    if (c.dead) return; // a listener closed the stream
    const type = f[i] || 'message', id = f[i + 2];
    if (id !== '\0') c.id = id;
    const s = link.t.get(type);
    const data = f[i + 1], lastEventId = c.id;
    const e = FIELDS ? own(data, c.origin, new MessageEvent(type, { lastEventId })) : new MessageEvent(type, { data, lastEventId, origin: c.origin });
    arrived(c, type, e, s ? s.l : [], type === link.hint);
  }
});
