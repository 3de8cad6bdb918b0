// The fetch transport (only the package's fetch entry has it).
//
// It holds no policy either. Rust decides when an attempt starts and ends, what a status means and how long
// to wait, and what a `retry:` field changes. What lives here is what must be JavaScript: the user's headers,
// body and URL functions awaited before each attempt, the `fetch` call, the status and type of the response
// read for Rust, the reader, and the relay that turns the events its parser (parse.js) reads into
// `MessageEvent`s for the listeners, through the same `arrived` as the EventSource transport's events.
//
// Nothing here may act once a connection is stopped: every step after an `await` checks `dead`, which
// `stop` sets (Rust calls it when it drops the connection), and `stop` aborts the fetch and cancels the
// reader. It imports parse.js, eventsource.js, connection.js, effects.js, events.js, errors.js and boundary.js.

import { I_OPENED, I_FAILED, I_REFUSED, I_RETRY_FIELD, I_URL, I_UNUSABLE } from './boundary.js';
import { arrived, connectionOf, inputWith } from './connection.js';
import { askUrl, finish, neverOpens, retryAfterMs, unusable } from './effects.js';
import { fail, guard, report, PREFIX } from './errors.js';
import { deliver, FIELDS, Given } from './events.js';
import { eventSourceTransport } from './eventsource.js';
import { EventStreamParser } from './parse.js';

/** The methods `fetch` refuses. */
const FORBIDDEN = /^(connect|trace|track)$/i;
/** A method is an HTTP token. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
/** The methods `fetch` writes in capitals, whatever case they are given in. */
const NORMAL = /^(delete|get|head|options|post|put)$/i;

/**
 * Reads the fetch transport's options into `record.fetchOptions` (api.js has read the others): `headers`,
 * `method`, `body`, `fetch`. Throws a TypeError naming the option for what `fetch` would refuse.
 */
function configure(record, o) {
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
  // idUnsent: whether the client said once that this engine cannot send its id as a header; landed: the
  // origin of the URL the last open stream was asked at, and the origin it was answered from (after
  // redirects), for the cross-origin rule of requestInit.
  record.fetchOptions = { headers, method, body, fetch: f, idUnsent: false, landed: null };
}

/** Headers as a plain object: a Headers or a list of pairs as fetch reads them, an object copied. */
const plain = (h) => (h == null ? {} : typeof h[Symbol.iterator] === 'function' ? Object.fromEntries(new Headers(h)) : { ...h });

/**
 * Whether this engine sends a header's value as the UTF-8 of its characters rather than one byte a
 * character (U+0000 to U+00FF), as WebKit does (WebKitGTK 2.50, measured at the server: 'é' leaves as
 * C3 A9, where Chromium and Firefox send E9).
 */
const UTF8_HEADERS = typeof navigator === 'object' && /AppleWebKit/.test(navigator.userAgent) && !/Chrom|Firefox|Edg/.test(navigator.userAgent);

/**
 * The Last-Event-ID header's value for `id`: a string that `fetch` sends as the id's UTF-8 bytes, the
 * bytes an EventSource sends. An ASCII id is itself; elsewhere each UTF-8 byte is a character (`fetch`
 * refuses one past U+00FF and sends the others as one byte each), except where the engine encodes header
 * values as UTF-8 itself (UTF8_HEADERS): then no string carries an id outside ASCII, and this is undefined.
 */
function idHeader(id) {
  if (/^[\0-\x7f]*$/.test(id)) return id;
  if (UTF8_HEADERS) return undefined;
  let bytes = '';
  for (const b of new TextEncoder().encode(id)) bytes += String.fromCharCode(b);
  return bytes;
}

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

/** A URL as EventSource parses it, against the document's: one that does not parse throws a TypeError. */
const resolve = (u) => new URL(u, globalThis.document?.baseURI ?? globalThis.location?.href).href;

