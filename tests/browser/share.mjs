// `share` in one page (several clients of one name stand for several tabs: each has a BroadcastChannel
// of its own): named events reach a follower's listeners whichever client leads, on both transports.
import { test, until, sleep, ok, eq, plan, log, url } from './lib.mjs';
// Sharing is the share entry's: imported once, it works for every entry's class of the page.
import '/pkg/share.js';

const sharing = typeof BroadcastChannel === 'function' && typeof navigator.locks?.request === 'function';

const ENTRIES = [
  ['index', {}],
  ['fetch', { transport: 'fetch' }],
];

/** Counts the `tick` events `es` hears. */
function ticks(es) {
  const seen = { n: 0 };
  es.addEventListener('tick', () => seen.n++);
  return seen;
}

for (const [entry, extra] of ENTRIES) {
  test(`${entry}: a follower's named-event listener hears them from the first leader and from the one after it`, async () => {
    if (!sharing) return;
    const { ManagedEventSource } = await import(`/pkg/${entry}.js`);
    const c = `share-named-${entry}`, name = `${c}-${Math.random()}`;
    await plan(c, '', 'named:40:tick');
    const opts = { share: name, lastEventIdParam: 'lastEventId', ...extra };
    const a = new ManagedEventSource(url(c), opts);
    const b = new ManagedEventSource(url(c), opts);
    const follower = new ManagedEventSource(url(c), opts);
    const heard = ticks(follower);
    // Each connection's response starts with 40 tick events (then plain ones only).
    ok(await until(5000, () => heard.n === 40), `the first leader relays tick (${heard.n}, ${follower.status})`);
    ok(a.leader && !b.leader && !follower.leader);
    a.close();
    ok(await until(5000, () => b.leader && b.status === 'open'), 'the second client leads');
    ok(await until(5000, () => heard.n === 80), `the new leader relays tick too (${heard.n})`);
    b.close();
    follower.close();
    ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
  });

  test(`${entry}: listeners added while every client follows reach the first leader`, async () => {
    if (!sharing) return;
    const { ManagedEventSource } = await import(`/pkg/${entry}.js`);
    const c = `share-held-${entry}`, name = `${c}-${Math.random()}`;
    await plan(c, '', 'named:40:tick');
    // The lock is held elsewhere (another tab's client, still starting), so every client here follows.
    let release;
    await new Promise((held) => navigator.locks.request(`managed-eventsource:${name}`, () => (held(), new Promise((r) => (release = r)))));
    const opts = { share: name, ...extra };
    const a = new ManagedEventSource(url(c), opts);
    const follower = new ManagedEventSource(url(c), opts);
    // What the clients tell each other, seen by a channel of the same name: the follower has said it
    // listens to tick before the lock is let go (while the other client still follows).
    const spy = new BroadcastChannel(`managed-eventsource:${name}`);
    const told = new Promise((r) => (spy.onmessage = (m) => m.data.types?.includes('tick') && r()));
    const heard = ticks(follower);
    await told;
    spy.close();
    eq([a.leader, follower.leader], [false, false]);
    release();
    ok(await until(5000, () => a.leader && a.status === 'open'), 'the first client leads once the lock is free');
    ok(await until(5000, () => heard.n > 0), 'the follower hears tick');
    a.close();
    follower.close();
    ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
  });
}

/** Shows `doc` (this page's document or an iframe's) as hidden or visible, as the browser does on a tab switch. */
function show(doc, state) {
  Object.defineProperty(doc, 'visibilityState', { value: state, configurable: true });
  Object.defineProperty(doc, 'hidden', { value: state !== 'visible', configurable: true });
  doc.dispatchEvent(new Event('visibilitychange'));
}

/** A client of `entry` made in an iframe of its own (a page of its own: its own module and document). */
async function inFrame(entry, u, opts) {
  const frame = document.createElement('iframe');
  frame.srcdoc = `<script type="module">
    import '${location.origin}/pkg/share.js';
    import { ManagedEventSource } from '${location.origin}/pkg/${entry}.js';
    window.es = new ManagedEventSource(${JSON.stringify(u)}, ${JSON.stringify(opts)});
  </script>`;
  document.body.append(frame);
  ok(await until(5000, () => frame.contentWindow.es), 'the frame made its client');
  return frame;
}

