// managed-eventsource/react with React 19 (development build, so that StrictMode mounts twice).
import { StrictMode, useEffect } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { useManagedEventSource } from 'managed-eventsource/react';
import { ManagedEventSource as FetchSource } from '/pkg/fetch.js';
import { test, ok, eq, until, sleep, plan, log, url } from '/tests/browser/lib.mjs';
import { counting, mountPoint, show } from './common.mjs';
import { scenarios } from './scenarios.mjs';

/** Every render of Feed: the URL it was given and the URL of the event it was handed. */
const renders = [];

function Feed({ src, options, expose }) {
  const feed = useManagedEventSource(src, options);
  renders.push([src, feed.lastEvent?.target.url ?? null]);
  expose(feed);
  return <p className="feed">{show(feed)}</p>;
}

/** Renders Feed into `el` (in StrictMode if `strict`); `render(url, options)` renders it again. */
function mount(el, src, options, { strict = false, extra = null } = {}) {
  const root = createRoot(el);
  let feed;
  let current = { src, options };
  const render = (next) => {
    current = { ...current, ...next };
    const tree = (
      <>
        {extra}
        <Feed src={current.src} options={current.options} expose={(f) => (feed = f)} />
      </>
    );
    flushSync(() => root.render(strict ? <StrictMode>{tree}</StrictMode> : tree));
  };
  render({});
  return {
    setUrl: async (u) => render({ src: u }),
    rerender: (options) => render({ options }),
    unmount: async () => root.unmount(),
    feed: () => feed,
  };
}

scenarios('react', mount);

test('react: StrictMode mounts twice and the hook holds one connection', async () => {
  const c = 'react-strict';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  let effects = 0;
  function Probe() {
    useEffect(() => void effects++, []);
    return null;
  }
  const el = mountPoint();
  const app = mount(el, url(c), { client: Counted }, { strict: true, extra: <Probe /> });
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  eq(effects, 2, 'StrictMode ran the effects twice');
  await sleep(200);
  eq(history.map((h) => h[0]), ['new'], 'one client made, none closed');
  const l = await log(c);
  eq([l.attempts.length, l.maxOpen, l.open], [1, 1, 1]);
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close']);
  el.remove();
});

test('react: an options object made anew on every render does not reconnect', async () => {
  const c = 'react-rerender';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const app = mount(el, url(c), { client: Counted, baseMs: 100 });
  ok(await until(3000, () => el.textContent.startsWith('open|')), el.textContent);
  for (let i = 0; i < 5; i++) {
    app.rerender({ client: Counted, baseMs: 100 + i });
    await sleep(20);
  }
  await sleep(200);
  eq(history.map((h) => h[0]), ['new']);
  eq((await log(c)).attempts.length, 1);
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test("react: the fetch transport with headers, through managed-eventsource/fetch's class", async () => {
  const c = 'react-fetch';
  await plan(c, '', 'stream');
  const el = mountPoint();
  const app = mount(el, url(c), { client: FetchSource, transport: 'fetch', headers: { Authorization: 'Bearer react' } });
  ok(await until(3000, () => /^open\|0\|message .*#event 2/.test(el.textContent)), el.textContent);
  eq((await log(c)).attempts.map((a) => a.auth), ['Bearer react']);
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test("react: no render for a new URL is handed the old URL's state, not even the one before the effect", async () => {
  const [from, to] = ['react-render-from', 'react-render-to'];
  await plan(from, '', 'stream');
  await plan(to, '', 'stream');
  const el = mountPoint();
  const app = mount(el, url(from), {});
  ok(await until(3000, () => el.textContent.includes('#event 2')), el.textContent);
  renders.length = 0;
  await app.setUrl(url(to));
  ok(await until(3000, () => el.textContent.includes(`c=${to}#event 2`)), el.textContent);
  ok(renders.length > 0);
  eq(renders.filter(([src, seen]) => seen !== null && seen !== src), [], "renders handed another URL's event");
  await app.unmount();
  ok(await until(3000, async () => (await log(to)).open === 0));
  el.remove();
});
