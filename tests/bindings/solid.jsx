// managed-eventsource/solid with solid-js 1.9 (JSX through solid-js/h, which esbuild compiles with no plugin).
import { createRoot, createSignal } from 'solid-js';
import { render } from 'solid-js/web';
import { createManagedEventSource } from 'managed-eventsource/solid';
import { test, ok, eq, until, plan, log, url } from '/tests/browser/lib.mjs';
import { counting, show } from './common.mjs';
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
  ok(await until(3000, () => feed.status() === 'open' && feed.lastEvent()?.data === 'event 2'), feed.status());
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
  ok(await until(3000, () => feed.status() === 'open'), feed.status());
  setRoom({ id: c }); // a new object: the accessor runs again and gives the same URL
  setRoom({ id: c });
  ok(await until(3000, () => feed.lastEvent()?.data === 'event 4'), 'events go on');
  eq((await log(c)).attempts.length, 1, 'one request');
  dispose();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close']);
});
