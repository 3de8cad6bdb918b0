// PENDING, not registered (tests/bindings/build.mjs does not bundle this folder): a design decision, not a
// local bug. To run it, append this file's test to tests/bindings/react.jsx (it uses that file's Feed,
// mount helpers and imports) and run `SUITE=react node --test tests/page/suites.chromium.test.mjs`.
//
// What it shows: useManagedEventSource reads its options when a connection opens (docs/reference.md,
// "Options"), callbacks included, so `onMessage` (and `until`) keep the closure of the render that
// connected. A React developer who writes `onMessage: (ev) => { if (!paused) append(ev) }` with `paused`
// from useState sees the first render's `paused` for as long as the URL stays the same: the toggle does
// nothing. react-use-websocket and most hooks of its kind call the latest callback (a ref updated on each
// render, as useEffectEvent does). Calling the latest `onMessage` through a ref would not reconnect and
// would keep "a new options object never reconnects"; whether the client's own callbacks (`until`,
// `headers` functions, `probe`) should follow is the decision to make. Fails today: the second render's
// callback is never called.

test('react (pending): onMessage is the latest render\'s, not the one of the render that connected', async () => {
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
  await app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  el.remove();
});
