// Types shared by managed-eventsource/react, /vue, /svelte and /solid (src/bindings/*.d.ts): the options
// every binding takes, the state it shows and its controls. Shipped as pkg/bindings.d.ts (and .d.cts).
import type { ManagedEventSource, Options, Status } from 'managed-eventsource';
import type { FetchOptions } from 'managed-eventsource/fetch';

/** The class a binding constructs: the main entry's ManagedEventSource (the default) or another entry's, e.g.
 * managed-eventsource/fetch's for `transport: 'fetch'`. */
export type ClientClass = new (url: string | URL | (() => string | URL), options?: FetchOptions) => ManagedEventSource;

/** The binding's own options, taken out before the rest reach the client's constructor. */
export interface BindingOwnOptions {
  /** Named events to follow besides `message`: each one becomes `lastEvent`. */
  events?: readonly string[];
  /** Called with every event that becomes `lastEvent`, of the current connection only: for code that must
   * see each one (a render shows the last of those that arrived since the one before). */
  onMessage?: (ev: MessageEvent<string>) => void;
}

/** With the main entry's class (the default `client`): its options; the fetch transport's are refused,
 * as its constructor refuses them (a TypeError naming the option). */
export interface EventSourceBindingOptions extends Options, BindingOwnOptions {
  /** The class to construct. Default: ManagedEventSource of managed-eventsource. */
  client?: ClientClass;
  transport?: 'eventsource';
  headers?: never;
  method?: never;
  body?: never;
  fetch?: never;
}

/** With managed-eventsource/fetch's class as `client` (needed for `transport: 'fetch'`, `headers`,
 * `method`, `body`, `fetch`): its options. */
export interface FetchBindingOptions extends FetchOptions, BindingOwnOptions {
  /** managed-eventsource/fetch's ManagedEventSource, or a class that extends it. */
  client: ClientClass;
}

/** The client's options, passed to its constructor as given, and the binding's own. Read when a connection
 * opens (on mount and on each URL change): a new options object alone never reconnects. */
export type BindingOptions = EventSourceBindingOptions | FetchBindingOptions;

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
