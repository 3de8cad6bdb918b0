// `share` in one page (several clients of one name stand for several tabs: each has a BroadcastChannel
// of its own): named events reach a follower's listeners whichever client leads, on both transports.
import { test, until, ok, eq, plan, log, url } from './lib.mjs';

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