for (const [entry, extra] of ENTRIES) {
  test(`${entry}: pauseWhenHiddenMs pauses a shared stream once every page that shares it is hidden, not while one is in view`, async () => {
    if (!sharing) return;
    const { ManagedEventSource } = await import(`/pkg/${entry}.js`);
    const c = `share-hidden-${entry}`, name = `${c}-${Math.random()}`;
    await plan(c, '', 'stream');
    const opts = { share: name, lastEventIdParam: 'lastEventId', pauseWhenHiddenMs: 200, ...extra };
    // The leader's page is an iframe; the follower is this page.
    const frame = await inFrame(entry, url(c), opts);
    ok(await until(5000, () => frame.contentWindow.es.status === 'open'), 'the frame leads');
    const follower = new ManagedEventSource(url(c), opts);
    const ids = [];
    follower.onmessage = (e) => ids.push(Number(e.lastEventId));
    ok(await until(5000, () => ids.length >= 3), 'the follower hears the stream');
    try {
      // The leader's page leaves the view; this one stays: the stream goes on.
      show(frame.contentDocument, 'hidden');
      await sleep(600);
      const n = ids.length;
      ok(await until(2000, () => ids.length >= n + 5), `the stream goes on while a page shows it (${ids.length - n} events)`);
      eq([follower.status, frame.contentWindow.es.leader, (await log(c)).open], ['open', true, 1]);
      // Every page hidden: it pauses (the connection goes, status reconnecting).
      show(document, 'hidden');
      ok(await until(3000, async () => follower.status === 'reconnecting' && (await log(c)).open === 0), `paused: ${follower.status}`);
      // This page in view again: the leader reconnects at once, resuming.
      const paused = ids.length;
      show(document, 'visible');
      ok(await until(3000, () => follower.status === 'open' && ids.length >= paused + 3), `resumed: ${follower.status}`);
      eq(ids, ids.map((_, i) => ids[0] + i), 'every event once, in order');
      eq((await log(c)).attempts.length, 2);
    } finally {
      show(document, 'visible');
      follower.close();
      frame.remove();
    }
    ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
  });
}

test('an event the previous leader relayed before letting go, which reaches the next one after the lock: delivered, resumed after, and until on it ends the stream with no connection of its own', async () => {
  if (!sharing) return;
  for (const variant of ['until', 'resume']) {
    // A copy of the package of its own, whose module is compiled only when its client comes to lead
    // (slowly: the compile waits 500 ms), so that the lock reaches it well before it begins.
    const { ManagedEventSource } = await import(`/pkg/share.js?late-${variant}`);
    const c = `share-late-${variant}`, name = `${c}-${Math.random()}`;
    await plan(c, '', 'stream');
    // The lock is held by "another tab's leader", which relays over a channel of the stream's name.
    let release;
    await new Promise((held) => navigator.locks.request(`managed-eventsource:${name}`, () => (held(), new Promise((r) => (release = r)))));
    const previous = new BroadcastChannel(`managed-eventsource:${name}`);
    const compile = WebAssembly.compile;
    WebAssembly.compile = (bytes) => sleep(500).then(() => compile(bytes));
    let next;
    try {
      next = new ManagedEventSource(url(c), { share: name, lastEventIdParam: 'lastEventId', ...(variant === 'until' ? { until: (e) => e.data === 'done' } : {}) });
      const seen = [];
      next.onmessage = (e) => seen.push([e.data, e.lastEventId]);
      release();
      ok(await until(2000, () => next.leader), 'the lock came');
      // The previous leader's last event, which arrives after the lock did.
      previous.postMessage({ kind: 'event', type: 'message', data: 'done', id: '7', origin: location.origin });
      ok(await until(2000, () => seen.length > 0), 'delivered');
      eq(seen[0], ['done', '7']);
      eq(next.lastEventId, '7');
      if (variant === 'until') {
        ok(await until(2000, () => next.status === 'closed'), next.status);
        await sleep(700); // past the compile
        eq((await log(c)).attempts.length, 0, 'no connection of its own');
      } else {
        ok(await until(3000, async () => (await log(c)).attempts.length === 1), 'it connects');
        ok((await log(c)).attempts[0].url.endsWith('&lastEventId=7'), 'resuming after the relayed event');
      }
    } finally {
      WebAssembly.compile = compile;
      next?.close();
      previous.close();
    }
  }
});

/**
 * A page of an opaque origin (an iframe sandboxed without allow-same-origin), where Web Locks refuse every
 * request with a SecurityError, running `body` (a module script's text, with `entry`'s ManagedEventSource in
 * scope and `tell(value)` posting to this page). Returns the frame and the messages it has told.
 */
