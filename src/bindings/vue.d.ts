// Types of managed-eventsource/vue (src/bindings/vue.js).
import type { MaybeRefOrGetter, ShallowRef } from 'vue';
import type { ManagedEventSource, Status } from 'managed-eventsource';
import type { FetchOptions } from 'managed-eventsource/fetch';

/** The class a binding constructs: the main entry's ManagedEventSource (the default) or another entry's, e.g.
 * managed-eventsource/fetch's for `transport: 'fetch'`. */
export type ClientClass = new (url: string | URL | (() => string | URL), options?: FetchOptions) => ManagedEventSource;

/** The client's options, passed to its constructor as given, and the binding's own two. Read when a
 * connection opens (on mount and on each URL change): a new options object alone never reconnects. */
export interface BindingOptions extends FetchOptions {
  /** The class to construct. Default: ManagedEventSource of managed-eventsource. */
  client?: ClientClass;
  /** Named events to follow besides `message`: each one becomes `lastEvent`. */
  events?: readonly string[];
  /** Called with every event that becomes `lastEvent`, of the current connection only: for code that must
   * see each one (a render shows the last of those that arrived since the one before). */
  onMessage?: (ev: MessageEvent<string>) => void;
}

/** A stream's state as the binding shows it. */
export interface StreamState {
  /** The client's status; `'closed'` while there is no URL. */
  status: Status;
  /** The last `message` (or named event of `events`) of the current connection; null before the first. */
  lastEvent: MessageEvent<string> | null;
  /** The last `error` event since the stream was last open; null while open. */
  error: Event | null;
  /** Reconnect attempts in a row so far; 0 while open. */
  attempt: number;
}

/** What a binding does to its current client. */
export interface StreamControls {
  /** Resets the ladder and connects at once, also after status `'failed'`. */
  reconnectNow(): void;
  /** Closes the current connection (status `'closed'`) until the URL changes. */
  close(): void;
}

/** The state as refs: read `.value`, or use them in a template. */
export interface StreamRefs extends StreamControls {
  readonly status: Readonly<ShallowRef<Status>>;
  readonly lastEvent: Readonly<ShallowRef<MessageEvent<string> | null>>;
  readonly error: Readonly<ShallowRef<Event | null>>;
  readonly attempt: Readonly<ShallowRef<number>>;
}

/**
 * The state of a managed stream for `url` (a value, a ref or a getter; no connection while it is null or
 * undefined) as refs, closed with the effect scope that called it.
 */
export declare function useManagedEventSource(
  url: MaybeRefOrGetter<string | URL | null | undefined>,
  options?: BindingOptions,
): StreamRefs;
