// Types of the package's main entry (index.js, index.cjs). Written by hand: the public classes are the
// JavaScript half of the shell (src/web/api.js); the wasm they drive is an implementation detail.

/** How a reconnect delay is drawn from the exponential cap. */
export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';
/** What the UI shows. */
export type Status = 'connecting' | 'open' | 'reconnecting' | 'failed' | 'closed';

export interface Options {
  /** Passed to EventSource. Default false. */
  withCredentials?: boolean;
  /** 'backoff' (default): close on error and reconnect through the ladder; 'browser': leave it to the
   * browser; false: never reconnect. */
  reconnect?: 'backoff' | 'browser' | boolean;
  /** Default 'full'. */
  jitter?: Jitter;
  /** First cap of the ladder in ms. Default 1000. */
  baseMs?: number;
  /** Largest delay in ms. Default 60000, at most 2147483647. */
  maxMs?: number;
  /** Growth per attempt, at least 1. Default 2. */
  factor?: number;
  /** Reconnect attempts in a row before status 'failed'. Default Infinity. */
  maxAttempts?: number;
  /** Query parameter that carries the last event id on each reconnect, e.g. 'lastEventId'. With the fetch
   * transport it goes beside the Last-Event-ID header; cross-origin instead of it (no CORS preflight); in
   * WebKit it is the only carrier of an id outside ASCII. Default: none, or the parameter the server's
   * heartbeat event names (managed-eventsource/server names 'lastEventId'). */
  lastEventIdParam?: string;
  /** Resume after a reload: the last event id is kept under this key when the page goes (pagehide, or
   * hidden), and the next client made with the same key starts from it (its first connection resumes).
   * Forgotten when the stream ends (closed or failed). With the EventSource transport, needs
   * lastEventIdParam (a first connection can carry the id only in its URL). Default: none, off. */
  lastEventIdKey?: string;
  /** Where lastEventIdKey keeps the id: a Storage. Default sessionStorage (this tab's, across reloads). */
  lastEventIdStorage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  /** Reconnect at once when the page becomes visible. Default true. Ignored in a worker (no document). */
  reconnectOnVisible?: boolean;
  /** Reconnect at once when the browser comes back online. Default true. */
  reconnectOnOnline?: boolean;
  /** An event whose data is a delay in ms: the next reconnect waits at least that long, plus the
   * ladder's own jitter (a server's load-shedding advice). Default none. */
  retryHintEvent?: string;
  /** The longest wait in ms a server may impose through retryHintEvent or Retry-After. Default 600000. */
  maxHintMs?: number;
  /** When the browser gave up on a source (a status other than 200, a wrong content type), fetch its URL
   * once (or the URL given), aborted once the headers arrive, to learn the status: 204 ends the stream,
   * 401/403 call onunauthorized and wait for reconnectNow(), 404/410 fail at once, 429/503 honour
   * Retry-After; anything else takes the ladder. Default false. */
  probe?: boolean | string;
  /** An open stream that receives no event for this long (ms) is treated as dropped. Default 0: off, or
   * two intervals of the server's announced heartbeat (see heartbeatEvent).
   * With the EventSource transport comment lines (': ping' keep-alives) are invisible: set heartbeatEvent.
   * Two stalls in a row of connections that delivered events are warned about once (console.warn). */
  stallTimeoutMs?: number;
  /** An event the server sends to show the stream is alive (comments are invisible to EventSource).
   * Default 'heartbeat', which managed-eventsource/server sends; when its data is a JSON object
   * `{ "heartbeatMs": N, "lastEventIdParam": "name" }`, 2 x N sets stallTimeoutMs and connectTimeoutMs where
   * you did not set them (0 included), and the name lastEventIdParam where you did not set it. */
  heartbeatEvent?: string;
  /** The stream closes after delivering the event for which this returns true. */
  until?: (ev: MessageEvent<string>) => boolean;
  /** The attempt counter resets only once a connection has stayed open this long (ms). Default 0: on open. */
  minUptimeMs?: number;
  /** A stream not open after this long (ms) counts as a failed attempt. Default 0: as long as the browser waits;
   * once managed-eventsource/server has announced its heartbeat, two of its intervals. */
  connectTimeoutMs?: number;
  /** A page hidden this long (ms) closes its stream (status 'reconnecting', no error); visible again, it
   * reconnects at once, resuming. Default 0: never (the stream stays open while hidden). Ignored in a worker. */
  pauseWhenHiddenMs?: number;
  /** Share one connection among the pages of this origin that open the same URL (true) or use the same
   * name: one holds it (`leader`) and relays every event and status to the others. Needs
   * `import 'managed-eventsource/share'` once in the app (else the constructor throws a TypeError saying
   * so): a page that never shares does not load it. Where Web Locks or BroadcastChannel are missing, each
   * instance holds a connection of its own. Default false. */
  share?: boolean | string;
  /** Another way to say close(): its abort closes the client for good. One aborted already opens nothing
   * (no request, no timer); the listener on it is removed when the client closes, whoever closes it. */
  signal?: AbortSignal;
  /** Called with one record per attempt and per change of what the client does (see TraceRecord), as it
   * happens, with the client as `this`; what it throws is reported. Nothing is recorded per event, so it
   * costs nothing while a stream is open: leave it on. A tab that follows a shared connection records
   * nothing (the tab that holds it does). */
  trace?: (this: ManagedEventSource, record: TraceRecord) => void;
}