function sandboxed(entry, body) {
  const frame = document.createElement('iframe');
  frame.sandbox = 'allow-scripts';
  const told = [];
  const hear = (m) => m.source === frame.contentWindow && told.push(m.data);
  addEventListener('message', hear);
  frame.srcdoc = `<script type="module">
    const tell = (value) => parent.postMessage(value, '*');
    const warned = [];
    const warn = console.warn;
    console.warn = (...a) => (warned.push(a.map(String).join(' ')), warn.apply(console, a));
    await import('${location.origin}/pkg/share.js');
    const { ManagedEventSource } = await import('${location.origin}/pkg/${entry}.js');
    ${body}
  </script>`;
  document.body.append(frame);
  return { frame, told, done: () => (removeEventListener('message', hear), frame.remove()) };
}

for (const [entry, extra] of ENTRIES) {
  test(`${entry}: where Web Locks are refused (a sandboxed iframe), shared clients connect on their own, a for await loop runs, and the page is told why once`, async () => {
    if (!sharing) return;
    const c = `share-refused-${entry}`;
    await plan(c, '', 'stream');
    const opts = { share: `${c}-${Math.random()}`, jitter: 'none', baseMs: 30, maxMs: 100, ...extra };
    const { frame, told, done } = sandboxed(entry, `
      const made = [0, 1].map(() => new ManagedEventSource(${JSON.stringify(url(c))}, ${JSON.stringify(opts)}));
      const state = () => ({ statuses: made.map((x) => x.status), leaders: made.map((x) => x.leader), warned, origin: location.origin });
      for (const x of made) x.onstatus = () => tell(state());
      let taken = 0;
      for await (const e of made[1]) if (++taken === 3) break;
      tell({ ...state(), taken });
      addEventListener('message', (m) => m.data === 'close' && (made[0].close(), tell(state())));
    `);
    try {
      ok(await until(8000, () => told.some((t) => t.taken === 3)), `the frame's loop took 3 events: ${JSON.stringify(told.at(-1))}`);
      const last = told.find((t) => t.taken === 3);
      eq(last.origin, 'null', 'an opaque origin');
      eq(last.statuses, ['open', 'closed'], 'the first client open, the loop\'s closed by its break');
      eq(last.leaders, [true, true], 'each holds its connection');
      eq(last.warned.length, 1, `told once: ${JSON.stringify(last.warned)}`);
      ok(/Web Locks/.test(last.warned[0]) && /SecurityError/.test(last.warned[0]), last.warned[0]);
      const l = await log(c);
      eq(l.attempts.length, 2, 'two connections, one each');
      frame.contentWindow.postMessage('close', '*');
      ok(await until(3000, () => told.at(-1).statuses?.[0] === 'closed'), 'closed');
      ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
    } finally {
      done();
    }
  });
}

for (const [entry, extra] of [['index', { probe: true }], ['fetch', { transport: 'fetch' }]]) {
  test(`${entry}: a stream the server ends for good (204) ends in every tab that shares it: the followers are closed, their loops end, and no tab asks the server again`, async () => {
    if (!sharing) return;
    const { ManagedEventSource } = await import(`/pkg/${entry}.js`);
    const c = `share-ended-${entry}`;
    // Five events, then the stream is over: every request after the first is answered 204.
    await plan(c, 'events:5', '204');
    const opts = { share: `${c}-${Math.random()}`, jitter: 'none', baseMs: 30, maxMs: 100, ...extra };
    const leader = new ManagedEventSource(url(c), opts);
    const followers = [new ManagedEventSource(url(c), opts), new ManagedEventSource(url(c), opts)];
    const heard = followers.map(() => []);
    followers.forEach((f, i) => (f.onstatus = (s) => heard[i].push(s)));
    const loop = (async () => {
      let n = 0;
      for await (const _ of followers[1]) n++;
      return n;
    })();
    ok(await until(5000, () => leader.status === 'closed'), `the leader is closed: ${leader.status}`);
    // What the leader asked: its stream, the 204 (and with the EventSource transport, the probe's).
    const asked = (await log(c)).attempts.map((a) => a.step);
    const ended = await Promise.race([loop, sleep(3000).then(() => 'still waiting')]);
    eq(typeof ended, 'number', `a follower's for await loop ends (${ended})`);
    eq(followers.map((f) => [f.status, f.readyState, f.leader]), [['closed', 2, false], ['closed', 2, false]], `the leader ${leader.leader}, heard ${JSON.stringify(heard)} ${JSON.stringify((await log(c)).attempts.map((a) => [a.step, Math.round(a.t)]))}`);
    eq(heard.map((h) => h.at(-1)), ['closed', 'closed'], 'each follower heard closed');
    // The leader's page goes: no follower takes the lead to ask again (before, each did in turn).
    leader.close();
    await sleep(600);
    eq((await log(c)).attempts.map((a) => a.step), asked, 'no tab asks the server again');
    eq((await log(c)).open, 0, 'nothing open at the server');
    for (const f of followers) f.close();
  });
}

