// managed-eventsource/angular: `sseResource`, a stream as Angular signals (the value, the status, the error
// and the attempt), closed with the injector that owns it.
//
// Built on the package's public API only (ManagedEventSource and its callbacks) and on @angular/core, an
// optional peer dependency. It holds no policy: every option the package knows goes to the client as given;
// only seed 003's `reconnect: { initialDelayMs, factor, maxDelayMs, maxAttempts }` object is spelt in the
// package's names (docs/reference.md maps each).
//
// What must stay true:
// - one client at a time: the effect that reads the URL closes the current client (its cleanup) before it
//   makes the next, and the injector's destruction, or close(), runs the same cleanup;
// - a callback writes the signals only while its client is the current one, so an event of a replaced
//   client never reaches the new state (the package delivers nothing after close(); this holds even so);
// - the URL function runs in a computed the effect reads, so a signal it reads opens a new connection when
//   the URL's text changes; everything else (parse, the callbacks) runs untracked.

import { ManagedEventSource } from 'managed-eventsource';
import { Injector, PLATFORM_ID, assertInInjectionContext, computed, effect, inject, signal, untracked } from '@angular/core';
import { keyOf } from './connect.js';

/** Seed 003's backoff object, in the package's option names. */
function ladderOptions(reconnect) {
  if (reconnect === null || typeof reconnect !== 'object') return { reconnect };
  const { initialDelayMs, maxDelayMs, ...rest } = reconnect;
  const named = { reconnect: 'backoff', ...rest };
  if (initialDelayMs !== undefined) named.baseMs = initialDelayMs;
  if (maxDelayMs !== undefined) named.maxMs = maxDelayMs;
  return named;
}

export function sseResource(url, options = {}) {
  const { injector: given, parse = JSON.parse, event = 'message', onMessage, client: Client = ManagedEventSource, reconnect, ...passed } = options;
  if (!given) assertInInjectionContext(sseResource);
  const injector = given ?? inject(Injector);
  // Server-side rendering (a server platform, or no document): nothing connects, and the status stays what
  // the browser's first render shows, 'connecting' ('closed' for a null URL).
  const server = injector.get(PLATFORM_ID, null) === 'server' || typeof document === 'undefined';
  const clientOptions = { ...passed, ...(reconnect === undefined ? {} : ladderOptions(reconnect)) };
  // The URL, changed only when its text does (keyOf): a signal the URL function reads may change and give
  // the same URL, which keeps the connection.
  const read = typeof url === 'function' ? computed(url, { equal: (a, b) => keyOf(a) === keyOf(b) }) : () => url;

  const value = signal(undefined);
  const status = signal('connecting');
  const error = signal(undefined);
  const attempt = signal(0);
  /** The client whose callbacks may write the signals; null when there is none. */
  let current = null;

  function connect(target) {
    const source = new Client(target, clientOptions);
    current = source;
    const mine = (write) => (arg) => source === current && write(arg);
    source.onstatus = mine((s) => {
      status.set(s);
      attempt.set(source.attempt);
      if (s === 'open') error.set(undefined);
    });
    source.onretry = mine((info) => attempt.set(info.attempt));
    source.onerror = mine((ev) => error.set(ev));
    source.addEventListener(event, mine((ev) => {
      try {
        value.set(parse(ev.data, ev));
      } catch (e) {
        error.set(e);
      }
      onMessage?.(ev);
    }));
    // The client's first status was told in its constructor, before onstatus was set.
    status.set(source.status);
    attempt.set(source.attempt);
    return source;
  }

  // Registered with the injector's DestroyRef (Angular does it for an effect): destroying the injector, or
  // close(), destroys the effect, which runs its cleanup.
  const watcher = effect(
    (onCleanup) => {
      const target = read();
      untracked(() => {
        // A new URL (or none) starts from nothing, as a new request does in Angular's resource().
        value.set(undefined);
        error.set(undefined);
        if (target == null) return status.set('closed');
        if (server) return status.set('connecting');
        let source;
        try {
          source = connect(target);
        } catch (e) {
          // A bad option: shown in the signals, and thrown to Angular's ErrorHandler.
          error.set(e);
          status.set('failed');
          throw e;
        }
        onCleanup(() => {
          current = null;
          source.close();
          status.set('closed');
        });
      });
    },
    { injector },
  );

  return {
    value: value.asReadonly(),
    status: status.asReadonly(),
    error: error.asReadonly(),
    attempt: attempt.asReadonly(),
    reconnectNow: () => current?.reconnectNow(),
    close: () => watcher.destroy(),
  };
}
