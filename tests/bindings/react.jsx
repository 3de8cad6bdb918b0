// managed-eventsource/react with React 19 (development build, so that StrictMode mounts twice).
import { Activity, Component, StrictMode, Suspense, startTransition, use, useEffect, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { useManagedEventSource } from 'managed-eventsource/react';
import { ManagedEventSource as FetchSource } from '/pkg/fetch.js';
import { test, ok, eq, until, sleep, plan, log, url, WEBKIT } from '/tests/browser/lib.mjs';
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

// React 19's concurrent features around a mounted hook: remounts by key, transitions, Suspense, Activity,
// an error boundary.

for (const strict of [false, true]) test(`react: a remount by a new key and URL closes the old connection before the new one opens${strict ? ' (StrictMode)' : ''}`, async () => {
  const c = `react-key${strict ? '-strict' : ''}`;
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el);
  const at = (v) => url(c, `&v=${v}`);
  const feed = (v) => <Feed key={v} src={at(v)} options={{ client: Counted }} expose={() => {}} />;
  const draw = (v) => flushSync(() => root.render(strict ? <StrictMode>{feed(v)}</StrictMode> : feed(v)));
  draw(1);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  draw(2);
  await sleep(50);
  eq(history.map(([what, u]) => `${what} ${new URL(u).searchParams.get('v')}`), ['new 1', 'close 1', 'new 2']);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('react: a URL change in startTransition: one connection at a time, and no render shows the old URL under the new one', async () => {
  const c = 'react-transition';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el);
  const at = (v) => url(c, `&v=${v}`);
  let setV;
  function App() {
    const [v, set] = useState(1);
    setV = set;
    return <Feed src={at(v)} options={{ client: Counted }} expose={() => {}} />;
  }
  flushSync(() => root.render(<App />));
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  renders.length = 0;
  startTransition(() => setV(2));
  ok(await until(3000, () => el.textContent.includes('v=2#event 2')), el.textContent);
  eq(renders.filter(([src, seen]) => seen !== null && seen !== src), [], "renders handed another URL's event");
  eq(history.map(([what, u]) => `${what} ${new URL(u).searchParams.get('v')}`), ['new 1', 'close 1', 'new 2']);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('react: a Suspense boundary that suspends and resumes around a mounted hook keeps its one connection', async () => {
  const c = 'react-suspense';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el);
  let resolve;
  const pending = new Promise((r) => (resolve = r));
  function Waits({ wait }) {
    if (wait) use(pending);
    return null;
  }
  const draw = (wait) => flushSync(() => root.render(<Suspense fallback={<i>loading</i>}><Waits wait={wait} /><Feed src={url(c)} options={{ client: Counted }} expose={() => {}} /></Suspense>));
  draw(false);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  draw(true);
  await sleep(200);
  resolve();
  ok(await until(3000, () => el.querySelector('.feed') && el.querySelector('.feed').style.display !== 'none' && /#event/.test(el.textContent)), el.innerHTML);
  eq(history.map((h) => h[0]), ['new']);
  eq((await log(c)).attempts.length, 1);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('react: Activity hidden closes the connection, visible opens one again', async () => {
  const c = 'react-activity';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el);
  const draw = (mode) => flushSync(() => root.render(<Activity mode={mode}><Feed src={url(c)} options={{ client: Counted }} expose={() => {}} /></Activity>));
  draw('visible');
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  draw('hidden');
  ok(await until(3000, async () => (await log(c)).open === 0), 'open while hidden');
  draw('visible');
  ok(await until(3000, async () => (await log(c)).open === 1), 'visible again');
  eq(history.map((h) => h[0]), ['new', 'close', 'new']);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

class Boundary extends Component {
  state = { error: null };
  static getDerivedStateFromError(error) {
    return { error };
  }
  render() {
    return this.state.error ? <b className="caught">{`${this.state.error.name}: ${this.state.error.message}`}</b> : this.props.children;
  }
}

test('react: a bad option reaches an error boundary as the constructor RangeError; nothing opens', async () => {
  const c = 'react-bad';
  await plan(c, '', 'stream');
  const el = mountPoint();
  const root = createRoot(el, { onCaughtError: () => {} });
  flushSync(() => root.render(<Boundary><Feed src={url(c)} options={{ baseMs: -1 }} expose={() => {}} /></Boundary>));
  ok(await until(3000, () => el.querySelector('.caught')), el.innerHTML);
  ok(/^RangeError: .*baseMs/.test(el.textContent), el.textContent);
  await sleep(100);
  eq((await log(c)).attempts.length, 0);
  root.unmount();
  el.remove();
});

test('react: a key that is not a string or a number reaches an error boundary as a TypeError; nothing opens', async () => {
  const c = 'react-bad-key';
  await plan(c, '', 'stream');
  const el = mountPoint();
  const root = createRoot(el, { onCaughtError: () => {} });
  flushSync(() => root.render(<Boundary><Feed src={() => url(c)} options={{ key: { room: 1 } }} expose={() => {}} /></Boundary>));
  ok(await until(3000, () => el.querySelector('.caught')), el.innerHTML);
  ok(/^TypeError: .*option key/.test(el.textContent), el.textContent);
  await sleep(100);
  eq((await log(c)).attempts.length, 0);
  root.unmount();
  el.remove();
});

test('react: StrictMode with a URL change in the same commit as the mount of a sibling hook: one connection each', async () => {
  const c = 'react-strict-change';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el);
  const at = (v) => url(c, `&v=${v}`);
  const draw = (v, both) => flushSync(() => root.render(<StrictMode><Feed src={at(v)} options={{ client: Counted }} expose={() => {}} />{both && <Feed src={at('s')} options={{ client: Counted }} expose={() => {}} />}</StrictMode>));
  draw(1, false);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  draw(2, true);
  await sleep(300);
  eq(history.map(([what, u]) => `${what} ${new URL(u).searchParams.get('v')}`), ['new 1', 'close 1', 'new 2', 'new s']);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('react: a mounted hook whose component throws in a later render is unmounted by the error boundary, and its connection closed', async () => {
  const c = 'react-throws';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const root = createRoot(el, { onCaughtError: () => {} });
  function Fragile({ fail }) {
    const feed = useManagedEventSource(url(c), { client: Counted });
    if (fail) throw new Error('render failed');
    return <p className="feed">{show(feed)}</p>;
  }
  const draw = (fail) => flushSync(() => root.render(<Boundary><Fragile fail={fail} /></Boundary>));
  draw(false);
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  draw(true);
  ok(await until(3000, () => el.querySelector('.caught')), el.innerHTML);
  ok(await until(3000, async () => (await log(c)).open === 0), 'open at the server after the boundary took over');
  eq(history.map((h) => h[0]), ['new', 'close']);
  root.unmount();
  el.remove();
});

test('react: server HTML (renderToString) shows connecting and opens nothing; hydrateRoot matches it, then connects once', async () => {
  const c = 'react-hydrate';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const tree = <Feed src={url(c)} options={{ client: Counted }} expose={() => {}} />;
  el.innerHTML = renderToString(tree);
  eq(el.textContent, 'connecting|0||');
  await sleep(100);
  eq(history, [], 'a client made by the server render');
  const errors = [];
  const root = hydrateRoot(el, tree, { onRecoverableError: (e) => errors.push(String(e)) });
  ok(await until(3000, () => el.textContent.startsWith('open|0|message')), el.textContent);
  eq(errors, [], 'hydration errors');
  eq(history.map((h) => h[0]), ['new']);
  root.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test("react: onMessage is the latest render's, not the one of the render that connected, and a new one does not reconnect", async () => {
  const c = 'react-latest-callback';
  await plan(c, '', 'stream');
  const heard = [];
  const el = mountPoint();
  const app = mount(el, url(c), { onMessage: () => heard.push('first') });
  ok(await until(3000, () => heard.length >= 2), `${heard.length} heard`);
  app.rerender({ onMessage: () => heard.push('second') });
  const at = heard.length;
  ok(await until(3000, () => heard.length >= at + 3), `${heard.length} heard`);
  eq(heard.slice(at + 1).filter((h) => h !== 'second'), [], 'callbacks of an earlier render called after a later render');
  eq((await log(c)).attempts.length, 1, 'one request');
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});

test('react: a URL function made anew on every render (an inline arrow) does not reconnect; each attempt calls the latest render\'s, and a new key reconnects', async () => {
  const c = 'react-url-function';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const el = mountPoint();
  const app = mount(el, () => url(c, '&r=0'), { client: Counted });
  ok(await until(3000, () => el.textContent.startsWith('open|')), el.textContent);
  for (let i = 1; i <= 5; i++) {
    await app.setUrl(() => url(c, `&r=${i}`));
    await sleep(20);
  }
  // The next attempt (reconnectNow's) asks the URL function again: the latest render's.
  app.feed().reconnectNow();
  ok(await until(3000, async () => (await log(c)).attempts.length === 2), 'reconnected');
  const l = await log(c);
  eq(history.map((h) => h[0]), ['new'], 'one client for five new functions');
  // WebKit's network process lets a closed stream's connection go after the next one is made
  // (lifecycle.mjs): the server may see both for a moment. The page's own order is in `history`.
  ok(l.maxOpen <= (WEBKIT ? 2 : 1), `at most one connection at a time: ${l.maxOpen}`);
  eq(l.attempts.map((a) => new URL(a.url, location.origin).searchParams.get('r')), ['0', '5'], "the reconnect asked the latest render's function");
  // A new key reconnects at once, with the function of that render.
  app.rerender({ client: Counted, key: 'room-2' });
  ok(await until(3000, () => history.length === 3), JSON.stringify(history));
  eq(history.map((h) => h[0]), ['new', 'close', 'new']);
  ok(await until(3000, async () => (await log(c)).open === 1 && (await log(c)).attempts.length === 3));
  ok((await log(c)).maxOpen <= (WEBKIT ? 2 : 1), 'one connection at a time');
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});