/** The URL of an attempt: the user's (or its function's) as a string, with `id` in `lastEventIdParam`. */
function target(record, u, id) {
  u = finish(record, u, id);
  return [u, resolve(u)];
}

/** The transport, as client.js drives it (see eventsource.js for the members every transport has). */
export const fetchTransport = {
  kind: 2,
  stallAdvice: 'raise it',
  configure,
  resolve,
  /** Every type is relayed already: the parser hands over every event. */
  relay() {},
  /** A failure: the `error` event an attempt made, or one for a failure with none (a stall, a timeout). */
  failed: (record) => deliver(record, 'error', record.event ?? new Event('error')),
  flush() {},
  /** A URL function may return a Promise: the transport's own attempt awaits it (see open). */
  awaitsUrl: true,
  open,
  detach: stop,
};

/** The EventSource transport of the fetch entry, whose URL function may return a Promise too: the shell's
 * attempt waits for it (waitForUrl). */
export const awaitingEventSource = { ...eventSourceTransport, awaitsUrl: true, waitForUrl };

/**
 * Starts an attempt for Rust and returns its connection record. `id`: the id the URL carries (undefined for
 * none); `last`: the Last-Event-ID header's (empty for none). What a URL function returns later, and
 * everything after, fails the attempt; what it throws now, Rust reports as a failed attempt.
 */
function open(record, id, last) {
  const connection = { ...connectionOf(record, null), abort: new AbortController(), dead: false, reader: null, parser: null, id: last ?? '', origin: '', step: 'url', init: null, crossHeader: false, awaitingUrl: false };
  const u = askUrl(record);
  const url = typeof u?.then === 'function' ? null : target(record, u, id);
  if (url) record.currentUrl = url[1];
  else connection.awaitingUrl = true; // trace.js: this attempt's URL is not known yet
  record.connection = connection;
  read(connection, u, url, id);
  return connection;
}

/**
 * An attempt, from its URL to the end of its stream: what fails is told to Rust once, as the attempt's
 * failure, unless the connection was stopped meanwhile. `c.step` names what was under way, for the error.
 */
async function read(c, u, url, id) {
  const record = c.record;
  let ended;
  try {
    // Nothing here runs inside the call that opened the attempt (the shell's start, or its drain).
    await null;
    if (c.dead) return;
    if (!url) {
      url = target(record, await u, id);
      if (c.dead) return;
      record.currentUrl = url[1];
    }
    const never = unusable(url[1]);
    if (never) return inputWith(record, failure(undefined, never), I_UNUSABLE);
    const init = await requestInit(c, url[1], id !== undefined);
    if (c.dead) return;
    // What the fetch option throws (rather than rejects with) is its own code failing, as a headers
    // function's is: `fetch` itself rejects for the network.
    c.step = 'fetch option';
    const pending = record.fetchOptions.fetch(url[0], init);
    c.step = 'fetch';
    const r = await pending;
    if (c.dead) return discard(r);
    c.step = 'response';
    if (!opened(c, r, url[1])) return;
    c.step = 'read';
    if (!(await pump(c))) return;
    ended = failure(undefined, 'the server ended the stream');
  } catch (e) {
    if (c.dead) return;
    // The user's own code failed (or handed us something fetch could not use): that is reported, as a
    // listener's exception is. A fetch that rejects is the network's failure, told by the error event.
    const network = c.step === 'fetch' || c.step === 'read';
    if (!network) report(e);
    const why = String(e?.message ?? e).replace(PREFIX, '');
    ended = failure(undefined, network ? 'the request failed: ' + why : 'the ' + c.step + ' failed: ' + why);
    if (c.step === 'fetch') {
      const never = neverOpens(url[1]) || (c.crossHeader && (await refusesHeader(c, url)));
      if (c.dead) return;
      if (never) return inputWith(record, failure(undefined, never), I_UNUSABLE);
    }
  }
  inputWith(record, ended, I_FAILED, 1);
}

