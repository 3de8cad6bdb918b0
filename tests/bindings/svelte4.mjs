// managed-eventsource/svelte with Svelte 4: a component compiled by Svelte 4's compiler, the binding's
// svelte/store resolved to Svelte 4's (tests/bindings/build.mjs aliases svelte to svelte4 here).
import { tick } from 'svelte';
import { scenarios } from './scenarios.mjs';
import Feed from './Feed4.svelte';

function mount(el, src, options) {
  let feed;
  const app = new Feed({ target: el, props: { src, options, expose: (f) => (feed = f) } });
  return {
    async setUrl(u) {
      app.$set({ src: u });
      await tick();
    },
    unmount: async () => app.$destroy(),
    feed: () => feed,
  };
}

// Feed4.svelte makes a new store for each value of src (`$:`), so a new URL object reconnects there by the
// component's own statement, whatever the binding does.
scenarios('svelte4', mount, { sameText: false });
