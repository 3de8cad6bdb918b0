// managed-eventsource/solid with solid-js 1.9 (JSX through solid-js/h, which esbuild compiles with no plugin).
import { ErrorBoundary, Show, Suspense, createComputed, createResource, createRoot, createSignal } from 'solid-js';
import { render } from 'solid-js/web';
import { createManagedEventSource } from 'managed-eventsource/solid';
import { test, ok, eq, until, sleep, plan, log, url } from '/tests/browser/lib.mjs';
import { counting, eventNumber, mountPoint, show } from './common.mjs';
import { scenarios } from './scenarios.mjs';

const current = (feed) => ({ status: feed.status(), attempt: feed.attempt(), lastEvent: feed.lastEvent(), error: feed.error() });

function mount(el, src, options) {
  const [address, setAddress] = createSignal(src);
  let feed;
  function Feed() {
    feed = createManagedEventSource(address, options);
    return <p class="feed">{() => show(current(feed))}</p>;
  }
  const dispose = render(() => <Feed />, el);
  return {
    async setUrl(u) {
      setAddress(u);
    },
    unmount: async () => dispose(),
    feed: () => feed,
  };
}

scenarios('solid', mount);

test('solid: cleaned up with its owner (createRoot); a plain string URL', async () => {
  const c = 'solid-root';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const { feed, dispose } = createRoot((dispose) => ({ feed: createManagedEventSource(url(c), { client: Counted }), dispose }));
  ok(await until(3000, () => feed.status() === 'open' && eventNumber(feed.lastEvent()) >= 2), feed.status());
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0), 'the server sees the stream closed with the root');
  eq(history.map((h) => h[0]), ['new', 'close']);
});

test('solid: an accessor whose signal changes but whose URL text does not keeps its connection', async () => {
  const c = 'solid-same-text';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const { feed, setRoom, dispose } = createRoot((dispose) => {
    const [room, setRoom] = createSignal({ id: c });
    return { feed: createManagedEventSource(() => url(room().id), { client: Counted }), setRoom, dispose };
  });
  ok(await until(3000, () => feed.status() === 'open' && feed.lastEvent()), feed.status());
  // The stream moves on every 25 ms: events go on past the one seen now (a loaded Firefox passed an exact
  // 'event 4' between two looks).
  const number = () => eventNumber(feed.lastEvent());
  const at = number();
  setRoom({ id: c }); // a new object: the accessor runs again and gives the same URL
  setRoom({ id: c });
  ok(await until(3000, () => number() > at + 1), `events go on: ${feed.lastEvent()?.data}`);
  eq((await log(c)).attempts.length, 1, 'one request');
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close']);
});

test('solid: a component toggled by <Show> opens one connection each time it shows and closes it when hidden', async () => {
  const c = 'solid-show';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const [visible, setVisible] = createSignal(true);
  const el = mountPoint();
  function Feed() {
    const feed = createManagedEventSource(url(c), { client: Counted });
    return <p class="feed">{() => show(current(feed))}</p>;
  }
  // solid-js/h reads a function prop as reactive (the JSX compiler would wrap visible() itself).
  const dispose = render(() => <Show when={visible}>{() => <Feed />}</Show>, el);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  setVisible(false);
  ok(await until(3000, async () => (await log(c)).open === 0), 'open while hidden');
  setVisible(true);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  eq(history.map((h) => h[0]), ['new', 'close', 'new']);
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close', 'new', 'close']);
  el.remove();
});

test('solid: under <Suspense> whose resource is pending, nothing opens until it resolves; then one connection', async () => {
  const c = 'solid-suspense';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  let resolve;
  const el = mountPoint();
  function Feed() {
    const [data] = createResource(() => new Promise((r) => (resolve = r)));
    const feed = createManagedEventSource(url(c), { client: Counted });
    return <p class="feed">{() => `${data()}:${show(current(feed))}`}</p>;
  }
  const dispose = render(() => <Suspense fallback={<i>loading</i>}><Feed /></Suspense>, el);
  await sleep(200);
  eq(history, [], 'a client made while suspended');
  resolve('ready');
  ok(await until(3000, () => el.textContent.startsWith('ready:open|0|message')), el.textContent);
  eq(history.map((h) => h[0]), ['new']);
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('solid: a bad option reaches an <ErrorBoundary> as the RangeError; nothing opens', async () => {
  const c = 'solid-bad';
  await plan(c, '', 'stream');
  const el = mountPoint();
  function Feed() {
    const feed = createManagedEventSource(url(c), { baseMs: -1 });
    return <p class="feed">{() => show(current(feed))}</p>;
  }
  const dispose = render(() => <ErrorBoundary fallback={(e) => <b class="caught">{`${e.name}: ${e.message}`}</b>}><Feed /></ErrorBoundary>, el);
  ok(await until(3000, () => el.querySelector('.caught')), el.innerHTML);
  ok(/^RangeError: .*baseMs/.test(el.textContent), el.textContent);
  eq((await log(c)).attempts.length, 0);
  dispose();
  el.remove();
});

test('solid: createRoot disposed inside an event handler (onMessage): nothing heard after, nothing open', async () => {
  const c = 'solid-dispose-inside';
  await plan(c, '', 'stream');
  const heard = [];
  const { feed } = createRoot((dispose) => ({
    feed: createManagedEventSource(url(c), {
      onMessage: (ev) => {
        heard.push(ev.data);
        if (heard.length === 2) dispose();
      },
    }),
  }));
  ok(await until(3000, () => heard.length === 2), `${heard.length} heard`);
  ok(await until(3000, async () => (await log(c)).open === 0));
  await sleep(200);
  eq(heard, ['event 1', 'event 2']);
  eq(feed.lastEvent()?.data, 'event 2');
});

test('solid: a computation over status sees connecting, then open: no closed before or while the first connection is made', async () => {
  const c = 'solid-first-status';
  await plan(c, '', 'stream');
  const seen = [];
  const dispose = createRoot((dispose) => {
    const feed = createManagedEventSource(url(c));
    createComputed(() => seen.push(feed.status()));
    return dispose;
  });
  ok(await until(3000, () => seen.at(-1) === 'open'), seen.join());
  eq(seen.filter((s, i) => s !== seen[i - 1]), ['connecting', 'open']);
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0));
});
