// Types of managed-eventsource/svelte (src/bindings/svelte.js). The store contract is written out here, so
// that these types hold against Svelte 4's and Svelte 5's own `Readable`.
import type { BindingOptions, StreamControls, StreamState } from './bindings.js';

export type { BindingOptions, ClientClass, StreamControls, StreamState } from './bindings.js';

/** Svelte's store contract: `subscribe` calls `run` at once and on every change. */
export interface StreamStore extends StreamControls {
  subscribe(run: (value: StreamState) => void, invalidate?: () => void): () => void;
}

/** A URL store: Svelte's `Readable` of a URL, or anything with its `subscribe`. */
export interface UrlStore {
  subscribe(run: (value: string | URL | null | undefined) => void): () => void;
}

/**
 * A store of the state of a managed stream for `url` (a string, a URL, a function called for every
 * attempt, or a store of a URL; no connection while it is null): the first subscriber opens the connection,
 * the last one's unsubscribe closes it.
 */
export declare function managedEventSource(url: string | URL | (() => string | URL) | UrlStore | null | undefined, options?: BindingOptions): StreamStore;
