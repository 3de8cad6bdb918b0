// Types of managed-eventsource/angular: sseResource, a stream as Angular signals, closed with its injector.
import type { Injector, Signal } from '@angular/core';
import type { ManagedEventSource, Options, Status } from './index.js';
import type { FetchOptions } from './fetch.js';

/** sseResource's backoff object, each field a package option under another name: the delay before reconnect n (from 0) is at most
 * min(maxDelayMs, initialDelayMs × factor^n), drawn with the package's `jitter` (default 'full'). */
export interface SseBackoff {
  /** The package's `baseMs`. Default 1000. */
  initialDelayMs?: number;
  /** The package's `factor`. Default 2. */
  factor?: number;
  /** The package's `maxMs`. Default 60000. */
  maxDelayMs?: number;
  /** Reconnects in a row before status 'failed'. Default Infinity. */
  maxAttempts?: number;
  /** Default 'full'; 'none' waits exactly min(maxDelayMs, initialDelayMs × factor^n), no random draw. */
  jitter?: FetchOptions['jitter'];
}

/** The options of sseResource itself, taken out before the rest reach the client's constructor. */
export interface SseResourceOwnOptions<T> {
  /** A backoff object (SseBackoff; the default, `{}`, is the package's ladder), 'backoff', 'browser' (the
   * browser reconnects; only the status is reported) or false (the first error ends the stream). */
  reconnect?: SseBackoff | 'backoff' | 'browser' | false;
  /** The event whose data becomes the value. Default 'message'. */
  event?: string;
  /** Turns an event's data into the value. Default JSON.parse; what it throws goes to `error`. */
  parse?: (data: string, event: MessageEvent<string>) => T;
  /** Called with each of those events from the current connection, after `value` is set (a render shows
   * the last value since the one before; code that must see every event, a list that grows, uses this). */
  onMessage?: (event: MessageEvent<string>) => void;
  /** The injector whose destruction closes the stream; needed outside an injection context. */
  injector?: Injector;
}

/** The class to construct. */
export type SseClientClass = new (url: string | URL, options?: FetchOptions) => ManagedEventSource;

/** With the main entry's class (the default `client`): its options; the fetch transport's are refused,
 * as its constructor refuses them. */
export interface SseEventSourceOptions<T> extends Omit<Options, 'reconnect'>, SseResourceOwnOptions<T> {
  /** Default: ManagedEventSource from 'managed-eventsource'. */
  client?: SseClientClass;
  transport?: 'eventsource';
  headers?: never;
  method?: never;
  body?: never;
  fetch?: never;
}

/** With ManagedEventSource from 'managed-eventsource/fetch' as `client` (needed for `transport: 'fetch'`,
 * `headers`, `method`, `body`, `fetch`): its options. */
export interface SseFetchOptions<T> extends Omit<FetchOptions, 'reconnect'>, SseResourceOwnOptions<T> {
  client: SseClientClass;
}

export type SseResourceOptions<T> = SseEventSourceOptions<T> | SseFetchOptions<T>;

export interface SseResource<T> {
  /** The last event's value, parsed; undefined until the first event. */
  readonly value: Signal<T | undefined>;
  /** 'connecting', 'open', 'reconnecting', 'failed' or 'closed' (also while the URL is null). */
  readonly status: Signal<Status>;
  /** The last failure's error event, or what `parse` threw; cleared when a connection opens. */
  readonly error: Signal<unknown>;
  /** Reconnect attempts in a row so far; 0 while open. */
  readonly attempt: Signal<number>;
  /** Resets the ladder and connects at once, also after 'failed'. */
  reconnectNow(): void;
  /** Closes the stream for good, as destroying its injector does. */
  close(): void;
}

/**
 * A stream whose URL may read signals: a change closes the current connection, then opens one to the new
 * URL (null or undefined: none). Call it in an injection context (a constructor, a field initializer) or
 * give `injector`; the stream closes when that injector is destroyed.
 */
export declare function sseResource<T = unknown>(
  url: string | URL | (() => string | URL | null | undefined),
  options?: SseResourceOptions<T>,
): SseResource<T>;
