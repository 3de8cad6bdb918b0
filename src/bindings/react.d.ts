// Types of managed-eventsource/react (src/bindings/react.js).
import type { BindingOptions, StreamControls, StreamState } from './bindings.js';

export type { BindingOptions, ClientClass, StreamControls, StreamState } from './bindings.js';

/**
 * The state of a managed stream for `url`, and its controls; no connection while `url` is null or
 * undefined. A string or URL is compared by its text, a function (called for every attempt) by identity:
 * keep it stable (useCallback), or every render reconnects.
 */
export declare function useManagedEventSource(
  url: string | URL | (() => string | URL) | null | undefined,
  options?: BindingOptions,
): StreamState & StreamControls;