/**
 * After a cross-origin request that carried Last-Event-ID failed before any response: why the server
 * refuses that header (its CORS preflight does not allow it), if the same request without the header is
 * answered; else '' (the network's failure). The check is aborted as soon as its headers arrive, and is
 * a GET only where the attempt was (a HEAD otherwise, so that no body is sent twice).
 */
async function refusesHeader(c, url) {
  const init = c.init, headers = { ...init.headers };
  delete headers['Last-Event-ID'];
  let r;
  try {
    r = await c.record.fetchOptions.fetch(url[0], { ...init, method: init.method === 'GET' ? 'GET' : 'HEAD', body: undefined, headers });
  } catch {
    return '';
  } finally {
    c.abort.abort();
  }
  // The origin that answered: the one the stream moved to, where the URL redirects.
  return `${new URL((typeof r?.url === 'string' && r.url) || url[1]).origin} does not allow the Last-Event-ID header (Access-Control-Allow-Headers), so no resume reaches it; allow it, or set lastEventIdParam`;
}

/**
 * The request's `init` for the URL `href`, with the user's headers and body awaited (steps 'headers' and
 * 'body'). The id this attempt resumes from goes in the Last-Event-ID header, as its UTF-8 bytes (see
 * idHeader), except cross-origin when `inUrl` (lastEventIdParam carries it): a header not on the CORS
 * safelist would need a preflight that a server allowing what EventSource sends refuses. Where no header
 * can carry it and no URL does, that is reported, once a client, and the attempt goes without it.
 */
async function requestInit(c, href, inUrl) {
  const record = c.record, f = record.fetchOptions;
  c.step = 'headers';
  const given = plain(typeof f.headers === 'function' ? await f.headers() : f.headers);
  c.step = 'body';
  const body = typeof f.body === 'function' ? await f.body() : f.body;
  const headers = Object.keys(given).some((k) => k.toLowerCase() === 'accept') ? given : { Accept: 'text/event-stream', ...given };
  // Cross-origin: the URL is, or the stream it gave last time was answered from another origin (it
  // redirects there, and the redirected request needs the preflight too).
  const origin = new URL(href).origin, landed = f.landed?.[0] === origin ? f.landed[1] : origin;
  const cross = typeof location === 'object' && (origin !== location.origin || landed !== location.origin);
  if (c.id !== '' && !(cross && inUrl)) {
    const value = idHeader(c.id);
    if (value !== undefined) {
      headers['Last-Event-ID'] = value;
      c.crossHeader = cross;
    } else if (!inUrl && !f.idUnsent) {
      f.idUnsent = true;
      report(new RangeError(PREFIX + 'this engine cannot send the id ' + JSON.stringify(c.id) + ' (not ASCII) as a Last-Event-ID header; set lastEventIdParam. Reconnecting without it'));
    }
  }
  const init = { method: f.method, headers, cache: 'no-store', credentials: record.withCredentials ? 'include' : 'same-origin', redirect: 'follow', mode: 'cors', signal: c.abort.signal };
  if (body != null) init.body = body;
  return (c.init = init);
}

/**
 * Whether the response `r` (to the URL `href`) is an event stream: then the attempt is open and its reader
 * made; else Rust is told why it was refused (its status and Retry-After), and its body dropped.
 */
