// Types of managed-eventsource/vue (src/bindings/vue.js).
import type { MaybeRefOrGetter, ShallowRef } from 'vue';
import type { Status } from 'managed-eventsource';
import type { BindingOptions, StreamControls } from './bindings.js';

export type { BindingOptions, ClientClass, StreamControls, StreamState } from './bindings.js';

/** The state as refs: read `.value`, or use them in a template. */
export interface StreamRefs extends StreamControls {
  readonly status: Readonly<ShallowRef<Status>>;
  readonly lastEvent: Readonly<ShallowRef<MessageEvent<string> | null>>;
  readonly error: Readonly<ShallowRef<Event | null>>;
  readonly attempt: Readonly<ShallowRef<number>>;
}

/**
 * The state of a managed stream for `url` (a value, a ref or a getter; no connection while it is null or
 * undefined) as refs, closed with the effect scope that called it. A URL function (called for every attempt)
 * goes through a getter that returns it: `() => urlFunction`.
 */
export declare function useManagedEventSource(
  url: MaybeRefOrGetter<string | URL | (() => string | URL) | null | undefined>,
  options?: BindingOptions,
): StreamRefs;
