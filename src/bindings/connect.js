// What every framework binding does with one client: makes it from the user's options and turns what it
// tells into immutable state snapshots. Bundled into each binding (pkg/react.js, vue.js, svelte.js,
// solid.js; angular.js imports only its keyOf); it may use only the package's public API, imported from the package's own entry, so that a
// binding and the user's code share one module (and one wasm instance).
//
// What must stay true: once `stop()` has run, no callback of that client reaches `update` again, so a
// binding that stops the old connection before it opens the new one never shows an event of the old one in
// the new state (vueuse#5596).

import { ManagedEventSource } from 'managed-eventsource';

/** What tells one URL from another: null for none, a URL function itself, else the URL's text (so that a
 * new string or URL object with the same text is the same URL, and does not reconnect). */
export const keyOf = (url) => (url == null ? null : typeof url === 'function' ? url : `${url}`);

/** The state of a binding that has no connection (a null URL, or not yet started). */
export const idle = (status) => ({ status, lastEvent: null, error: null, attempt: 0 });

/**
 * Opens a client for `url` and calls `update(state)` with a new snapshot whenever its state changes, the
 * first time before it returns. The binding's own options, `client` (the class to construct; default the
 * main entry's ManagedEventSource), `events` (named events to follow besides `message`) and `onMessage`
 * (called with each of those events, which a render may batch), are taken out; every other option reaches
 * the constructor as given, which throws for a bad one.
 */
export function connect(url, options, update) {
  const { client: Client = ManagedEventSource, events = [], onMessage, ...rest } = options ?? {};
  if (!Array.isArray(events)) throw new TypeError('managed-eventsource: option events must be an array of event names');
  // Server-side rendering (no document): nothing connects, and the state stays what the browser's first
  // render shows, 'connecting'.
  if (typeof document === 'undefined') {
    update(idle('connecting'));
    return { reconnectNow() {}, close() {}, stop() {} };
  }
  const source = new Client(url, rest);
  let state = idle(source.status);
  let live = true;
  const set = (change) => live && update((state = { ...state, ...change }));
  source.onstatus = (status) => set({ status, attempt: source.attempt, ...(status === 'open' && { error: null }) });
  source.onretry = ({ attempt }) => set({ attempt });
  source.onerror = (error) => set({ error });
  for (const type of ['message', ...events]) {
    source.addEventListener(type, (lastEvent) => {
      set({ lastEvent });
      if (live) onMessage?.(lastEvent);
    });
  }
  update(state);
  return {
    reconnectNow: () => source.reconnectNow(),
    close: () => source.close(),
    stop() {
      live = false;
      source.close();
    },
  };
}
