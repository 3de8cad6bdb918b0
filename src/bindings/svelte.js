// managed-eventsource/svelte: managedEventSource, a readable store (Svelte's store contract, from
// svelte/store, the same in Svelte 4 and 5) whose value is the stream's state. Svelte is an optional peer
// dependency.
//
// What must stay true: the first subscriber opens the connection and the last unsubscribe closes it; a
// subscribe that throws (a bad option) leaves no subscriber, here or on a URL store, so the next one throws
// too. A URL may be a store: each value with new text closes the old connection before the new one opens,
// and the state is reset in between, so no event of the old one reaches it. Options are read when a
// connection opens.

import { readable } from 'svelte/store';
import { connect, idle, keyOf } from './connect.js';

/** A store of the state of a managed stream for `url` (a string, URL, URL function, or a store of one). */
export function managedEventSource(url, options) {
  let connection = null;
  /** What tells the URL the store shows from another (keyOf); undefined while nobody subscribes. */
  let shown;
  const drop = () => {
    connection?.stop();
    connection = null;
  };
  /** What the connection that a first subscriber opens threw (a bad option): that subscribe throws it. */
  let failure = null;
  const store = readable(idle('closed'), (set) => {
    let starting = true;
    const open = (next) => {
      // A URL store that tells a new object, or the same value again, with the same text keeps the connection.
      const key = keyOf(next);
      if (key === shown) return;
      shown = key;
      drop();
      set(idle('closed'));
      if (next == null) return;
      try {
        connection = connect(next, options, set);
      } catch (error) {
        // Thrown out of the URL store's subscribe, it would leave this store subscribed to it, and this
        // store's own subscriber registered with nothing started: every later subscribe would be silent.
        if (!starting) throw error;
        failure = error;
      }
    };
    const stopUrl = typeof url?.subscribe === 'function' ? url.subscribe(open) : open(url);
    starting = false;
    return () => {
      stopUrl?.();
      drop();
      shown = undefined;
    };
  });
  return {
    subscribe(run, invalidate) {
      const unsubscribe = store.subscribe(run, invalidate);
      if (failure) {
        const error = failure;
        failure = null;
        unsubscribe();
        throw error;
      }
      return unsubscribe;
    },
    reconnectNow: () => connection?.reconnectNow(),
    close: () => connection?.close(),
  };
}
