// The testing entry (managed-eventsource/testing): what a team needs to test its own app's behaviour through
// outages in the test runner it already uses, with no server and no waiting.
//
// - createVirtualClock(): every client's timers, clock and jitter seeds run on it (effects.js's useClock)
//   from when it is made until uninstall(); time moves only when the test moves it, and the same seed draws
//   the same delays every run.
// - scriptServer(): a server scripted attempt by attempt (open, send events with ids, drop, answer a status
//   with Retry-After, stall, end, refuse), served in-process as the `fetch` option of the fetch transport.
//   Its `wait(ms)` steps wait on the virtual clock. Every request is recorded.
//
// What must stay true: a script step never runs after the client let go of its request (the stream is
// errored with an AbortError and the rest is skipped), and nothing here keeps a timer or a port open
// between a test's steps.

import { clockInPlace, useClock } from './effects.js';
import { instantiated, prepare } from './loader.js';

const PREFIX = 'managed-eventsource/testing: ';

// Captured when the module loads: a test runner's fake timers, installed later, must not stop settle().
const realImmediate = typeof setImmediate === 'function' ? setImmediate : null;
const RealChannel = typeof MessageChannel === 'function' ? MessageChannel : null;
const realTimeout = setTimeout;

/** One turn of the real event loop: what the last timer set going (a fetch, a read, a listener) runs on. */
function turn() {
  if (realImmediate) return new Promise((resolve) => realImmediate(resolve));
  if (RealChannel) {
    return new Promise((resolve) => {
      const channel = new RealChannel();
      channel.port1.onmessage = () => (channel.port1.close(), resolve());
      channel.port2.postMessage(null);
    });
  }
  return new Promise((resolve) => realTimeout(resolve, 0));
}

/** Waits `ms` on the clock in place; `cancel()` clears its timer (the promise then never settles). */
function clockWait(ms) {
  const clock = clockInPlace();
  let timer;
  const promise = new Promise((resolve) => (timer = clock.setTimeout(resolve, ms)));
  return { promise, cancel: () => clock.clearTimeout(timer) };
}

/** The virtual clocks installed, oldest first: the newest is in place. */
const installedClocks = [];

/** Turns of the real event loop settle() lets run: a reconnect's fetch, its response, the first reads and
 * the listeners they call each take one or two. */
const SETTLE_TURNS = 10;

const describe = (v) => (v === null ? 'null' : typeof v === 'string' ? JSON.stringify(v) : typeof v);

/** A whole number of milliseconds from 0 to 2^31 - 1 (what a timer takes), or a RangeError naming `what`. */
function duration(what, ms) {
  if (typeof ms !== 'number') throw new TypeError(PREFIX + what + ' must be a number of milliseconds, not ' + describe(ms));
  if (!(ms >= 0 && ms <= 2 ** 31 - 1)) throw new RangeError(PREFIX + what + ' must be from 0 to 2147483647 ms, not ' + ms);
  return Math.floor(ms);
}

/**
 * A virtual clock, put in place of the page's at once: every client's timers (backoff waits, the stall
 * watchdog, probes), its clock and its jitter's seed come from it until `uninstall()`. Options: `seed`
 * (a whole number, default 1) for the jitter. Time starts at 0 and moves only by `advance`, `next` and
 * `runUntil`, each of which lets what a timer set going (a fetch, its response, the listeners) run before
 * it resolves.
 */
