// Types of managed-eventsource/react (src/bindings/react.js).
import type { BindingOptions, StreamControls, StreamState } from './bindings.js';

export type { BindingOptions, ClientClass, StreamControls, StreamState } from './bindings.js';

/** The hook's options: the bindings' own and the client's, and `key` for a URL function. */
export type ReactBindingOptions = BindingOptions & {
  /**
   * With a URL function: what the URL it returns depends on besides what changes per attempt (a room id,
   * not a token). A new key reconnects, as a new URL does; a new function alone (an inline arrow) does not.
   * Not passed to the client.
   */
  key?: string | number;
};

/**
 * The state of a managed stream for `url`, and its controls; no connection while `url` is null or
 * undefined. A string or URL is compared by its text: a new text reconnects. A function is called for
 * every attempt, and it is the latest committed render's, so an inline arrow is fine: a new function never
 * reconnects by itself; pass `options.key` to reconnect when what it returns must change at once.
 */
export declare function useManagedEventSource(
  url: string | URL | (() => string | URL) | null | undefined,
  options?: ReactBindingOptions,
): StreamState & StreamControls;
