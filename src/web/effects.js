// The control path: what Rust calls to act on the page and what feeds it back. The URL of each attempt (with
// the last event id in the query), timers, page listeners (visibility, the back-forward cache, the network),
// the probe, and reading a server's hints (`retry` data, Retry-After) as numbers for Rust.
//
// It may not decide anything: Rust says when; this does, and tells the shell what happened. Every function
// Rust calls is guarded or declared `catch` there, so no exception unwinds through wasm. It imports only
// boundary.js and errors.js.

import { I_WAKE, I_HIDDEN, I_RESTORED, I_ONLINE, I_OFFLINE, I_PROBED } from './boundary.js';
import { fail, guard, PREFIX } from './errors.js';

/** Browsers refuse a URL of about 2 MB (Chromium); longer ones are refused here. */
const MAX_URL = 1 << 21;

/**
 * What the user gave for the next attempt's URL: the URL, or what the URL function returns (called once an
 * attempt; the constructor asked it for the first, see `firstUrl` in client.js). Throws what it throws.
 */
export function askUrl(record) {
  const first = record.firstUrl;
  record.firstUrl = undefined;
  if (first !== undefined) return first;
  return typeof record.url === 'function' ? record.url() : record.url;
}

/**
 * The URL of the next EventSource attempt, carrying `id` (the last event id, when Rust decides this attempt
 * resumes with it) in the `lastEventIdParam` parameter. Throws (Rust catches it) what a URL function
 * throws, or a RangeError for a URL no browser would request. A URL function that returns a Promise gets,
 * with the fetch entry's EventSource transport, the attempt's wait instead (its `waitForUrl`; the fetch
 * transport awaits it itself); the main entry's EventSource transport refuses it, with a clear error rather than a request to '/[object Promise]'.
 */
export function urlOf(record, id) {
  const u = askUrl(record);
  if (typeof u?.then !== 'function') return finish(record, u, id);
  if (!record.transport.waitForUrl) fail('the url function returned a Promise (awaited with managed-eventsource/fetch)');
  return record.transport.waitForUrl(record, u, id);
}

/** `u`, a string or what a URL function gave, as the URL of an attempt that carries `id` (see urlOf). */
export function finish(record, u, id) {
  if (u == null) fail('the url function must return a string or a URL');
  u = `${u}`;
  if (id !== undefined) u = withParam(u, record.lastEventIdParam, id);
  if (u.length > MAX_URL) throw new RangeError(`${PREFIX}the url is ${u.length} characters long; browsers refuse more than ${MAX_URL}`);
  return u;
}

/**
 * Why the URL `href` (resolved) can never be fetched, or '' when it may be: a request goes out only for
 * http: and https:, and data: and blob: are answered locally; every engine fails EventSource and fetch at
 * once for any other scheme (mailto:, ftp:, about:, javascript:, file:...).
 */
export function unusable(href) {
  const scheme = String(href).slice(0, String(href).indexOf(':') + 1).toLowerCase();
  return /^(https?|data|blob):$/.test(scheme) ? '' : `${href} can never be fetched: ${scheme} is not http:, https:, data: or blob:`;
}

/**
 * Why the URL `href`, whose attempt failed before it opened, will fail every time, or '' when it may not:
 * a data: or blob: URL answers the same every time (Firefox and WebKit fail an EventSource on a data: URL,
 * Firefox on a blob: one), as does a URL that can never be fetched.
 */
export function neverOpens(href) {
  const local = /^(data|blob):/i.exec(href);
  return local ? `a ${local[1].toLowerCase()}: URL that did not open answers the same every time` : unusable(href);
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
export const probe = guard((record, id) => {
  const ac = new AbortController();
  let done = false;
  const stop = () => {
    done = true;
    c.clearTimeout(timer);
    ac.abort();
  };
  const answer = (status, retryAfter) => done || (stop(), record.shell.input(I_PROBED, id, status, retryAfterMs(retryAfter)));
  const c = clock;
  const timer = c.setTimeout(() => answer(0), PROBE_TIMEOUT);
  fetch(record.probeUrl ?? record.currentUrl, {
    credentials: record.withCredentials ? 'include' : 'same-origin',
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

/** The page's own time and chance. */
const pageClock = {
  now: () => performance.now(),
  random: () => Math.random() * 2 ** 53,
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (t) => clearTimeout(t),
};
/** Where every client's time and chance come from: every timer a client arms, its clock, its jitter's seed.
 * The page's, unless the testing entry put a virtual clock in its place (testing.js). */
let clock = pageClock;
/** The clock in place now. */
export const clockInPlace = () => clock;
/** Puts `c` in place of the clock (null: the page's again). */
export const useClock = (c) => void (clock = c ?? pageClock);

/** The machine's clock. */
export const now = guard(() => clock.now());
/** A seed for a client's jitter: a random whole number below 2^53. */
export const random = guard(() => clock.random());

/** Arms a timer for Rust: after `ms`, `input(what)`. Returns what `disarm` takes: the clock's timer, held
 * with the clock that made it (a test may put its clock back while a client still waits). */
export const arm = guard((record, ms, what) => {
  const c = clock;
  return { clock: c, timer: c.setTimeout(() => record.shell.input(what), ms) };
});
/** Cancels a timer `arm` made, or stops a probe (a function). */
export const disarm = guard((x) => (typeof x === 'function' ? x() : x?.clock.clearTimeout(x.timer)));

/**
 * Listens to the page for Rust: the back-forward cache (`pageshow` from it, always: a restored page's
 * connection is gone), visibility and resume (`visible`: visible, hidden; a page hidden already says so
 * once Rust has let go of the shell), and the network (`online`).
 */
export const watch = guard(function watch(record, visible, online) {
  const fs = [];
  const g = globalThis, d = g.document;
  const listen = (target, type, f) => {
    if (typeof target?.addEventListener !== 'function') return;
    target.addEventListener(type, f);
    fs.push([target, type, f]);
  };
  listen(g, 'pageshow', (e) => e.persisted && record.shell.input(I_RESTORED));
  if (visible) {
    // A shared stream is hidden only once every page that shares it is (share.js): this page leaving the
    // view while another shows the stream changes nothing.
    const hidden = () => (record.share ? record.share.hidden() : d?.visibilityState === 'hidden');
    const seen = () => {
      if (hidden()) record.shell.input(I_HIDDEN);
      else if (d.visibilityState !== 'hidden') record.shell.input(I_WAKE);
    };
    listen(d, 'visibilitychange', seen);
    listen(d, 'resume', () => record.shell.input(I_WAKE));
    if (hidden()) queueMicrotask(seen);
  }
  if (online) {
    listen(g, 'online', () => record.shell.input(I_ONLINE));
    listen(g, 'offline', () => record.shell.input(I_OFFLINE));
  }
  return fs;
});

export const unwatch = guard(function unwatch(fs) {
  for (const [target, type, f] of fs) target.removeEventListener(type, f);
});