export function createVirtualClock(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(PREFIX + 'createVirtualClock takes an options object, not ' + describe(options));
  const { seed = 1 } = options;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) throw new TypeError(PREFIX + 'option seed must be a whole number, not ' + describe(seed));
  let time = 0;
  let order = 0;
  /** Armed timers: id -> { at, run, order }. */
  const timers = new Map();
  // mulberry32 (two draws make one number below 2^53): a short, well-mixed generator; the same seed draws
  // the same seeds for every client, in the order they are made.
  let state = seed >>> 0 ^ Math.floor(seed / 2 ** 32) >>> 0;
  const draw = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const hooks = {
    now: () => time,
    random: () => (draw() >>> 11) * 2 ** 32 + draw(),
    setTimeout(run, ms) {
      const id = ++order;
      timers.set(id, { at: time + Math.max(0, Math.floor(Number(ms) || 0)), run, order: id });
      return id;
    },
    clearTimeout: (id) => void timers.delete(id),
  };
  // Clocks made while another is in place stack on it; each one's uninstall takes it out wherever it is, and
  // the newest left (else the page's) is in place.
  installedClocks.push(hooks);
  useClock(hooks);
  let installed = true;
  const inPlace = () => {
    if (!installed) throw new Error(PREFIX + 'this clock was uninstalled: its timers never run');
  };

  const earliest = () => {
    let first = null;
    for (const t of timers.values()) if (first === null || t.at < first.at || (t.at === first.at && t.order < first.order)) first = t;
    return first;
  };
  const fire = (t) => {
    timers.delete(t.order);
    time = Math.max(time, t.at);
    t.run();
  };
  const settle = async () => {
    // A client made before the module is compiled starts once it is: that takes real time, not turns.
    if (!instantiated()) await prepare().catch(() => {}); // what fails there, the client reports itself
    for (let i = 0; i < SETTLE_TURNS; i++) await turn();
  };

  const clock = {
    /** Milliseconds since the clock was made, as the clients read it. */
    get now() {
      return time;
    },
    /** Timers armed and not yet run or cancelled. */
    get pending() {
      return timers.size;
    },
    /** Lets what is under way run (fetches, reads, listeners), moving no time. */
    settle,
    /** Runs the next timer (moving time to it) and what it sets going. False when no timer is armed. */
    async next() {
      inPlace();
      await settle();
      const t = earliest();
      if (t === null) return false;
      fire(t);
      await settle();
      return true;
    },
    /** Moves time on by `ms`, running each timer that falls due on the way, in order, and what it sets going. */
    async advance(ms) {
      inPlace();
      const until = time + duration('advance', ms);
      for (;;) {
        await settle();
        const t = earliest();
        if (t === null || t.at > until) break;
        fire(t);
      }
      time = until;
      await settle();
    },
    /**
     * Runs timers in order until `predicate()` is true; resolves with the time it took. Throws a RangeError
     * after `maxTimers` timers (default 1000: a client that never gets there does not hang the test) and an
     * Error when no timer is left to run.
     */
    async runUntil(predicate, options = {}) {
      if (typeof predicate !== 'function') throw new TypeError(PREFIX + 'runUntil takes a function, not ' + describe(predicate));
      if (options === null || typeof options !== 'object') throw new TypeError(PREFIX + 'runUntil takes an options object, not ' + describe(options));
      const { maxTimers = 1000 } = options;
      if (typeof maxTimers !== 'number') throw new TypeError(PREFIX + 'option maxTimers must be a number, not ' + describe(maxTimers));
      if (!Number.isInteger(maxTimers) || maxTimers < 0) throw new RangeError(PREFIX + 'option maxTimers must be a whole number from 0, not ' + maxTimers);
      inPlace();
      const from = time;
      for (let ran = 0; ; ran++) {
        await settle();
        if (predicate()) return time - from;
        if (ran === maxTimers) throw new RangeError(PREFIX + 'runUntil ran ' + maxTimers + ' timers (maxTimers) and the condition is still false, at ' + time + ' ms');
        const t = earliest();
        if (t === null) throw new Error(PREFIX + 'runUntil: no timer is armed and the condition is still false, at ' + time + ' ms');
        fire(t);
      }
    },
    /** Takes this clock out: the newest clock left (else the page's) is in place. Its timers never run. */
    uninstall() {
      if (!installed) return;
      installed = false;
      installedClocks.splice(installedClocks.indexOf(hooks), 1);
      useClock(installedClocks.at(-1) ?? null);
    },
  };
  if (typeof Symbol.dispose === 'symbol') clock[Symbol.dispose] = clock.uninstall;
  return clock;
}

/** The bytes of one event: `event` a string (its data) or { id, event, data, retry }. */
function frame(event) {
  if (typeof event === 'string') event = { data: event };
  if (event === null || typeof event !== 'object') throw new TypeError(PREFIX + 'send takes a string (the data) or { id, event, data, retry }, not ' + describe(event));
  const { id, event: type, data = '', retry } = event;
  let text = '';
  for (const [name, value] of [['id', id], ['event', type]]) {
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new TypeError(PREFIX + 'an event\'s ' + name + ' must be a string, not ' + describe(value));
    if (/[\r\n]/.test(value)) throw new TypeError(PREFIX + 'an event\'s ' + name + ' cannot hold a line break: ' + JSON.stringify(value));
    text += name + ': ' + value + '\n';
  }
  if (retry !== undefined) text += 'retry: ' + duration('retry', retry) + '\n';
  if (typeof data !== 'string') throw new TypeError(PREFIX + 'an event\'s data must be a string, not ' + describe(data));
  for (const line of data.split(/\r\n|\r|\n/)) text += 'data: ' + line + '\n';
  return text + '\n';
}

