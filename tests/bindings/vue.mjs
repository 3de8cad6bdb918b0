// managed-eventsource/vue with Vue 3.5: components written as render functions (no template compiler).
import { createApp, defineComponent, effectScope, h, nextTick, ref, shallowRef } from 'vue';
import { useManagedEventSource } from 'managed-eventsource/vue';
import { test, ok, eq, until, plan, log, url } from '/tests/browser/lib.mjs';
import { counting, mountPoint, show } from './common.mjs';
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
  ok(await until(3000, () => feed.status.value === 'open' && feed.lastEvent.value?.data === 'event 2'), feed.status.value);
  eq(feed.lastEvent.value.target.url, url(c));
  scope.stop();
  ok(await until(3000, async () => (await log(c)).open === 0), 'the server sees the stream closed with the scope');
  eq(history.map((h) => h[0]), ['new', 'close']);
  eq(feed.status.value, 'closed');
});
