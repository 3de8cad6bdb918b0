// managed-eventsource/vue: useManagedEventSource, a composable whose state is refs, closed with the effect
// scope that called it (a component's setup, or effectScope()). Vue is an optional peer dependency.
//
// What must stay true: the URL (a string, a ref or a getter) is watched; a change of its text closes the old
// connection before the new one opens, and the refs are reset in between, so no event of the old one
// reaches them. Options are read when a connection opens: a changed options object alone never reconnects.

import { getCurrentScope, onScopeDispose, shallowRef, toValue, watch } from 'vue';
import { connect, idle, keyOf } from './connect.js';

/** The state of a managed stream for `url` (no connection while it is null or undefined) as refs. */
export function useManagedEventSource(url, options) {
  const status = shallowRef('closed');
  const lastEvent = shallowRef(null);
  const error = shallowRef(null);
  const attempt = shallowRef(0);
  let connection = null;
  const show = (state) => {
    status.value = state.status;
    lastEvent.value = state.lastEvent;
    error.value = state.error;
    attempt.value = state.attempt;
  };
  const drop = () => {
    connection?.stop();
    connection = null;
  };
  // Watched by its text (keyOf), so that a new URL object or string with the same text keeps the connection.
  watch(
    () => keyOf(toValue(url)),
    (key) => {
      drop();
      show(idle('closed'));
      if (key != null) connection = connect(key, options, show);
    },
    { immediate: true },
  );
  if (getCurrentScope())
    onScopeDispose(() => {
      drop();
      status.value = 'closed';
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