function opened(c, r, href) {
  if (!response(r)) throw new TypeError(PREFIX + 'option fetch must return a Response (or a Promise of one)');
  const status = r.status;
  const type = r.headers.get('content-type') ?? '';
  if (status === 200 && /^text\/event-stream[\t ]*(;|$)/i.test(type.trim()) && typeof r.body?.getReader === 'function') {
    c.origin = new URL(r.url || href).origin;
    c.record.fetchOptions.landed = [new URL(href).origin, c.origin];
    c.reader = r.body.getReader();
    c.parser = new EventStreamParser(c.id);
    inputWith(c.record, Object.assign(new Event('open'), { status, headers: r.headers }), I_OPENED);
    return true;
  }
  discard(r);
  const never = neverOpens(href);
  if (never) {
    inputWith(c.record, failure(status, never), I_UNUSABLE);
    return false;
  }
  // A 410 to a resume (resumable streams): the stream will not go on from there, and is not finished either.
  const why = status === 410 && c.id !== '' ? 'the stream was interrupted: the server answered 410 (Gone) to its resume from ' + JSON.stringify(c.id) + ', so what was missed cannot be sent' : status !== 200 ? 'the server answered ' + status : r.body ? 'the response is ' + (type || 'untyped') + ', not text/event-stream' : 'the response has no body to read';
  inputWith(c.record, failure(status, why), I_REFUSED, status === 200 ? 0 : status, retryAfterMs(r.headers.get('retry-after')));
  return false;
}

/** Parses the stream's bytes as they come. True at the stream's end; false once stopped. */
async function pump(c) {
  const sink = sinkOf(c);
  for (;;) {
    if (c.dead) return false;
    const { done, value } = await c.reader.read();
    if (c.dead) return false;
    if (done) return true;
    // Not `instanceof`: a chunk may come from another realm (Firefox gives a page script run from a
    // WebDriver eval its own), and anything but bytes is the fetch option's fault.
    if (Object.prototype.toString.call(value) !== '[object Uint8Array]') {
      c.step = 'response';
      throw new TypeError(PREFIX + "the response's body must be a stream of bytes");
    }
    c.seen = c; // bytes count as life for the stall watchdog (connection.js's `active`), comments included
    c.parser.feed(value, sink);
  }
}

/** What the connection `c`'s parser reads: each event a MessageEvent for the listeners, a `retry:` field
 * Rust's to weigh; it reads no further once a listener has stopped the connection. */
const sinkOf = (c) => ({
  // What fails in handing an event over is reported, not taken for the network's failure.
  event: guard((type, data, lastEventId) => {
    c.id = lastEventId;
    const e = FIELDS ? new Fields(new MessageEvent(type, { lastEventId }), data, c.origin) : new MessageEvent(type, { data, lastEventId, origin: c.origin });
    arrived(c, type, e);
  }),
  retry: (ms) => c.record.shell.input(I_RETRY_FIELD, ms),
  stopped: () => c.dead,
});

/**
 * An attempt waiting for the Promise `p` a URL function returned (effects.js's `urlOf`): Rust holds what
 * this returns as the attempt's connection and drops it (calling it, see `disarm`) if the attempt ends
 * first. Settled in time, the URL goes in its element 0 and Rust is told (`I_URL`); a rejection or a URL
 * that cannot be used is reported, and the attempt fails.
 */
function waitForUrl(record, p, id) {
  const wait = () => (wait.dead = true);
  p.then((u) => {
    if (wait.dead) return;
    wait[0] = finish(record, u, id);
    record.shell.input(I_URL);
  }).catch((e) => {
    if (wait.dead) return;
    report(e);
    record.shell.input(I_FAILED, 1);
  });
  return wait;
}

/**
 * `new Fields(e, data, origin)`: `e` with an own `data` and `origin` (see events.js's Retargeted for the
 * class-field trick). In V8 a MessageEvent given `data` in its init costs about 1.5 µs more, and `origin`
 * about 3 µs more (the `any` is wrapped, the USVString converted, for every event: `npm run bench:fetch`),
 * where class fields cost next to nothing; other engines take the init's (SpiderMonkey pays for any own
 * property of a DOM object). The own properties read the same as the event's getters; unlike them they are
 * writable.
 */
class Fields extends Given {
  data = null;
  origin = '';
  constructor(e, data, origin) {
    super(e);
    this.data = data;
    this.origin = origin;
  }
}

/** When Rust drops the connection: nothing of it acts later. */
function stop(c) {
  c.dead = true;
  c.abort.abort();
  c.reader?.cancel().catch(() => {});
  if (c.record.connection === c) c.record.connection = null;
}
