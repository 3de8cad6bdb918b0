// The Angular test application of managed-eventsource/angular, built by the Angular CLI's application
// builder (AOT, zoneless) and served by tests/server/sse-server.mjs, whose page driver
// (tests/page/angular.test.mjs) reads window.__results in Chromium, Firefox and WebKit.
//
// Each test mounts a real component (createComponent, attached to the application so that change detection
// renders it) or makes a resource with an injector of its own, and checks what the server saw and what the
// DOM shows. A `Recorded` client class records every construct and close in one timeline.
import { ApplicationRef, Component, EnvironmentInjector, createComponent, createEnvironmentInjector, input, provideZonelessChangeDetection, signal } from '@angular/core';
import { bootstrapApplication } from '@angular/platform-browser';
import { ManagedEventSource } from 'managed-eventsource';
import { ManagedEventSource as FetchEventSource } from 'managed-eventsource/fetch';
// The share entry, once in the app: `share` then works for every client, as for the test below.
import 'managed-eventsource/share';
import { sseResource, type SseResourceOptions } from 'managed-eventsource/angular';

// ---- a small runner, as tests/browser/lib.mjs ----------------------------------------------------------

interface Result {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
}
const tests: { name: string; fn: () => Promise<void> }[] = [];
const figures: { name: string; value: string }[] = [];
const test = (name: string, fn: () => Promise<void>) => tests.push({ name, fn });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
class AssertionError extends Error {}
function ok(cond: unknown, message: string): asserts cond {
  if (!cond) throw new AssertionError(message);
}
const show = (v: unknown) => JSON.stringify(v);
function eq(actual: unknown, expected: unknown, message: string) {
  if (show(actual) !== show(expected)) throw new AssertionError(`${message}: expected ${show(expected)}, got ${show(actual)}`);
}
/** Polls `cond` every 10 ms for up to 4 × `ms` (a busy machine); whether it came true. Never used to show
 * that something does not happen. */
async function until(ms: number, cond: () => boolean | Promise<boolean>): Promise<boolean> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms * 4) {
    if (await cond()) return true;
    await sleep(10);
  }
  return !!(await cond());
}

// ---- the server (tests/server/sse-server.mjs) -----------------------------------------------------------

const sse = (c: string) => `${location.origin}/sse?c=${encodeURIComponent(c)}`;
async function plan(c: string, steps: string, then = 'stream') {
  await fetch(`/plan?${new URLSearchParams({ c, steps, then })}`);
}
interface Log {
  attempts: { url: string; step: string; auth: string | null; method: string }[];
  open: number;
  maxOpen: number;
}
async function log(c: string): Promise<Log> {
  return (await fetch(`/log?c=${encodeURIComponent(c)}`, { cache: 'no-store' })).json();
}

// ---- what the tests mount -----------------------------------------------------------------------------

/** Every client made and closed, in order, by URL. */
const timeline: string[] = [];
class Recorded extends ManagedEventSource {
  constructor(url: string | URL, options?: object) {
    timeline.push(`open ${url}`);
    super(url, options);
  }
  override close() {
    if (this.status !== 'closed') timeline.push(`close ${this.url}`);
    super.close();
  }
}

/** The options the next FeedView takes (read in its field initializer). */
let nextOptions: SseResourceOptions<string> = {};
/** Every value a resource's parse produced: the URL of the client that delivered it, and the data. */
const parsed: { url: string; data: string }[] = [];
const recordParse = (data: string, ev: MessageEvent<string>) => {
  const url = (ev.target as ManagedEventSource).url;
  parsed.push({ url, data });
  return `${new URL(url).searchParams.get('c')}: ${data}`;
};

@Component({
  selector: 'feed-view',
  template: `<p class="status">{{ feed.status() }}</p>
    <p class="value">{{ feed.value() ?? '' }}</p>
    <p class="attempt">{{ feed.attempt() }}</p>`,
})
class FeedView {
  /** The server's client name: the URL reads this input signal. */
  readonly client = input.required<string>();
  readonly feed = sseResource<string>(() => sse(this.client()), { client: Recorded, parse: recordParse, ...nextOptions });
}

