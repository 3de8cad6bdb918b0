// Types of the package's testing entry (testing.js, testing.cjs): a virtual clock the clients' timers run on,
// and a scripted server for the fetch transport's `fetch` option.
export interface VirtualClockOptions {
  /** Seeds the clients' jitter: the same seed draws the same delays every run. Default 1. */
  seed?: number;
}

/** A virtual clock, in place of the page's from createVirtualClock() until uninstall(). */
export interface VirtualClock {
  /** Milliseconds since the clock was made, as the clients read it. */
  readonly now: number;
  /** Timers armed and not yet run or cancelled. */
  readonly pending: number;
  /** Lets what is under way run (fetches, reads, listeners), moving no time. */
  settle(): Promise<void>;
  /** Runs the next timer (moving time to it) and what it sets going; false when none is armed. */
  next(): Promise<boolean>;
  /** Moves time on by `ms`, running each timer that falls due on the way. */
  advance(ms: number): Promise<void>;
  /** Runs timers in order until `predicate()` is true; resolves with the virtual time it took. Throws a
   * RangeError after `maxTimers` timers (default 1000), an Error when no timer is left. */
  runUntil(predicate: () => boolean, options?: { maxTimers?: number }): Promise<number>;
  /** Takes this clock out: the newest left (else the page's) is in place (also `[Symbol.dispose]`, typed by managed-eventsource/disposable:
   * `using clock = createVirtualClock()`). */
  uninstall(): void;
}

export declare function createVirtualClock(options?: VirtualClockOptions): VirtualClock;

/** An event a script sends: its data, or its fields. */
export type ScriptedEvent = string | { id?: string; event?: string; data?: string; retry?: number };

/** The steps of one attempt. The first is open(), status(), noContent() or fail(). */
export interface AttemptScript {
  /** Answers 200 with an event stream. */
  open(options?: { headers?: Record<string, string> }): this;
  /** Answers `status` (200 to 599) and ends; `retryAfter` (seconds, or an HTTP date) becomes Retry-After. */
  status(status: number, options?: { retryAfter?: number | string; headers?: Record<string, string>; body?: BodyInit | null }): this;
  /** Answers 204: nothing more (the client closes). */
  noContent(): this;
  /** No response at all (fetch rejects, as for a refused connection). */
  fail(): this;
  send(event: ScriptedEvent): this;
  comment(text?: string): this;
  retry(ms: number): this;
  /** Waits `ms` on the virtual clock before the next step. */
  wait(ms: number): this;
  /** The connection breaks mid-stream. */
  drop(): this;
  /** The server ends the stream. */
  end(): this;
  /** The stream stays open and sends nothing more (also what a script that just stops does). */
  stall(): this;
}

export interface ScriptedRequest {
  /** 1 for the first request. */
  readonly attempt: number;
  readonly url: string;
  readonly method: string;
  /** The request's headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** The Last-Event-ID header, else the URL's lastEventId parameter (the EventSource transport's), or null. */
  readonly lastEventId: string | null;
  /** Past the script: it failed as a network error. */
  readonly unscripted: boolean;
  /** The client let go of it (closed, or aborted its stream). */
  readonly aborted: boolean;
}

export interface ScriptedServer {
  /** Adds the script of the next attempt. */
  attempt(build: (a: AttemptScript) => unknown): this;
  /** Give it to the fetch transport: `{ transport: 'fetch', fetch: server.fetch }`. */
  readonly fetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** The next attempt's Response for a Request, for a request handler: MSW's
   * `http.get('/feed', ({ request }) => server.respond(request))`. */
  readonly respond: (request: Request) => Promise<Response>;
  /** The next attempt over real HTTP, for node:http or Express: `http.createServer(server.handle)` on
   * loopback, for browser tests (Playwright). */
  readonly handle: (req: { url?: string; method?: string; headers: Record<string, string | string[] | undefined> }, res: unknown) => void;
  /** A stand-in for EventSource that plays the script, for the EventSource transport where the runtime has
   * none (jsdom, Node): `globalThis.EventSource = server.EventSource`. */
  readonly EventSource: {
    new (url: string | URL, init?: EventSourceInit): EventSource;
    readonly CONNECTING: 0;
    readonly OPEN: 1;
    readonly CLOSED: 2;
  };
  readonly requests: readonly ScriptedRequest[];
  /** Attempts scripted and not yet asked for. */
  readonly left: number;
}

export declare function scriptServer(): ScriptedServer;