/** What started an attempt: the first connection, the ladder's timer, reconnectNow(), the page becoming
 * visible, the network coming back, the back-forward cache, or (reconnect: 'browser') the browser's own retry,
 * told when the browser begins to wait for it. */
export type TraceTrigger = 'start' | 'timer' | 'reconnectNow' | 'visible' | 'online' | 'restored' | 'browser';
/** Why an attempt or an open connection ended: an error event (a network failure, a drop; a status the
 * EventSource transport cannot see), a status seen (the fetch transport, or a probe), a 200 that was not an
 * event stream, the stall watchdog, connectTimeoutMs, a URL that can never be fetched, the server ending it. */
export type TraceCause = 'error' | 'status' | 'notAStream' | 'stalled' | 'timeout' | 'unusable' | 'serverEnded';
/** What set a wait's size: the ladder's draw under its cap, the draw with its cap at maxMs, or a server's ask
 * the draw was added to (a `retry:` field, a Retry-After, a retry hint event), or that ask cut to maxHintMs. */
export type TraceBound = 'ladder' | 'maxMs' | 'retry' | 'retryAfter' | 'hint' | 'maxHintMs';

/** One record of the `trace` option. `time` is the clock's `performance.now()` (ms since the page's time
 * origin; add `performance.timeOrigin` for epoch ms); on managed-eventsource/testing's clock, virtual ms. */
export type TraceRecord = { time: number } & (
  /** An attempt began; `attempt` counts reconnect attempts in a row (0: the first, or a fresh ladder).
   * `url` is its URL (undefined while a URL function's Promise is pending); `lastEventId` the id it sends
   * (in the URL's lastEventIdParam, or the fetch transport's Last-Event-ID header), '' for none. An attempt
   * also ends the connection before it, if one was open. */
  | { type: 'attempt'; attempt: number; trigger: TraceTrigger; url: string | undefined; lastEventId: string }
  /** The attempt opened. */
  | { type: 'open'; attempt: number }
  /** The attempt or the open connection ended. `status` and `retryAfterMs` with cause 'status'; `silentMs`
   * with 'stalled'; `timeoutMs` with 'timeout'; `message` where the transport said what happened (the
   * fetch transport); `code` and `reason`, a socket's close event's. */
  | { type: 'ended'; cause: TraceCause; status?: number; retryAfterMs?: number; silentMs?: number; timeoutMs?: number; message?: string; code?: number; reason?: string }
  /** A probe (option probe) went out for the failed attempt's status. */
  | { type: 'probe' }
  /** The probe's answer; 0 when the probe itself failed. */
  | { type: 'probed'; status: number }
  /** Attempt `attempt` waits `delayMs`: `ladderMs` drawn by the ladder, the rest a server's ask. */
  | { type: 'wait'; attempt: number; delayMs: number; ladderMs: number; bound: TraceBound }
  /** The browser went offline: the wait stopped until it is online. */
  | { type: 'offline' }
  /** The page was hidden for pauseWhenHiddenMs: the stream sleeps until it is visible. */
  | { type: 'asleep' }
  /** No more attempts: maxAttempts reached, a 401/403/404/410, a URL that can never be fetched. */
  | { type: 'giveup'; attempts: number }
  /** The status became 'closed': by close() (or the signal, or until), for good; or by the server (a 204, for
   * good; a socket's clean close, which reconnectNow() may reopen). */
  | { type: 'closed'; by: 'user' | 'server' }
);

/** How an iteration queues the events its loop has not taken yet. */
export interface IterateOptions {
  /** How many events the loop may be behind. A burst (a replay after a reconnect) does not count while the
   * loop keeps up; from a turn that finds it busy with events queued, until it waits again, every queued
   * event counts. Default 10000. */
  max?: number;
  /** Past `max`: 'error' (default) ends the loop with a RangeError after the queued events and closes the
   * client; 'drop-oldest' drops the oldest queued events, keeping the newest `max`, and counts them in
   * `dropped`. */
  overflow?: 'error' | 'drop-oldest';
}

/** An iteration of a client's events: an AsyncIterator that is its own AsyncIterable. The loop owns the
 * client: however it ends (break, return, a throw, status 'closed' or 'failed', an overflow), the client is
 * closed. Status 'failed' is thrown (an Error with `status: 'failed'` and `attempts`). */
export interface EventIteration<E> {
  /** Events dropped because the loop was `max` behind (with `overflow: 'drop-oldest'`). */
  readonly dropped: number;
  next(): Promise<IteratorResult<E, undefined>>;
  return(value?: unknown): Promise<IteratorResult<E, undefined>>;
  [Symbol.asyncIterator](): EventIteration<E>;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
}
export interface GiveUpInfo {
  attempts: number;
}
export interface UnauthorizedInfo {
  status: 401 | 403;
}

