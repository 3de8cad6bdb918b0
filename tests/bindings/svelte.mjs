// managed-eventsource/svelte with Svelte 5: a runes-mode component compiled by svelte/compiler, the URL a
// writable store; and the store used with no component.
import { flushSync, mount as mountSvelte, unmount } from 'svelte';
import { get, writable } from 'svelte/store';
import { managedEventSource } from 'managed-eventsource/svelte';
import { test, ok, eq, until, plan, log, url } from '/tests/browser/lib.mjs';
import { counting } from './common.mjs';
import { scenarios } from './scenarios.mjs';
import Feed from './Feed5.svelte';

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
