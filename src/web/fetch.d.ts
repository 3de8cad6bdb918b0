// Types of the package's fetch entry (fetch.js, fetch.cjs): everything of the main entry, with the fetch
// transport's options.
export * from './index.js';
import type { ManagedEventSource as Base, Options, StreamHandlers } from './index.js';

/** What a URL, headers or body function may return: the value, or a Promise of it (awaited per attempt). */
export type PerAttempt<T> = T | Promise<T>;

/** The second argument of the `fetch` option, as eventsource v4 passes it: `headers` is a plain object. */
export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: BodyInit;
  cache: 'no-store';
  credentials: 'include' | 'same-origin';
  redirect: 'follow';
  mode: 'cors';
  signal: AbortSignal;
}

export interface FetchOptions extends Options {
  /** 'eventsource' (the default): a native EventSource; 'fetch': fetch and a stream reader, which can send
   * headers and a body, and reads each failure's status and the server's `retry:` field. */
  transport?: 'eventsource' | 'fetch';
  /** Headers of every attempt, or a function called before each one (a fresh token). `Accept:
   * text/event-stream` is added unless given; `Last-Event-ID` is set when resuming. */
  headers?: HeadersInit | (() => PerAttempt<HeadersInit>);
  /** Default 'GET'. */
  method?: string;
  /** The request body (not with GET or HEAD), or a function called before each attempt. */
  body?: BodyInit | null | (() => PerAttempt<BodyInit | null>);
  /** A fetch of your own, called as `fetch(url, init)`. Default: the global fetch. */
  fetch?: (url: string, init: FetchInit) => Promise<Response>;
}

/** The fetch transport's `open` event carries the response's status and headers. */
export interface FetchOpenEvent extends Event {
  readonly status: number;
  readonly headers: Headers;
}
/** The fetch transport's `error` event: the HTTP status (undefined for a network failure) and why. */
export interface FetchErrorEvent extends Event {
  readonly status: number | undefined;
  readonly message: string;
}

type Url = string | URL | (() => PerAttempt<string | URL>);

/** ManagedEventSource, with the fetch transport's options. */
export declare class ManagedEventSource extends Base {
  constructor(url: Url, options?: FetchOptions);
}

/** createManagedStream (the callback form of ManagedEventSource), with the fetch transport's options. */
export declare function createManagedStream(url: Url, handlers: StreamHandlers, options?: FetchOptions): () => void;