/** The events a ManagedEventSource fires; any other name is a server's named event. */
export interface ManagedEventSourceEventMap {
  open: Event;
  error: Event;
  message: MessageEvent<string>;
}

/** The event a listener of `type` receives. */
export type EventFor<K extends string> = K extends keyof ManagedEventSourceEventMap ? ManagedEventSourceEventMap[K] : MessageEvent<string>;

/** A listener: a function (called with the instance as `this`) or an object with `handleEvent`. */
export type Listener<E> = ((this: ManagedEventSource, ev: E) => unknown) | { handleEvent(ev: E): unknown };

/** An EventSource that reconnects through a jittered exponential backoff ladder. */
export declare class ManagedEventSource {
  /** `url` is what `EventSource` takes (a string or URL, resolved against the document), or a function
   * called for every attempt (fresh tokens; managed-eventsource/fetch also awaits a Promise). Bad options throw a TypeError or RangeError naming the option. */
  constructor(url: string | URL | (() => string | URL), options?: Options);
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSED: 2;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSED: 2;
  /** The URL of the current or last attempt. */
  readonly url: string;
  readonly withCredentials: boolean;
  /** 0 connecting (also while waiting to reconnect), 1 open, 2 closed (failed or closed). */
  readonly readyState: 0 | 1 | 2;
  readonly status: Status;
  /** Reconnect attempts in a row so far; 0 while open. */
  readonly attempt: number;
  /** The last event id received (kept across reconnects). */
  readonly lastEventId: string;
  /** Whether this instance holds the connection (with `share`, exactly one of those sharing it does). */
  readonly leader: boolean;
  onopen: ((this: ManagedEventSource, ev: Event) => unknown) | null;
  onmessage: ((this: ManagedEventSource, ev: MessageEvent<string>) => unknown) | null;
  onerror: ((this: ManagedEventSource, ev: Event) => unknown) | null;
  onstatus: ((this: ManagedEventSource, status: Status) => void) | null;
  onretry: ((this: ManagedEventSource, info: RetryInfo) => void) | null;
  ongiveup: ((this: ManagedEventSource, info: GiveUpInfo) => void) | null;
  /** A probe found 401 or 403: refresh the credentials (a URL function gives the fresh token), then
   * call reconnectNow(). */
  onunauthorized: ((this: ManagedEventSource, info: UnauthorizedInfo) => void) | null;
  /** `open` and `error` listeners receive an `Event`; `message` and named events a `MessageEvent<string>`. */
  addEventListener<K extends string>(
    type: K,
    listener: Listener<EventFor<K>> | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  removeEventListener<K extends string>(
    type: K,
    listener: Listener<EventFor<K>> | null,
    options?: boolean | EventListenerOptions,
  ): void;
  dispatchEvent(event: Event): boolean;
  /** Resets the ladder and connects at once, also after status 'failed'. Does nothing after close(). */
  reconnectNow(): void;
  /** Closes the source and cancels any pending retry; status 'closed'; final. */
  close(): void;
  /** The events of `types` (default 'message') in the order they arrive, as a `for await` loop reads them;
   * the same events the listeners see. The loop owns the client (see EventIteration). */
  events<K extends string = 'message'>(types?: K | readonly K[], options?: IterateOptions): EventIteration<EventFor<K>>;
  /** `for await (const ev of source)`: its messages, as `events()` gives them. */
  [Symbol.asyncIterator](): EventIteration<MessageEvent<string>>;
}

export interface StreamHandlers {
  /** Called with the attempt that succeeded (0 for the first connection). */
  onOpen?: (info: { attempt: number }) => void;
  onMessage?: (ev: MessageEvent<string>) => void;
  /** Named events: { update: (ev) => ... }. */
  events?: Record<string, (ev: MessageEvent<string>) => void>;
  onRetryScheduled?: (info: { attempt: number; wait: number }) => void;
  onGiveUp?: (attempts: number) => void;
  onStatus?: (status: Status) => void;
  onUnauthorized?: (info: UnauthorizedInfo) => void;
}

/** The callback form of ManagedEventSource: connects to `url`, calls the `handlers` (onOpen, onMessage,
 * events, onRetryScheduled, onGiveUp, onStatus, onUnauthorized), and returns a function that closes the
 * stream. docs/reference.md's "Names across the APIs" maps each handler to the class's member. */
export declare function createManagedStream(
  url: string | URL | (() => string | URL),
  handlers: StreamHandlers,
  options?: Options,
): () => void;

/**
 * Compiles the package's WebAssembly off the main thread, then instantiates it, so that the clients made
 * after it begin in their constructors and connect at once. Optional: without it a page's first
 * `ManagedEventSource` compiles the module off the main thread by itself (its constructor runs only a small
 * option check) and connects in a later task; a first `ManagedWebSocket` compiles it in its constructor.
 * Call it at page load when the first client comes later. The same promise on every call; it rejects (as
 * the first construct would throw) where the page's Content-Security-Policy forbids WebAssembly.
 */
export declare function prepare(): Promise<void>;
