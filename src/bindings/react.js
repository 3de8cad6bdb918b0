// managed-eventsource/react: useManagedEventSource, a hook that owns one client while its component is
// mounted and renders its state through useSyncExternalStore. React is an optional peer dependency.
//
// What must stay true:
// - one connection per mounted hook: StrictMode's unmount-and-mount of the same URL keeps the connection
//   (an unmount closes it a microtask later, unless the same URL is mounted again first);
// - an unmounted hook's connection is closed before any hook opens a new one, so a remount (a new `key`)
//   closes the old connection before the new one opens, as a URL change does;
// - a URL change closes the old connection before the new one opens, and the state rendered for a URL is
//   never another URL's (the snapshot carries the key it belongs to);
// - options are read when a connection opens (mount, URL change): a new options object alone never
//   reconnects; only `onMessage` is the latest committed render's, as a React callback prop is;
// - a URL function is the latest committed render's too, called for each attempt: a new function alone (an
//   inline arrow) never reconnects; a change of the `key` option does, as a new URL does.

import { useEffect, useState, useSyncExternalStore } from 'react';
import { connect, idle, keyOf } from './connect.js';

const CLOSED = idle('closed');
const CONNECTING = idle('connecting');

/** The drop of every hook whose effect was cleaned up and whose connection is still open: each closes a
 * microtask later unless its hook holds the same URL again first, and at once when any hook opens one. */
const departing = new Set();

/** One hook's connection, and the store that useSyncExternalStore reads. */
function makeOwner() {
  const listeners = new Set();
  let connection = null;
  /** The connection an unmount is about to close, unless it is mounted again first. */
  let leaving = null;
  let snapshot = { key: null, state: CLOSED };
  /** The latest committed render's onMessage, which every connection of this hook calls, and its URL
   * function (if its URL is one), which every attempt of this hook's connection calls. */
  let onMessage, urlFunction;
  const latestUrl = () => urlFunction();
  const drop = () => {
    departing.delete(drop);
    connection?.stop();
    connection = leaving = null;
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get: () => snapshot,
    /** Takes a committed render's onMessage and URL function. */
    heard(f, u) {
      onMessage = f;
      urlFunction = u;
    },
    /** The effect of a mount or URL change; returns its cleanup. */
    hold(key, url, options) {
      if (leaving && leaving === connection && connection.key === key) {
        leaving = null;
        departing.delete(drop);
      } else {
        drop();
        if (key != null) {
          for (const other of departing) other();
          const { key: _, ...rest } = options ?? {};
          const made = connect(typeof url === 'function' ? latestUrl : url, { ...rest, onMessage: (ev) => onMessage?.(ev) }, (state) => {
            snapshot = { key, state };
            for (const listener of listeners) listener();
          });
          connection = { key, ...made };
        }
      }
      const mine = connection;
      return () => {
        leaving = mine;
        if (mine) departing.add(drop);
        queueMicrotask(() => mine && leaving === mine && drop());
      };
    },
    reconnectNow: () => connection?.reconnectNow(),
    close: () => connection?.close(),
  };
}

/**
 * The state of a managed stream for `url` (no connection while it is null or undefined), and its
 * `reconnectNow` and `close`.
 */
export function useManagedEventSource(url, options) {
  // A URL function is told apart only by the `key` option (what it depends on besides what changes per
  // attempt, a token): an inline arrow is a new function every render.
  const urlFunction = typeof url === 'function' ? url : undefined;
  const k = options?.key;
  if (k !== undefined && typeof k !== 'string' && typeof k !== 'number') {
    throw new TypeError('managed-eventsource: option key must be a string or a number');
  }
  const key = urlFunction ? `\0function ${options?.key ?? ''}` : keyOf(url);
  const [owner] = useState(makeOwner);
  const { key: shown, state } = useSyncExternalStore(owner.subscribe, owner.get, owner.get);
  // Before the connection's effect, so that a new connection calls this render's onMessage.
  useEffect(() => owner.heard(options?.onMessage, urlFunction));
  useEffect(() => owner.hold(key, url, options), [key]);
  return {
    ...(shown === key ? state : key == null ? CLOSED : CONNECTING),
    reconnectNow: owner.reconnectNow,
    close: owner.close,
  };
}
