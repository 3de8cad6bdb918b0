// Types of managed-eventsource/solid (src/bindings/solid.js).
import type { Accessor } from 'solid-js';
import type { Status } from 'managed-eventsource';
import type { BindingOptions, StreamControls } from './bindings.js';

export type { BindingOptions, ClientClass, StreamControls, StreamState } from './bindings.js';

/** The state as accessors (signals). */
export interface StreamSignals extends StreamControls {
  status: Accessor<Status>;
  lastEvent: Accessor<MessageEvent<string> | null>;
  error: Accessor<Event | null>;
  attempt: Accessor<number>;
}

/**
 * The state of a managed stream for `url` (a value or an accessor; no connection while it is null or
 * undefined) as signals, cleaned up with the reactive owner that created it.
 */
export declare function createManagedEventSource(url: string | URL | null | undefined | Accessor<string | URL | null | undefined>, options?: BindingOptions): StreamSignals;
