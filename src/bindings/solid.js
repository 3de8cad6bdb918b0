// managed-eventsource/solid: createManagedEventSource, a primitive whose state is signals, cleaned up with
// the reactive owner that created it (a component, createRoot). solid-js is an optional peer dependency.
//
// What must stay true: the URL (a string or an accessor) is tracked by one effect; a change of its text runs its
// cleanup, which closes the old connection, before the new one opens, and the signals are reset in between,
// so no event of the old one reaches them. Options are read when a connection opens.

import { batch, createEffect, createMemo, createSignal, onCleanup, untrack } from 'solid-js';
import { connect, idle, keyOf } from './connect.js';

/** The state of a managed stream for `url` (no connection while it is null or undefined) as accessors. */
export function createManagedEventSource(url, options) {
  // The URL, changed only when its text does (a new object with the same URL keeps the connection).
  const current = createMemo(() => (typeof url === 'function' ? url() : url), undefined, { equals: (a, b) => keyOf(a) === keyOf(b) });
  // Before the effect connects (and on the server, where it never runs): what the other bindings show
  // there, 'connecting' ('closed' for a null URL), so that server HTML and hydration agree with them.
  const [status, setStatus] = createSignal(untrack(current) == null ? 'closed' : 'connecting');
  const [lastEvent, setLastEvent] = createSignal(null);
  const [error, setError] = createSignal(null);
  const [attempt, setAttempt] = createSignal(0);
  let connection = null;
  const show = (state) =>
    batch(() => {
      setStatus(state.status);
      setLastEvent(() => state.lastEvent);
      setError(() => state.error);
      setAttempt(state.attempt);
    });
  createEffect(() => {
    const next = current();
    untrack(() => {
      show(idle('closed'));
      if (next != null) connection = connect(next, options, show);
    });
    onCleanup(() => {
      connection?.stop();
      connection = null;
    });
  });
  return {
    status,
    lastEvent,
    error,
    attempt,
    reconnectNow: () => connection?.reconnectNow(),
    close: () => connection?.close(),
  };
}