@Component({ selector: 'test-root', template: `<pre id="out">running</pre><div id="mounts"></div>` })
class TestRoot {}

async function main() {
  const app = await bootstrapApplication(TestRoot, { providers: [provideZonelessChangeDetection()] });
  const appRef = app.injector.get(ApplicationRef);
  const environment = app.injector.get(EnvironmentInjector);

  /** Mounts a FeedView for server client `c` with `options`; its DOM texts are read by `text`. */
  function mount(c: string, options: SseResourceOptions<string> = {}) {
    nextOptions = options;
    const host = document.createElement('div');
    document.getElementById('mounts')!.append(host);
    const ref = createComponent(FeedView, { environmentInjector: environment, hostElement: host });
    ref.setInput('client', c);
    appRef.attachView(ref.hostView);
    nextOptions = {};
    const text = (cls: string) => host.querySelector(`.${cls}`)?.textContent ?? '';
    /** Every text the status paragraph showed, consecutive repeats dropped. */
    const statuses: string[] = [];
    /** Every text the value paragraph showed. */
    const values: string[] = [];
    const observer = new MutationObserver(() => {
      const s = text('status');
      if (s && statuses.at(-1) !== s) statuses.push(s);
      const v = text('value');
      if (values.at(-1) !== v) values.push(v);
    });
    observer.observe(host, { subtree: true, childList: true, characterData: true });
    return {
      ref,
      text,
      statuses,
      values,
      unmount() {
        ref.destroy();
        observer.disconnect();
        host.remove();
      },
    };
  }

  // ---- the tests ----------------------------------------------------------------------------------------

  test('mount opens one connection, and the DOM shows the status and the events', async () => {
    const c = 'ng-mount';
    await plan(c, '');
    const heard: number[] = [];
    const view = mount(c, { onMessage: (ev) => heard.push(Number(ev.lastEventId)) });
    ok(await until(5000, () => view.text('status') === 'open'), `status ${view.text('status')}`);
    ok(await until(5000, () => view.text('value').startsWith(`${c}: event `)), `value ${view.text('value')}`);
    const l = await log(c);
    eq([l.attempts.length, l.open], [1, 1], 'attempts and open streams at the server');
    // onMessage hears every event, in order, whatever the renders showed.
    ok(await until(5000, () => heard.length >= 10), `${heard.length} events heard`);
    eq(heard.slice(0, 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'the ids onMessage heard');
    view.unmount();
  });

  test('destroying the component closes its connection: the server sees nothing open', async () => {
    const c = 'ng-unmount';
    await plan(c, '');
    const view = mount(c);
    ok(await until(5000, () => view.text('value') !== ''), 'no event');
    const resource = view.ref.instance.feed;
    view.unmount();
    eq(resource.status(), 'closed', 'status after destroy');
    eq(timeline.slice(-2), [`open ${sse(c)}`, `close ${sse(c)}`], 'timeline');
    ok(await until(5000, async () => (await log(c)).open === 0), 'a stream still open at the server');
    const before = parsed.length;
    await sleep(300);
    eq(parsed.length, before, 'events parsed after destroy');
    eq((await log(c)).attempts.length, 1, 'attempts');
  });

  test('a URL change closes the old connection before the new one opens; no event of the old one after', async () => {
    const [a, b] = ['ng-url-a', 'ng-url-b'];
    await plan(a, '');
    await plan(b, '');
    const view = mount(a);
    ok(await until(5000, () => parsed.filter((p) => p.url === sse(a)).length >= 3), 'no events from a');
    const mark = timeline.length;
    const shown = view.values.length;
    view.ref.setInput('client', b);
    ok(await until(5000, () => view.text('value').startsWith(`${b}: `)), 'no event from b');
    eq(timeline.slice(mark), [`close ${sse(a)}`, `open ${sse(b)}`], 'timeline');
    // What the DOM showed after the change: maybe a's last value until the effect ran, then nothing (a new
    // URL starts from no value), then only b's.
    const after = view.values.slice(shown);
    const cleared = after.indexOf('');
    ok(cleared >= 0, `the value was not cleared for the new URL: ${show(after)}`);
    eq(after.slice(cleared + 1).filter((v) => !v.startsWith(`${b}: `)), [], 'values shown after the new URL began');
    ok(await until(5000, async () => (await log(a)).open === 0), 'a still open at the server');
    // Let b's stream run: once b's first event was parsed, no event of a may follow.
    await sleep(500);
    const firstB = parsed.findIndex((p) => p.url === sse(b));
    const stale = parsed.slice(firstB).filter((p) => p.url !== sse(b));
    eq(stale, [], 'events of the old URL after the new one began');
    const l = await log(b);
    eq([l.attempts.length, l.open], [1, 1], 'b at the server');
    view.unmount();
    ok(await until(5000, async () => (await log(b)).open === 0), 'b still open at the server');
  });

  test('the DOM status follows the ladder through an outage: open, reconnecting, open', async () => {
    const c = 'ng-outage';
    await plan(c, '');
    const view = mount(c, { baseMs: 100, maxMs: 300, lastEventIdParam: 'lastEventId' });
    ok(await until(5000, () => view.text('status') === 'open'), `status ${view.text('status')}`);
    ok(await until(5000, () => view.text('value') !== ''), 'no event');
    const t0 = performance.now();
    await fetch('/outage?ms=1500');
    ok(await until(5000, () => view.text('status') === 'reconnecting'), `status ${view.text('status')}`);
    ok(await until(5000, () => view.text('status') === 'open' && performance.now() - t0 > 1500), `status ${view.text('status')}`);
    ok(Number(view.text('attempt')) === 0, `attempt ${view.text('attempt')} while open`);
    eq(view.statuses, ['connecting', 'open', 'reconnecting', 'open'], 'the statuses the DOM showed');
    const l = await log(c);
    ok(l.attempts.length >= 2, `${l.attempts.length} attempts`);
    ok(l.attempts.slice(1).every((a) => a.url.includes('lastEventId=')), 'a reconnect without lastEventId');
    figures.push({ name: 'outage of 1500 ms: attempts the server answered (refused ones never reach it)', value: String(l.attempts.length) });
    view.unmount();
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
  });

  test("seed 003's backoff object: maxAttempts reconnects, then 'failed'; reconnectNow() opens again", async () => {
    const c = 'ng-seed';
    await plan(c, '503,503,503');
    const view = mount(c, { reconnect: { initialDelayMs: 50, maxDelayMs: 100, maxAttempts: 2, jitter: 'none' } });
    ok(await until(5000, () => view.text('status') === 'failed'), `status ${view.text('status')}`);
    eq((await log(c)).attempts.length, 3, 'attempts: the first and two reconnects');
    eq(view.statuses, ['connecting', 'reconnecting', 'failed'], 'the statuses the DOM showed');
    ok(view.ref.instance.feed.error() instanceof Event, 'error() holds the failure');
    view.ref.instance.feed.reconnectNow();
    ok(await until(5000, () => view.text('status') === 'open'), `status ${view.text('status')}`);
    eq(view.ref.instance.feed.error(), undefined, 'error() once open');
    view.unmount();
  });

  test('outside an injection context without an injector: Angular NG0203', async () => {
    let thrown: unknown;
    try {
      sseResource(sse('ng-nowhere'));
    } catch (e) {
      thrown = e;
    }
    ok(thrown instanceof Error && /NG0203/.test(thrown.message), `threw ${thrown}`);
    eq((await log('ng-nowhere')).attempts.length, 0, 'attempts');
  });

  test('with an injector of its own: opens, and destroying that injector closes it', async () => {
    const c = 'ng-injector';
    await plan(c, '');
    const injector = createEnvironmentInjector([], environment);
    const feed = sseResource(sse(c), { injector, parse: String, client: Recorded });
    ok(await until(5000, () => feed.status() === 'open'), `status ${feed.status()}`);
    ok(await until(5000, () => feed.value() !== undefined), 'no value');
    injector.destroy();
    eq(feed.status(), 'closed', 'status');
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
    eq(timeline.slice(-2), [`open ${sse(c)}`, `close ${sse(c)}`], 'timeline');
  });

  test('close(): closed for good, a later URL change opens nothing', async () => {
    const c = 'ng-close';
    await plan(c, '');
    const view = mount(c);
    ok(await until(5000, () => view.text('status') === 'open'), `status ${view.text('status')}`);
    view.ref.instance.feed.close();
    ok(await until(5000, () => view.text('status') === 'closed'), `status ${view.text('status')}`);
    view.ref.setInput('client', 'ng-close-2');
    await sleep(300);
    eq((await log('ng-close-2')).attempts.length, 0, 'attempts after close()');
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
    view.unmount();
  });

  test('a URL that becomes null closes the connection and clears the value; status closed', async () => {
    const c = 'ng-null';
    await plan(c, '');
    const injector = createEnvironmentInjector([], environment);
    const target = signal<string | null>(sse(c));
    const feed = sseResource(() => target(), { injector, parse: String });
    ok(await until(5000, () => feed.value() !== undefined), `no value, status ${feed.status()}`);
    target.set(null);
    ok(await until(5000, () => feed.status() === 'closed'), `status ${feed.status()}`);
    eq(feed.value(), undefined, 'value');
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
    eq((await log(c)).attempts.length, 1, 'attempts');
    injector.destroy();
  });

  test('a signal the URL reads changes but the URL does not (a new object; B then A in one tick): one connection', async () => {
    const c = 'ng-same-url';
    await plan(c, '');
    await plan('ng-same-url-b', '');
    const injector = createEnvironmentInjector([], environment);
    const room = signal({ id: c });
    const feed = sseResource(() => sse(room().id), { injector, parse: String });
    ok(await until(5000, () => feed.status() === 'open'), `status ${feed.status()}`);
    room.set({ id: c });
    room.set({ id: 'ng-same-url-b' });
    room.set({ id: c });
    const value = feed.value();
    ok(await until(5000, () => feed.value() !== value), 'events go on');
    eq((await log(c)).attempts.length, 1, 'attempts');
    eq((await log('ng-same-url-b')).attempts.length, 0, 'attempts of B');
    injector.destroy();
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
  });

  test('options pass through: the fetch transport with headers, and share', async () => {
    const c = 'ng-fetch';
    await plan(c, '');
    const injector = createEnvironmentInjector([], environment);
    const fed = sseResource(sse(c), { injector, parse: String, client: FetchEventSource, transport: 'fetch', headers: { Authorization: 'Bearer ng' } });
    ok(await until(5000, () => fed.value() !== undefined), `no value, status ${fed.status()}`);
    const l = await log(c);
    eq([l.attempts[0]?.auth, l.attempts[0]?.method], ['Bearer ng', 'GET'], 'what the server saw');
    const s = 'ng-share';
    await plan(s, '');
    const name = `ng-share-${Math.random()}`;
    const first = sseResource(sse(s), { injector, parse: String, share: name });
    const second = sseResource(sse(s), { injector, parse: String, share: name });
    ok(await until(5000, () => first.value() !== undefined && second.value() !== undefined), 'both have values');
    eq((await log(s)).maxOpen, 1, 'connections for two resources sharing one');
    injector.destroy();
    ok(await until(5000, async () => (await log(c)).open + (await log(s)).open === 0), 'still open at the server');
  });

  test('a bad option: a TypeError naming it, in error() and to the ErrorHandler', async () => {
    const injector = createEnvironmentInjector([], environment);
    const feed = sseResource(sse('ng-bad'), { injector, baseMs: -1 });
    ok(await until(5000, () => feed.status() === 'failed'), `status ${feed.status()}`);
    const e = feed.error();
    ok(e instanceof RangeError && /baseMs/.test(e.message), `error ${e}`);
    injector.destroy();
  });

  test('a URL that becomes null and back opens one new connection; the value starts from nothing', async () => {
    const c = 'ng-null-back';
    await plan(c, '');
    const injector = createEnvironmentInjector([], environment);
    const target = signal<string | null>(sse(c));
    const feed = sseResource(() => target(), { injector, parse: String, client: Recorded });
    ok(await until(5000, () => feed.value() !== undefined), `no value, status ${feed.status()}`);
    const mark = timeline.length;
    target.set(null);
    ok(await until(5000, () => feed.status() === 'closed'), `status ${feed.status()}`);
    target.set(sse(c));
    ok(await until(5000, () => feed.status() === 'open'), `status ${feed.status()}`);
    eq(timeline.slice(mark), [`close ${sse(c)}`, `open ${sse(c)}`], 'timeline');
    ok(await until(5000, () => feed.value() !== undefined), 'no value after the URL came back');
    // The server hears of the old stream's end when the browser's network code tells it.
    ok(await until(5000, async () => {
      const l = await log(c);
      return l.attempts.length === 2 && l.open === 1;
    }), `attempts and open streams at the server: ${JSON.stringify(await log(c))}`);
    injector.destroy();
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
  });

  test('parse that throws: the error goes to error(), the stream goes on, the next value is shown', async () => {
    const c = 'ng-parse-throws';
    // Six events at once, then only comment lines: the value comes to rest on the last one (a stream that
    // moves on every 25 ms could pass 'event 4' between two looks under load).
    await plan(c, '', 'quiet:6:1000');
    const injector = createEnvironmentInjector([], environment);
    const parse = (data: string) => {
      if (data === 'event 2') throw new SyntaxError('not this one');
      return data;
    };
    const feed = sseResource<string>(sse(c), { injector, parse });
    ok(await until(5000, () => feed.error() instanceof SyntaxError), `error ${feed.error()}`);
    ok(await until(5000, () => feed.value() === 'event 6'), `value ${feed.value()}`);
    eq(feed.status(), 'open', 'status');
    eq((await log(c)).attempts.length, 1, 'attempts');
    injector.destroy();
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
  });

  test("event: a named event's data becomes the value, and message events are not read", async () => {
    const c = 'ng-event';
    // One 'update' event a response, each response then ended: a reconnect brings the next.
    await plan(c, 'events:1:update,events:1:update', 'stream');
    const injector = createEnvironmentInjector([], environment);
    const feed = sseResource<string>(sse(c), { injector, parse: String, event: 'update', baseMs: 50, jitter: 'none' });
    ok(await until(5000, () => feed.value() === 'event 1'), `value ${feed.value()}`);
    // The third response is an ordinary stream of message events: the value stays the last update's.
    ok(await until(5000, async () => (await log(c)).attempts.length === 3), 'a third attempt');
    await sleep(300);
    ok(feed.value() === 'event 1' || feed.value() === 'event 2', `value ${feed.value()}`);
    injector.destroy();
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
  });

  test('the injector destroyed inside onMessage: nothing heard after, nothing open', async () => {
    const c = 'ng-destroy-inside';
    await plan(c, '');
    const injector = createEnvironmentInjector([], environment);
    const heard: string[] = [];
    const feed = sseResource<string>(sse(c), {
      injector,
      parse: String,
      onMessage: (ev) => {
        heard.push(ev.data);
        if (heard.length === 2) injector.destroy();
      },
    });
    ok(await until(5000, () => heard.length === 2), `${heard.length} heard`);
    ok(await until(5000, async () => (await log(c)).open === 0), 'still open at the server');
    await sleep(300);
    eq(heard, ['event 1', 'event 2'], 'heard');
    eq([feed.status(), feed.value()], ['closed', 'event 2'], 'status and value');
  });

  // ---- run ----------------------------------------------------------------------------------------------

  const results: Result[] = [];
  for (const t of tests) {
    const t0 = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A leaked stream can hold all six of a host's HTTP/1.1 connections, and then a fetch() waits forever.
      await Promise.race([t.fn(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out after 30 s')), 30000)))]);
      results.push({ name: t.name, ok: true, ms: Math.round(performance.now() - t0) });
    } catch (e) {
      const err = e as Error;
      results.push({ name: t.name, ok: false, ms: Math.round(performance.now() - t0), error: `${err?.name}: ${err?.message}\n${err?.stack ?? ''}` });
    } finally {
      clearTimeout(timer);
    }
  }
  const out = { suite: 'angular', userAgent: navigator.userAgent, results, figures };
  document.getElementById('out')!.textContent = JSON.stringify(out, null, 1);
  (window as unknown as { __results: typeof out }).__results = out;
}

void main();