/** The steps of one attempt, as the builder `a` of `attempt(a => ...)` records them. */
class AttemptScript {
  steps = [];
  /** What the response is: 'open' (a stream), a status, or 'fail' (no response). Set by the first step. */
  answer = null;

  #answered(what) {
    if (this.answer !== null) throw new TypeError(PREFIX + what + ' must be an attempt\'s first step (this attempt already ' + (this.answer === 'fail' ? 'fails' : this.answer === 'open' ? 'opens' : 'answers ' + this.answer.status) + ')');
  }
  #streaming(what) {
    if (this.answer !== 'open') throw new TypeError(PREFIX + what + ' comes after open()');
    if (this.steps.at(-1)?.last) throw new TypeError(PREFIX + what + ' comes after ' + this.steps.at(-1).kind + '(), which ends the attempt');
  }

  /** Answers 200 with an event stream (and `headers`). */
  open(options = {}) {
    const { headers = {} } = options ?? {};
    this.#answered('open()');
    this.answer = 'open';
    this.headers = headers;
    return this;
  }
  /** Answers `status` (with `retryAfter`, seconds or an HTTP date, as Retry-After; `headers`; `body`) and ends. */
  status(status, options = {}) {
    const { retryAfter, headers = {}, body = null } = options ?? {};
    this.#answered('status()');
    if (!Number.isInteger(status) || status < 200 || status > 599) throw new RangeError(PREFIX + 'status must be a whole number from 200 to 599, not ' + String(status));
    const h = { ...headers };
    if (retryAfter !== undefined) h['Retry-After'] = String(retryAfter);
    this.answer = { status, headers: h, body };
    return this;
  }
  /** Answers 204 No Content: the server says there is nothing more (the client closes). */
  noContent() {
    return this.status(204);
  }
  /** The request fails with no response (a refused connection, a network down): fetch rejects. */
  fail() {
    this.#answered('fail()');
    this.answer = 'fail';
    return this;
  }
  /** Sends one event: a string (its data) or { id, event, data, retry }. */
  send(event) {
    this.#streaming('send()');
    this.steps.push({ kind: 'send', text: frame(event), event: typeof event === 'string' ? { data: event } : event });
    return this;
  }
  /** Sends a comment line (what a server's keep-alive sends; no event). */
  comment(text = '') {
    this.#streaming('comment()');
    if (typeof text !== 'string' || /[\r\n]/.test(text)) throw new TypeError(PREFIX + 'comment takes a string of one line, not ' + describe(text));
    this.steps.push({ kind: 'send', text: ':' + text + '\n\n' });
    return this;
  }
  /** Sends a `retry:` field: the server's reconnection time. */
  retry(ms) {
    this.#streaming('retry()');
    this.steps.push({ kind: 'send', text: 'retry: ' + duration('retry', ms) + '\n\n' });
    return this;
  }
  /** Waits `ms` on the virtual clock (the clock in place when the step runs) before the next step. */
  wait(ms) {
    this.#streaming('wait()');
    this.steps.push({ kind: 'wait', ms: duration('wait', ms) });
    return this;
  }
  /** The connection breaks mid-stream (the body errors, as a network failure does). */
  drop() {
    this.#streaming('drop()');
    this.steps.push({ kind: 'drop', last: true });
    return this;
  }
  /** The server ends the stream (the body closes normally). */
  end() {
    this.#streaming('end()');
    this.steps.push({ kind: 'end', last: true });
    return this;
  }
  /** The stream stays open and sends nothing more (what a script that just stops does too). */
  stall() {
    this.#streaming('stall()');
    this.steps.push({ kind: 'stall', last: true });
    return this;
  }
}

/** Reads `headers` (a Headers, pairs or an object) as a plain object with lower-case names. */
const headersOf = (headers) => Object.fromEntries([...new Headers(headers ?? {})]);

/** `url` resolved against the page's address, as fetch resolves it (as it is where there is no page). */
function absolute(url) {
  try {
    return globalThis.location?.href ? new URL(url, globalThis.location.href).href : url;
  } catch {
    return url;
  }
}

