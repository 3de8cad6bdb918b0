// A small in-page test runner for the suites in this folder. Each suite registers tests with `test`; the
// page runs them one at a time and leaves the results in `window.__results` (and posts them to the
// server), where tests/page/suites.test.mjs picks them up in each browser.

const tests = [];
const figures = [];
/** Errors the page reported (reportError, uncaught), which some tests expect and count. */
export const reported = [];
addEventListener('error', (e) => reported.push(e.error ?? e.message));

/** What the browser's own getter `name` (readyState, url) of an EventSource says, whatever its class. */
const SOURCE = globalThis.EventSource?.prototype;
export const inner = (es, name) => Object.getOwnPropertyDescriptor(SOURCE, name).get.call(es);

/** Registers a test. */
export function test(name, fn, { timeout = 120000 } = {}) {
  tests.push({ name, fn, timeout });
}

/** Records a measured figure, printed by the runner. */
export function figure(name, value) {
  figures.push({ name, value: String(value) });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * How much longer than it names a test waits for a condition: a condition that holds ends the wait at once,
 * so a longer deadline only keeps a busy machine (suites in three engines at once on two cores) from failing
 * a test that passes. No test may use `until` to show that something does not happen.
 */
const SLACK = 4;

/** Polls `cond` (which may be async) every 10 ms for up to `ms` (times SLACK); whether it came true. */
export async function until(ms, cond) {
  ms *= SLACK;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (await cond()) return true;
    await sleep(10);
  }
  return !!(await cond());
}

export class AssertionError extends Error {}

export function ok(cond, message = 'expected true') {
  if (!cond) throw new AssertionError(message);
}

const show = (v) => {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
};

export function eq(actual, expected, message = '') {
  if (show(actual) !== show(expected)) throw new AssertionError(`${message} expected ${show(expected)}, got ${show(actual)}`);
}

/** Calls `fn`, which must throw; returns what it threw. */
export function throws(fn, message = 'expected a throw') {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new AssertionError(message);
}

// ---- the fault-injecting server (tests/server/sse-server.mjs) ------------------------------------------

export const url = (c, extra = '') => `${location.origin}/sse?c=${encodeURIComponent(c)}${extra}`;

/** One step per connection attempt of client `c`, then `then` for every attempt after. */
export async function plan(c, steps, then = 'stream', seed = 1) {
  const q = new URLSearchParams({ c, steps, then, seed: String(seed) });
  await fetch(`/plan?${q}`);
}

/** Every attempt the server saw from client `c`. */
export async function log(c) {
  return (await fetch(`/log?c=${encodeURIComponent(c)}`, { cache: 'no-store' })).json();
}