test('a closed shared client, leader or follower, takes a listener of a new type as a closed EventSource does: no error', async () => {
  if (!sharing) return;
  const { ManagedEventSource } = await import('/pkg/index.js');
  const c = 'share-closed-listener';
  await plan(c, '', 'stream');
  const opts = { share: `${c}-${Math.random()}` };
  const leader = new ManagedEventSource(url(c), opts);
  const follower = new ManagedEventSource(url(c), opts);
  ok(await until(5000, () => leader.status === 'open' && follower.status === 'open'), 'both open');
  const closedAtOnce = new ManagedEventSource(url(c), opts);
  closedAtOnce.close();
  follower.close();
  leader.close();
  for (const [name, es] of [['leader', leader], ['follower', follower], ['closed in its constructor\'s task', closedAtOnce]]) {
    const heard = [];
    es.addEventListener(`new-${name}`, (e) => heard.push(e.type));
    es.dispatchEvent(new Event(`new-${name}`));
    eq(heard, [`new-${name}`], name);
  }
  ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
});

test("a shared stream that failed stays failed when the leader's tab goes: the next tab leads without asking, until reconnectNow() in any tab", async () => {
  if (!sharing) return;
  const { ManagedEventSource } = await import('/pkg/index.js');
  const c = 'share-failed';
  await plan(c, '', '503');
  const opts = { share: `${c}-${Math.random()}`, jitter: 'none', baseMs: 20, maxMs: 20, maxAttempts: 2 };
  const [a, b, d] = [0, 1, 2].map(() => new ManagedEventSource(url(c), opts));
  ok(await until(5000, () => [a, b, d].every((x) => x.status === 'failed')), `all failed: ${[a, b, d].map((x) => x.status)}`);
  const asked = (await log(c)).attempts.length;
  a.close(); // the leader's tab goes
  ok(await until(3000, () => b.leader), 'the next tab leads');
  await sleep(300);
  eq((await log(c)).attempts.length, asked, 'nothing asked again');
  eq([b.status, d.status, b.readyState], ['failed', 'failed', 2]);
  // A tab that joins now hears the stream's state from the new leader.
  const late = new ManagedEventSource(url(c), opts);
  ok(await until(3000, () => late.status === 'failed'), `a tab that joins hears 'failed': ${late.status}`);
  // reconnectNow() in a follower's tab starts the leader again.
  await plan(c, '', 'stream');
  d.reconnectNow();
  ok(await until(5000, () => [b, d, late].every((x) => x.status === 'open')), `open again: ${[b, d, late].map((x) => x.status)}`);
  eq((await log(c)).open, 1, 'one connection');
  for (const x of [b, d, late]) x.close();
  ok(await until(3000, async () => (await log(c)).open === 0), 'nothing open at the server');
});

test("without the share entry, share throws a TypeError naming it (not a silent connection per tab); share: false needs nothing; importing the entry anywhere makes every entry's class share", async () => {
  // A copy of the package of its own, into which no share entry has registered yet.
  const copy = await import('/pkg/index.js?no-share');
  for (const share of [true, 'feed']) {
    let thrown;
    try {
      new copy.ManagedEventSource(url('share-missing'), { share });
    } catch (e) {
      thrown = e;
    }
    ok(thrown instanceof TypeError, `share: ${share} threw ${thrown}`);
    ok(/managed-eventsource\/share/.test(thrown.message), thrown.message);
  }
  const alone = new copy.ManagedEventSource(url('share-missing'), { share: false });
  alone.close();
  await import('/pkg/share.js?no-share');
  const shared = new copy.ManagedEventSource(url('share-missing'), { share: `share-missing-${Math.random()}` });
  eq(shared.status, 'connecting', 'made, once the entry is imported');
  shared.close();
});
