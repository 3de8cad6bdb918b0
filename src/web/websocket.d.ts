// Types of the package's websocket entry (websocket.js, websocket.cjs): everything of the main entry, and
// ManagedWebSocket.
export * from './index.js';
import type { EventIteration, GiveUpInfo, IterateOptions, Jitter, RetryInfo, Status, TraceRecord } from './index.js';

export interface SocketOptions {
  /** Default 'full'. */
  jitter?: Jitter;
  /** First cap of the ladder in ms. Default 1000. */
  baseMs?: number;
  /** Largest delay in ms. Default 60000. */
  maxMs?: number;
  /** Growth per attempt, at least 1. Default 2. */
  factor?: number;
  /** Reconnect attempts in a row before status 'failed'. Default Infinity. */
  maxAttempts?: number;
  /** The attempt counter resets only once a connection has stayed open this long (ms). Default 0: on open. */
  minUptimeMs?: number;
  /** Reconnect at once when the page becomes visible. Default true. Ignored in a worker (no document). */
  reconnectOnVisible?: boolean;
  /** Reconnect at once when the browser comes back online. Default true. */
  reconnectOnOnline?: boolean;
  /** Subprotocols, as for WebSocket. */
  protocols?: string | string[];
  /** Messages sent while disconnected: dropped with an error ('none', the default), all kept, or at most
   * `max` kept; kept messages go out in order, once, on the next open. */
  queue?: 'none' | 'all' | { max: number };
  /** Clean-close codes after which the socket still reconnects. Default [1001, 1012, 1013]. */
  reconnectOnCleanClose?: number[];
  /** A socket still connecting after this long (ms) counts as a failed attempt. Default 10000; 0: never. */
  connectTimeoutMs?: number;
  /** An open socket that receives no message for this long (ms) is treated as dropped. Default 0 (off). */
  stallTimeoutMs?: number;
  /** A page hidden this long (ms) closes its socket; visible again, it reconnects at once. Default 0 (off).
   * Ignored in a worker (no document). */
  pauseWhenHiddenMs?: number;
  /** Another way to say close(): its abort closes the socket for good (a close frame with no code). One
   * aborted already opens nothing; the listener on it is removed when the socket closes. */
  signal?: AbortSignal;
  /** One record per attempt and per change of state, as ManagedEventSource's `trace` option gives them. */
  trace?: (this: ManagedWebSocket, record: TraceRecord) => void;
}

/** The events a ManagedWebSocket fires. */
export interface ManagedWebSocketEventMap {
  open: Event;
  message: MessageEvent;
  error: Event;
  close: CloseEvent;
}

export type SocketListener<E> = ((this: ManagedWebSocket, ev: E) => unknown) | { handleEvent(ev: E): unknown };

/** A WebSocket that reconnects through a jittered exponential backoff ladder. */
export declare class ManagedWebSocket {
  /** `url` is what WebSocket takes, or a function called for every attempt (fresh tokens). As with WebSocket,
   * the second argument may be the subprotocols themselves (a string or an array): `{ protocols }`. */
  constructor(url: string | URL | (() => string | URL), options?: SocketOptions | string | string[]);
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSING: 2;
  static readonly CLOSED: 3;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
  readonly url: string;
  /** 0 connecting (also while waiting to reconnect), 1 open, 2 closing (after close()), 3 closed. */
  readonly readyState: 0 | 1 | 2 | 3;
  readonly status: Status;
  readonly attempt: number;
  readonly bufferedAmount: number;
  readonly protocol: string;
  readonly extensions: string;
  binaryType: BinaryType;
  onopen: ((this: ManagedWebSocket, ev: Event) => unknown) | null;
  onmessage: ((this: ManagedWebSocket, ev: MessageEvent) => unknown) | null;
  onerror: ((this: ManagedWebSocket, ev: Event) => unknown) | null;
  onclose: ((this: ManagedWebSocket, ev: CloseEvent) => unknown) | null;
  onstatus: ((this: ManagedWebSocket, status: Status) => void) | null;
  onretry: ((this: ManagedWebSocket, info: RetryInfo) => void) | null;
  ongiveup: ((this: ManagedWebSocket, info: GiveUpInfo) => void) | null;
  /** Sends on the open socket; while disconnected, queues (with `queue`) or throws an InvalidStateError. */
  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void;
  /** Resets the ladder and connects at once, also after 'failed' or a close by the server. */
  reconnectNow(): void;
  /** Closes for good (code 1000 or 3000-4999, reason at most 123 bytes); queued messages are dropped. */
  close(code?: number, reason?: string): void;
  /** The events of `types` (default 'message') as a `for await` loop reads them; the loop owns the socket
   * (see EventIteration). */
  events<K extends keyof ManagedWebSocketEventMap = 'message'>(types?: K | readonly K[], options?: IterateOptions): EventIteration<ManagedWebSocketEventMap[K]>;
  /** `for await (const message of socket)`: its messages. */
  [Symbol.asyncIterator](): EventIteration<MessageEvent>;
  addEventListener<K extends keyof ManagedWebSocketEventMap>(
    type: K,
    listener: SocketListener<ManagedWebSocketEventMap[K]> | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  removeEventListener<K extends keyof ManagedWebSocketEventMap>(
    type: K,
    listener: SocketListener<ManagedWebSocketEventMap[K]> | null,
    options?: boolean | EventListenerOptions,
  ): void;
  dispatchEvent(event: Event): boolean;
}
