// managed-eventsource/svelte with Svelte 5: a runes-mode component compiled by svelte/compiler, the URL a
// writable store; and the store used with no component.
import { flushSync, mount as mountSvelte, unmount } from 'svelte';
import { get, writable } from 'svelte/store';
import { managedEventSource } from 'managed-eventsource/svelte';
import { test, ok, eq, until, throws, plan, log, url } from '/tests/browser/lib.mjs';
import { counting } from './common.mjs';
import { scenarios } from './scenarios.mjs';
import Feed from './Feed5.svelte';
import FeedDerived from './Feed5Derived.svelte';
import FeedEffect from './Feed5Effect.svelte';
import Props from './Props5.svelte';

function mount(el, src, options) {
  const address = writable(src);
  let feed;
  const app = mountSvelte(Feed, { target: el, props: { address, options, expose: (f) => (feed = f) } });
  flushSync();
  return {
    async setUrl(u) {
      address.set(u);
      flushSync();
    },
    unmount: async () => unmount(app),
    feed: () => feed,
  };
}

scenarios('svelte5', mount);

/** Mounts `component` with its URL a $state prop of a parent (Props5.svelte). */
function mountWithProp(component) {
  return (el, src, options) => {
    let feed;
    let setSrc;
    const app = mountSvelte(Props, { target: el, props: { component, initial: src, options, expose: (f) => (feed = f), control: (set) => (setSrc = set) } });
    flushSync();
    return {
      async setUrl(u) {
        setSrc(u);
        flushSync();
      },
      unmount: async () => unmount(app),
      feed: () => feed,
    };
  };
}

scenarios('svelte5-derived', mountWithProp(FeedDerived));
// A new store for each URL value, made by the component's $effect: a new URL object reconnects there.
scenarios('svelte5-effect', mountWithProp(FeedEffect), { sameText: false });

test('svelte5: the store alone: the first subscriber opens, the last unsubscribe closes', async () => {
  const c = 'svelte5-store';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const feed = managedEventSource(url(c), { client: Counted });
  // get() subscribes and unsubscribes: it reads the state a new connection starts with, and closes it.
  eq(get(feed).status, 'connecting');
  eq(history.map((h) => h[0]), ['new', 'close']);
  const seen = [];
  const stopA = feed.subscribe((s) => seen.push(s.status));
  const stopB = feed.subscribe(() => {});
  ok(await until(3000, () => seen.at(-1) === 'open'), seen.join());
  stopA();
  eq((await log(c)).open, 1, 'one subscriber left');
  stopB();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close', 'new', 'close']);
});

test('svelte5: a bad option: each subscribe throws the RangeError, and a URL store is left with no subscriber', async () => {
  const c = 'svelte5-bad';
  await plan(c, '', 'stream');
  const feed = managedEventSource(url(c), { baseMs: -1 });
  for (let i = 0; i < 2; i++) {
    const e = throws(() => feed.subscribe(() => {}), `subscribe ${i + 1} did not throw`);
    ok(e instanceof RangeError && /baseMs/.test(e.message), String(e));
  }
  const address = writable(url(c));
  let watching = 0;
  const counted = { subscribe: (run) => { watching++; const stop = address.subscribe(run); return () => { watching--; stop(); }; } };
  const fromStore = managedEventSource(counted, { baseMs: -1 });
  throws(() => fromStore.subscribe(() => {}), 'no throw from a URL store');
  eq(watching, 0, 'subscribers left on the URL store');
  address.set(url(c, '&v=2'));
  eq((await log(c)).attempts.length, 0);
});
