// managed-eventsource/vue with Vue 3.5: components written as render functions (no template compiler).
import { KeepAlive, createApp, defineComponent, effectScope, h, nextTick, ref, shallowRef, watchEffect } from 'vue';
import { useManagedEventSource } from 'managed-eventsource/vue';
import { test, ok, eq, until, sleep, plan, log, url } from '/tests/browser/lib.mjs';
import { counting, eventNumber, mountPoint, show } from './common.mjs';
import { scenarios } from './scenarios.mjs';

const current = (feed) => ({ status: feed.status.value, attempt: feed.attempt.value, lastEvent: feed.lastEvent.value, error: feed.error.value });

/** Mounts a component whose URL is a ref (`as: 'ref'`) or a getter over one (`as: 'getter'`). */
function mount(el, src, options, { as = 'ref' } = {}) {
  const address = ref(src);
  let feed;
  const Feed = defineComponent({
    setup() {
      feed = useManagedEventSource(as === 'ref' ? address : () => address.value, options);
      return () => h('p', { class: 'feed' }, show(current(feed)));
    },
  });
  const app = createApp(Feed);
  app.mount(el);
  return {
    async setUrl(u) {
      address.value = u;
      await nextTick();
    },
    unmount: async () => app.unmount(),
    feed: () => feed,
  };
}

scenarios('vue', mount);
scenarios('vue-getter', (el, src, options) => mount(el, src, options, { as: 'getter' }));

test('vue: closed with its effect scope; a plain string URL', async () => {
  const c = 'vue-scope';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const scope = effectScope();
  const feed = scope.run(() => useManagedEventSource(url(c), { client: Counted }));
  ok(await until(3000, () => feed.status.value === 'open' && eventNumber(feed.lastEvent.value) >= 2), feed.status.value);
  eq(feed.lastEvent.value.target.url, url(c));
  scope.stop();
  ok(await until(3000, async () => (await log(c)).open === 0), 'the server sees the stream closed with the scope');
  eq(history.map((h) => h[0]), ['new', 'close']);
  eq(feed.status.value, 'closed');
});

test('vue: a component deactivated by KeepAlive keeps its connection; unmounting the KeepAlive closes it', async () => {
  const c = 'vue-keepalive';
  await plan(c, '', 'stream');
  const { Counted, history } = counting();
  const shown = ref(true);
  let feed;
  const Feed = defineComponent({
    name: 'Feed',
    setup() {
      feed = useManagedEventSource(url(c), { client: Counted });
      return () => h('p', { class: 'feed' }, show(current(feed)));
    },
  });
  const App = defineComponent({ setup: () => () => h(KeepAlive, null, [shown.value ? h(Feed) : h('i', 'other')]) });
  const el = mountPoint();
  const app = createApp(App);
  app.mount(el);
  ok(await until(3000, () => feed.status.value === 'open'), feed.status.value);
  shown.value = false;
  await nextTick();
  await sleep(300);
  eq((await log(c)).open, 1, 'open while deactivated');
  const before = feed.lastEvent.value.data;
  shown.value = true;
  await nextTick();
  ok(await until(3000, () => feed.lastEvent.value.data !== before), 'events go on');
  eq(history.map((h) => h[0]), ['new']);
  app.unmount();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(history.map((h) => h[0]), ['new', 'close']);
  el.remove();
});

test('vue: a bad option throws its RangeError to app.config.errorHandler; nothing opens', async () => {
  const c = 'vue-bad';
  await plan(c, '', 'stream');
  const caught = [];
  const Feed = defineComponent({
    setup() {
      const feed = useManagedEventSource(url(c), { baseMs: -1 });
      return () => h('p', { class: 'feed' }, show(current(feed)));
    },
  });
  const el = mountPoint();
  const app = createApp(Feed);
  app.config.errorHandler = (e) => caught.push(e);
  app.mount(el);
  await sleep(100);
  ok(caught.length === 1 && caught[0] instanceof RangeError && /baseMs/.test(caught[0].message), String(caught));
  eq((await log(c)).attempts.length, 0);
  app.unmount();
  el.remove();
});

test('vue: watchEffect over the refs sees every status change, the scope closes it', async () => {
  const c = 'vue-watcheffect';
  await plan(c, '', 'stream');
  const scope = effectScope();
  const statuses = [];
  const feed = scope.run(() => useManagedEventSource(url(c)));
  // Outside the stream's scope, which stops its own effects before its cleanups set 'closed'.
  const watcher = effectScope();
  watcher.run(() => watchEffect(() => statuses.push(feed.status.value), { flush: 'sync' }));
  ok(await until(3000, () => statuses.at(-1) === 'open'), statuses.join());
  scope.stop();
  ok(await until(3000, async () => (await log(c)).open === 0));
  eq(statuses, ['connecting', 'open', 'closed']);
  watcher.stop();
});