/** Shows the page as hidden or visible to the package, as the browser does on a tab switch. */
export function visibility(state) {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  Object.defineProperty(document, 'hidden', { value: state !== 'visible', configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
}

/**
 * The chaos run: a client that `open(url)` makes reads client `c`'s chaos plan (seeded with `seed`)
 * until 10,000 numbered events have arrived; each must arrive exactly once and in order, through at least
 * 15 faults. Prints the figure `name`.
 */
export async function chaos(c, seed, name, open) {
  await plan(c, '', 'chaos', seed);
  const es = open(url(c));
  const ids = [];
  es.onmessage = (e) => ids.push(Number(e.lastEventId));
  const t0 = performance.now();
  ok(await until(120000, () => ids.length >= 10000), `${ids.length} events`);
  es.close();
  const seconds = (performance.now() - t0) / 1000;
  const first = ids.slice(0, 10000);
  let lost = 0, repeated = 0, disordered = 0;
  for (let i = 0; i < first.length; i++) {
    if (first[i] !== i + 1) {
      if (first[i] > i + 1) lost++;
      else if (first.indexOf(first[i]) !== i) repeated++;
      else disordered++;
      break;
    }
  }
  const { chaos: faults, attempts } = await log(c);
  figure(name, `${first.length} events in ${seconds.toFixed(1)} s over ${attempts.length} connections: ${faults.kills} cut mid-stream, ${faults.stalls} stalled, ${faults.refusals} answered 503, ${faults.drops} dropped; lost ${lost}, repeated ${repeated}, out of order ${disordered}`);
  eq([lost, repeated, disordered], [0, 0, 0]);
  ok(faults.kills + faults.stalls + faults.refusals + faults.drops >= 15, 'not enough chaos');
}

/** Records what a stream does: statuses, events, retries. */
export function watch(es) {
  const seen = { statuses: [], events: [], retries: [], errors: 0, opens: 0 };
  es.onstatus = (s) => seen.statuses.push(s);
  es.onretry = (r) => seen.retries.push(r);
  es.addEventListener('open', () => seen.opens++);
  es.addEventListener('error', (e) => (e.data === undefined ? seen.errors++ : seen.events.push(['error', e.data, e.lastEventId])));
  es.addEventListener('message', (e) => seen.events.push(['message', e.data, e.lastEventId]));
  return seen;
}

export async function run(suite) {
  const results = [];
  try {
    await import(`./${suite}.mjs`);
  } catch (e) {
    results.push({ name: `load ${suite}`, ok: false, error: String(e?.stack ?? e) });
  }
  // ?grep=text runs only the tests whose name contains it (GREP=text in the environment of suites.*.test.mjs).
  const only = new URLSearchParams(location.search).get('grep');
  for (const t of tests) {
    if (only && !t.name.includes(only)) continue;
    const t0 = performance.now();
    let timer;
    try {
      await Promise.race([
        t.fn(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${t.timeout} ms`)), t.timeout))),
      ]);
      results.push({ name: t.name, ok: true, ms: Math.round(performance.now() - t0) });
    } catch (e) {
      results.push({ name: t.name, ok: false, ms: Math.round(performance.now() - t0), error: `${e?.name}: ${e?.message}\n${e?.stack ?? ''}` });
    } finally {
      clearTimeout(timer);
    }
  }
  const out = { suite, userAgent: navigator.userAgent, results, figures };
  window.__results = out;
  return out;
}

/** Whether this page runs in WebKit (Safari, WebKitGTK), for the few places the engines differ. */
export const WEBKIT = /AppleWebKit/.test(navigator.userAgent) && !/Chrome|Firefox/.test(navigator.userAgent);

/** Runs `f(warned)` with console.warn collected into `warned` (its arguments joined by spaces), then restores it. */
export async function withWarnings(f) {
  const warned = [];
  const warn = console.warn;
  console.warn = (...a) => warned.push(a.join(' '));
  try {
    await f(warned);
  } finally {
    console.warn = warn;
  }
}

/**
 * Both transports' row "a URL function that later returns a URL that can never be fetched": `make(f)` builds
 * a client whose URL function `f` gives the stream `c` first (planned here to end after one event), then
 * `never`, as a Promise where `async`. The client must fail at once when the stream ends (one retry, the
 * function asked twice, no request for `never`), and reconnectNow() must ask the function again and open.
 */
export async function failsOnUnusableUrl(make, c, never, { async = false } = {}) {
  await plan(c, 'events:1', 'stream');
  let n = 0;
  const next = () => (++n === 2 ? never : url(c));
  const ours = make(async ? async () => next() : next);
  const seen = { statuses: [], retries: 0 };
  ours.onstatus = (s) => seen.statuses.push(s);
  ours.onretry = () => seen.retries++;
  ok(await until(3000, () => ours.status === 'failed'));
  await sleep(300);
  eq([seen.statuses, seen.retries, n], [['open', 'reconnecting', 'failed'], 1, 2]);
  eq((await log(c)).attempts.length, 1, `no request for ${never}`);
  ours.reconnectNow();
  ok(await until(3000, () => ours.status === 'open'), 'a usable URL again');
  ours.close();
}

/**
 * Stream `c` announces a heartbeat of `beatMs` (managed-eventsource/server's announcement), sends events 1-3
 * and then nothing an EventSource or a fetch sees (comments every `commentMs`); the next attempt streams.
 * `open(url)` makes the client, with no stall option. Resolves to `{ seen, after, attempts }`: the events
 * received (at least 6), the ms from the third to the stall's error, and the server's attempts.
 */
export async function stallAfterAnnouncement(c, beatMs, commentMs, open) {
  await plan(c, `announce:${beatMs}+quiet:3:${commentMs}`, 'stream');
  const es = open(url(c));
  const seen = [];
  let stalledAt = 0, lastAt = 0;
  es.onmessage = (e) => (seen.push(e.data), seen.length <= 3 && (lastAt = performance.now()));
  es.onerror = () => (stalledAt ||= performance.now());
  ok(await until(10000, () => seen.length >= 6), `events: ${seen.length}`);
  es.close();
  return { seen, after: stalledAt - lastAt, attempts: (await log(c)).attempts };
}