/** An AbortError, as fetch rejects and errors with. */
const abortError = () => (typeof DOMException === 'function' ? new DOMException('The operation was aborted.', 'AbortError') : Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' }));

/**
 * A server scripted attempt by attempt: `attempt(a => a.open().send({ id: '1', data: 'x' }).drop())`
 * adds the script of the next attempt (chainable). `fetch` serves them in order, in-process, as the fetch
 * transport's `fetch` option; an attempt past the script fails (no response) and is recorded as
 * `unscripted`. `requests` records each: { attempt, url, method, headers, lastEventId, unscripted, aborted }.
 */
export function scriptServer() {
  const scripts = [];
  const requests = [];
  const encoder = new TextEncoder();

  /** Records a request; its script, or undefined past the script (the request is marked unscripted). The
   * resume id is the Last-Event-ID header, else the URL's lastEventId parameter (where ours puts it when it
   * cannot send the header: the EventSource transport). */
  function arrive(url, method, headers) {
    const request = { attempt: requests.length + 1, url: absolute(String(url)), method, headers, lastEventId: null, unscripted: false, aborted: false };
    let param = null;
    try {
      param = new URL(request.url).searchParams.get('lastEventId');
    } catch {}
    request.lastEventId = headers['last-event-id'] ?? param;
    requests.push(request);
    const script = scripts[request.attempt - 1];
    if (script === undefined) request.unscripted = true;
    return { request, script };
  }

  async function serve(url, init = {}) {
    const { request, script } = arrive(url, init.method ?? 'GET', headersOf(init.headers));
    const signal = init.signal ?? null;
    if (script === undefined) throw new TypeError(PREFIX + 'attempt ' + request.attempt + ' has no script (the server has ' + scripts.length + '): it fails as a network error would');
    await null; // a response comes later than its request, as over a network
    if (signal?.aborted) {
      request.aborted = true;
      throw abortError();
    }
    if (script.answer === 'fail') throw new TypeError(PREFIX + 'attempt ' + request.attempt + ' fails (scripted): no response');
    if (script.answer !== 'open') {
      const { status, headers, body } = script.answer;
      return new Response(status === 204 || status === 205 || status === 304 ? null : body, { status, headers });
    }
    // Steps run as the client reads (pull, with no queue): each send is read before the next step runs, so
    // a drop or an end comes after the events before it have been read, as over a network.
    let done = false;
    let next = 0;
    let controller;
    /** A wait step's timer while it runs: a client that goes clears it. */
    let waiting = null;
    const body = new ReadableStream(
      {
        start: (c) => void (controller = c),
        async pull(c) {
          while (!done && next < script.steps.length) {
            const step = script.steps[next++];
            if (step.kind === 'send') return c.enqueue(encoder.encode(step.text));
            if (step.kind === 'wait') {
              waiting = clockWait(step.ms);
              await waiting.promise;
              waiting = null;
            } else if (step.kind === 'drop') {
              done = true;
              return c.error(new TypeError(PREFIX + 'the connection dropped (scripted)'));
            } else if (step.kind === 'end') {
              done = true;
              return c.close();
            } else break; // stall
          }
          // A stall, or a script that stops: the stream stays open, sending nothing, until the client goes.
          return new Promise(() => {});
        },
        cancel: () => {
          done = true;
          request.aborted = true;
          waiting?.cancel();
        },
      },
      { highWaterMark: 0 },
    );
    signal?.addEventListener(
      'abort',
      () => {
        if (done) return;
        done = true;
        request.aborted = true;
        waiting?.cancel();
        controller.error(abortError());
      },
      { once: true },
    );
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', ...script.headers } });
  }

  /**
   * A stand-in for EventSource that plays the script (for the EventSource transport, where the runtime has
   * none, as jsdom and Node have none): install it as `globalThis.EventSource`. As a browser's: `open`, then
   * the events (with `lastEventId` kept across them), a status or a 204 fails it (readyState CLOSED, then
   * `error`), a drop, an end or no response is an `error` with readyState CONNECTING (where a browser would
   * reconnect itself; ours closes it first); comments and `retry:` are not seen, as a page does not see them.
   */
  class ScriptedEventSource extends EventTarget {
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSED = 2;
    onopen = null;
    onmessage = null;
    onerror = null;
    #state = 0;
    #url;
    #withCredentials;
    #request;
    /** A wait step's timer while it runs: close() clears it. */
    #waiting = null;

    constructor(url, init = {}) {
      super();
      const { request, script } = arrive(url, 'GET', { accept: 'text/event-stream' });
      this.#url = request.url;
      this.#withCredentials = Boolean(init?.withCredentials);
      this.#request = request;
      this.#play(script);
    }
    get url() {
      return this.#url;
    }
    get withCredentials() {
      return this.#withCredentials;
    }
    get readyState() {
      return this.#state;
    }
    close() {
      if (this.#state === 2) return;
      this.#state = 2;
      this.#request.aborted = true;
      this.#waiting?.cancel();
    }
    /** Dispatches `e`, then the `on` handler of its type (for code that uses them). */
    #fire(e) {
      this.dispatchEvent(e);
      const handler = this['on' + e.type];
      if ((e.type === 'open' || e.type === 'message' || e.type === 'error') && typeof handler === 'function') handler.call(this, e);
    }
    async #play(script) {
      await null; // as a browser's: nothing is dispatched before the constructor's caller goes on
      const live = () => this.#state !== 2;
      if (!live()) return;
      if (script?.answer !== 'open') {
        // No response (a reconnect, for a browser), or a response that fails the connection for good.
        if (script !== undefined && script.answer !== 'fail') this.#state = 2;
        return this.#fire(new Event('error'));
      }
      this.#state = 1;
      this.#fire(new Event('open'));
      let lastEventId = '';
      const origin = (() => {
        try {
          return new URL(this.#url).origin;
        } catch {
          return '';
        }
      })();
      for (const step of script.steps) {
        if (!live()) return;
        if (step.kind === 'send' && step.event) {
          const { id, event: type, data = '' } = step.event;
          if (id !== undefined && !id.includes('\0')) lastEventId = id;
          this.#fire(new MessageEvent(type || 'message', { data: data.replace(/\r\n|\r/g, '\n'), lastEventId, origin }));
          await null;
        } else if (step.kind === 'wait') {
          this.#waiting = clockWait(step.ms);
          await this.#waiting.promise;
          this.#waiting = null;
        } else if (step.kind === 'drop' || step.kind === 'end') {
          this.#state = 0;
          return this.#fire(new Event('error'));
        } else if (step.kind === 'stall') return;
      }
    }
  }

  async function handle(req, res) {
    const ac = new AbortController();
    res.on?.('close', () => ac.abort());
    const headers = {};
    for (const [name, value] of Object.entries(req.headers ?? {})) if (typeof value === 'string') headers[name] = value;
    let response;
    try {
      response = await serve('http://' + (headers.host ?? '127.0.0.1') + req.url, { method: req.method, headers, signal: ac.signal });
    } catch {
      return res.destroy(); // no response: the connection is cut, as a network failure
    }
    // A cut is a closed socket, not one kept for the client's next request (which some engines would resend).
    res.shouldKeepAlive = false;
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    res.flushHeaders?.();
    // Each chunk is written before the next step runs; a drop cuts the connection once what came before it
    // has gone out (a destroy discards what the socket still holds).
    let written = Promise.resolve();
    try {
      for await (const chunk of response.body) written = new Promise((resolve) => res.write(chunk, resolve));
      res.end();
    } catch {
      await written;
      res.destroy(); // a drop, or the client went
    }
  }

  const server = {
    /** Adds the script of the next attempt: `build(a)` calls a's steps. */
    attempt(build) {
      if (typeof build !== 'function') throw new TypeError(PREFIX + 'attempt takes a function that scripts the attempt, not ' + describe(build));
      const script = new AttemptScript();
      build(script);
      if (script.answer === null) throw new TypeError(PREFIX + 'an attempt\'s script must start with open(), status(), noContent() or fail()');
      scripts.push(script);
      return server;
    },
    /** The fetch transport's `fetch` option. */
    fetch: (url, init) => serve(url, init),
    /** The next attempt's Response for a Request: what a request handler answers with (MSW's `http.get(url,
     * ({ request }) => server.respond(request))`, a service worker's, a framework's). */
    respond: (request) => serve(request.url, { method: request.method, headers: request.headers, signal: request.signal }),
    /**
     * The next attempt over real HTTP, for a node:http server (or Express): `http.createServer(server.handle)`
     * on loopback, for a browser test. The response's body is piped as the script runs; a client that goes
     * aborts the script's request. Its `wait` steps wait on the clock in place in this process.
     */
    handle: (req, res) => void handle(req, res),
    /** A stand-in for EventSource that plays the script: `globalThis.EventSource = server.EventSource`. */
    EventSource: ScriptedEventSource,
    /** Every request, in order. */
    requests,
    /** Attempts scripted and not yet asked for. */
    get left() {
      return Math.max(0, scripts.length - requests.length);
    },
  };
  return server;
}
