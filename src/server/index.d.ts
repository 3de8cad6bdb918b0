// Types for managed-eventsource/server: the server's half of seed 001 (admission, soft rejection, retry
// hints, and resume without loss: an event log over a memory or Redis store, resumable POST streams), for
// Node and for runtimes with Web Request/Response.

export interface GateOptions {
  /** Tokens added to the bucket a second: the connections a second the gate admits. Above 0, finite. */
  ratePerSec: number;
  /** The most tokens the bucket holds (and holds at the start): the connections admitted at once. At least 1; default `max(1, ratePerSec)`. */
  burst?: number;
  /** The most streams admitted and not yet released. A whole number, at least 1; default no limit. */
  maxStreams?: number;
  /** Refused clients get their place in line divided by the rate (plus up to `spreadMs`), rather than a random wait. Default false. */
  pace?: boolean;
  /** Jitter added to every wait, ms: default 500 with `pace`, 20,000 without. */
  spreadMs?: number;
  /** Without `pace`, the shortest wait, ms. Default 5,000 (seed 001: 5 to 25 s). */
  minWaitMs?: number;
  /** The gate's clock in milliseconds. Default `Date.now`. */
  now?: () => number;
  /** A source of numbers in [0, 1). Default `Math.random`. */
  random?: () => number;
}

export type Admission = { ok: true; release(): void } | { ok: false; retryMs: number };

export interface Gate {
  /** One decision: admitted (call `release` when the stream ends; a second call does nothing) or refused with the wait to send. */
  admit(): Admission;
  /** Admits nobody until `untilMs` on the gate's clock; with `pace`, clients refused meanwhile get places in line from then. */
  pause(untilMs: number): void;
  /** Streams admitted and not yet released. */
  readonly open: number;
  /** Whole tokens in the bucket now. */
  readonly tokens: number;
}

export interface RejectOptions {
  /** Also dispatch this event with the wait as its data (a managed-eventsource client's `retryHintEvent`). */
  hintEvent?: string;
}

/** Anything a server writes a stream through: node:http or Express (`write`), or a `ReadableStream` controller (`enqueue`). */
export type OpenStream = { write(chunk: string): unknown } | { enqueue(chunk: Uint8Array): unknown };

export function createGate(options: GateOptions): Gate;
/** Answers 200 `text/event-stream` with `retry: retryMs` (and the hint event), then ends the response. */
export function reject(res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown; headersSent?: boolean }, retryMs: number, options?: RejectOptions): void;
/** The same soft rejection as a Web `Response`. */
export function rejectResponse(retryMs: number, options?: RejectOptions): Response;
/** `retry: N\n` with N from `baseMs` to `baseMs + spreadMs`. */
export function retryField(baseMs: number, spreadMs?: number, random?: () => number): string;
/** A comment frame (`:\n\n`, or `: text\n\n`). */
export function heartbeat(text?: string): string;
/** Sends each open stream `retry:` of `ms` plus up to `spreadMs` (default `ms`); returns how many were written to. */
export function broadcastRetry(streams: Iterable<OpenStream>, ms: number, options?: { spreadMs?: number; random?: () => number }): number;

// ---- the event log ---------------------------------------------------------------------------------------

/** An event as appended: `data` a string (line breaks become several `data:` lines), `event` a name with no
 * line break (default 'message'), `id` given (`<ms>-<seq>`, above the last) or assigned in order. */
export interface LogEntry {
  data: string;
  event?: string;
  id?: string;
}

/** An event as a store holds it. */
export interface LogRecord {
  id: string;
  event: string;
  data: string;
  /** A gap marker: events went out without ids while the store was unavailable. Sent as the reload event. */
  gap: boolean;
  /** When it was appended, ms. */
  at: number;
  /** The generation that stored it (null: none recorded). */
  epoch?: string | null;
}

/** What a store read returns: the events after the id (up to the limit), whether the store can vouch for
 * the id, whether there were more than the limit, and the last id ever issued. */
export interface Snapshot {
  events: LogRecord[];
  complete: boolean;
  more: boolean;
  head: string | null;
  /** The store's generation as the read saw it (null: none); a client id naming another gets the reload event. */
  epoch?: string | null;
}

export type StoreStatus = 'connecting' | 'ready' | 'unavailable' | 'closed';

/** The interface both stores implement; a store belongs to one log. */
export interface EventStore {
  readonly kind: string;
  readonly status: StoreStatus;
  /** Reads issued against the store so far. */
  readonly reads: number;
  /** The store's generation (a store that has none, or a custom one, may leave it out): the log adds it to every id it hands out, `<ms>-<seq>_<epoch>`. */
  readonly epoch?: string | null;
  readonly maxEvents: number;
  readonly maxAgeMs: number;
  /** The last id the store's feed has delivered (memory: issued), or null. */
  readonly head: string | null;
  append(entry: { id?: string; event: string; data: string; gap?: boolean }): Promise<string>;
  read(afterId: string, limit: number): Promise<Snapshot>;
  attach(log: { event(record: LogRecord): void; status(status: StoreStatus, error?: unknown): void; reset(position?: string | null): void }): void;
  close(): void | Promise<void>;
  /** The store of topic `name` (or a promise of it), with its own events and ids; a log calls it once per topic it opens, and close() when it lets the topic go. */
  topic?(name: string): EventStore | Promise<EventStore>;
}

export interface MemoryStoreOptions {
  /** The most events held. A whole number, at least 1; default 10,000. */
  maxEvents?: number;
  /** Events older than this are not replayed, ms. Default one hour. */
  maxAgeMs?: number;
  /** The store's clock, ms. Default `Date.now`. */
  now?: () => number;
}

export interface RedisStoreOptions extends MemoryStoreOptions {
  /** Default redis://127.0.0.1:6379. */
  url?: string;
  /** A Redis Cluster's node URLs (some or all), instead of `url`: the store finds the cluster through them. */
  cluster?: string[];
  /** The stream's key (the last id trimmed away is kept at `{<key>}:floor`, or `<key>:floor` when the key holds a hash tag; topic T's stream at `<key>:{T}`). Default 'events'. */
  key?: string;
  /** The ladder both connections reconnect on (full jitter): attempt n waits a uniform draw in
   * [0, min(maxMs, baseMs * factor^(n-1))]. Default { baseMs: 500, maxMs: 10000, factor: 2 }. */
  reconnect?: { baseMs?: number; maxMs?: number; factor?: number };
  /** A source of numbers in [0, 1) for the ladder. Default `Math.random`. */
  random?: () => number;
  /** Called before each reconnect attempt with its number and the wait drawn. */
  onreconnect?: (info: { attempt: number; delayMs: number }) => void;
  /** How long the follow read blocks, ms. Default 5,000. */
  blockMs?: number;
  /** Every command's one deadline, from the call, ms (node-redis's own queue timeout is off for the store's
   * commands). A read past it fails as unavailable. An append past it rejects with an Error whose `code` says
   * what became of it: 'STORE_NOT_SENT' when it was still queued behind other commands (never sent, not
   * stored: safe to append again), 'STORE_TIMEOUT' when it was sent and not answered (Redis may still store
   * it; the feed then delivers it, once). Neither is sent live. close() waits no longer than this either.
   * Default 5,000. */
  commandTimeoutMs?: number;
  /** Backpressure: with this many appends already waiting for Redis (sent or queued, not answered), an append
   * rejects at once with `code` 'STORE_BUSY' (not sent, not stored). A whole number, at least 1; default 1,000. */
  maxPendingAppends?: number;
  /** The same bound in bytes of data waiting (one append alone always goes through). Default 1 MiB. */
  maxPendingBytes?: number;
  /** More node-redis client options (not `url`, `disableOfflineQueue` or `socket.reconnectStrategy`). */
  clientOptions?: Record<string, unknown>;
}

export interface EventLogOptions {
  /** Default: `createMemoryStore()`. */
  store?: EventStore;
  /** The recent window, events: resumes inside it need no store read. Default 1,000 (at most the store's maxEvents). */
  recent?: number;
  /** Simultaneous resumes from the same id share one store read, kept this long after it returns, ms. Default 1,000. */
  snapshotMs?: number;
  /** Share reads at all. Default true. */
  shareReads?: boolean;
  /** The most events one resume replays (a whole number), from the store or the recent window; a client further behind is sent the reload event. Default 10,000. */
  maxReplay?: number;
  /** The event a client gets when the log cannot vouch for its id. Default 'reload'. */
  reloadEvent?: string;
  /** The query parameter read when there is no Last-Event-ID header (null: none). Default 'lastEventId'. */
  lastEventIdParam?: string | null;
  /** The heartbeat event to every stream this often, ms (0: only the one each stream starts with). It is a named event, which an EventSource delivers, announcing this interval and `lastEventIdParam`: a managed-eventsource client then notices a dead connection after two intervals of silence, and resumes through the parameter, with no option of its own. Default 15,000. */
  heartbeatMs?: number;
  /** The heartbeat event's name (the client's `heartbeatEvent`). Default 'heartbeat'. */
  heartbeatEvent?: string;
  /** A resume refused because the store is unavailable waits this plus up to as much again, ms. Default 5,000. */
  unavailableRetryMs?: number;
  /** A client more than this many bytes behind when the next write comes is sent no more: its stream ends after what it was sent (one event or replay larger than this is still sent whole) and it resumes from its last id. With serve(), one that then takes in nothing for 30 s is disconnected. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** The store's status changed: 'unavailable' (live events go on, with no id), 'ready' again. */
  onstatus?: (status: StoreStatus, error?: unknown) => void;
  /** An unexpected error inside serve() or response(), which answered 500 or closed the stream, a connection's writer that threw (that connection alone is ended), or the store's error when it becomes 'unavailable' (Redis down, or its blocking XREAD refused: no live events), the log's own or a topic's (a StoreUnavailableError naming the topic: its feed's XREAD refused, its connection refused by maxclients, its Redis Cluster node silent). */
  onerror?: (error: unknown) => void;
  now?: () => number;
  random?: () => number;
  /** Called by serve() and response() before a stream opens, with the request and the topic (null for the log's own stream): `true` admits, `false` or 403 answers 403, 401 answers 401 (our client then stops and calls `onunauthorized`). A hook that throws or answers anything else gets the soft rejection (the client comes back later) and goes to `onerror`. After the gate, so a storm of reconnects reaches it at the gate's rate. */
  authorize?: (request: any, topic: string | null) => boolean | 401 | 403 | Promise<boolean | 401 | 403>;
  /** A named topic with no connections on this node is let go after this long, ms: its store's feed stops (a Redis topic's own connection closes); its history stays in the store. Default 30,000. */
  topicIdleMs?: number;
  /** Topics open at once on this node (on Redis each holds a connection for its feed); past it a client of a topic not open gets the soft rejection. Default 10,000. */
  maxTopics?: number;
}

/** One topic of a log (`log.topic(name)`): a stream with its own history, ids and recovery. */
export interface LogTopic {
  readonly name: string;
  append(entry: LogEntry): Promise<string | null>;
  connect(lastEventId: string | null | undefined): Promise<LogConnection>;
  serve(req: { headers: Record<string, string | string[] | undefined>; url?: string }, res: any, options?: ServeOptions): Promise<void>;
  response(request: Request, options?: ServeOptions): Promise<Response>;
  /** Connections following this topic on this node. */
  readonly connections: number;
  /** Where the topic is open on this node, its store's status ('unavailable' while its live events cannot be delivered, told to `onerror`); else null. */
  readonly status: StoreStatus | null;
}

/** A client attached to the log: `start(write, end)` writes what it missed, then every live event. `end` is
 * called when the log ends the connection: `log.close()`, or `write` threw. Live events reach every connection
 * in one order, also when a writer appends. */
export interface LogConnection {
  start(write: (text: string) => void, end?: () => void): LogConnection;
  close(): void;
  readonly open: boolean;
}

export interface ServeOptions {
  /** Admit through this gate first: a refused client gets `retry:` (and `hintEvent`). */
  gate?: Pick<Gate, 'admit'>;
  /** With a refusal, also dispatch this event carrying the wait (a managed-eventsource client's `retryHintEvent`). */
  hintEvent?: string;
  /** Called once when the stream ends (besides the gate's own release). */
  release?: () => void;
  /** A line written first, e.g. `retryField(3000, 7000)`. */
  retry?: string;
  /** More response headers. */
  headers?: Record<string, string>;
  /** The topic to stream (1 to 256 characters, each code point one, no control characters); default the log's own stream. A bad one is answered 400. */
  topic?: string | null;
}

export interface EventLog {
  readonly store: EventStore;
  readonly status: StoreStatus;
  /** Store reads, reads shared, resumes served from the recent window, reload events, connections, the times the store became unavailable, and the recent window's events in memory. */
  /** The log's figures in Prometheus's text format; `labels` go on every sample. */
  metrics(labels?: Record<string, string | number>): string;
  /** metrics() for node:http and Express (works unbound). */
  serveMetrics(req: unknown, res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown }): void;
  /** metrics() as a Web Response (works unbound). */
  metricsResponse(): Response;
  /** For a rolling deploy: ends every connection over `overMs` (default 10,000), each at its own moment of the window (spread evenly, at random), after a `retry:` of up to 1 s; until the window ends new clients are turned away softly. Resolves to the connections drained; then call close(). */
  drain(options?: { overMs?: number }): Promise<number>;
  readonly stats: { reads: number; sharedReads: number; windowServed: number; reloads: number; connections: number; storeErrors: number; resumes: number; events: number; drained: number; recentHeld: number; topics: number };
  /** Topic `name`: a stream of its own in this log (a user's, a room's, a document's). Throws a TypeError or RangeError for a bad name. The store must have topics (the memory and Redis stores do). */
  topic(name: string): LogTopic;
  /** Connections attached to the live feed. */
  readonly connections: number;
  /** Resolves to the event's id, in the order of the calls, or to null when the store is unavailable (the
   * event went out live, with no id, and a gap marker follows). Else rejects, sending nothing: a TypeError or
   * RangeError for a bad entry; an Error whose `code` is 'STORE_BUSY' or 'STORE_NOT_SENT' (not stored) or
   * 'STORE_TIMEOUT' (Redis may still store it; the feed then delivers it, once). */
  append(entry: LogEntry): Promise<string | null>;
  /** Rejects (code 'STORE_UNAVAILABLE') when the store is down and the recent window cannot serve the id; during a drain, with code 'DRAINING' and `retryAfterMs` (when the window is over), so that the drain ends every connection on the node. */
  connect(lastEventId: string | null | undefined): Promise<LogConnection>;
  /** The Last-Event-ID header, else the query parameter, of a node:http or Web request. */
  lastEventId(request: { headers: unknown; url?: string }): string | null;
  /** node:http and Express. Never throws or rejects. */
  serve(req: { headers: Record<string, string | string[] | undefined>; url?: string }, res: any, options?: ServeOptions): Promise<void>;
  /** Runtimes with Web Request/Response. Never rejects. */
  response(request: Request, options?: ServeOptions): Promise<Response>;
  /** Ends every connection (serve()'s and response()'s streams end, so their clients reconnect, maybe to another node; their gate places are released), then closes the store. */
  close(): Promise<void>;
}

export function createEventLog(options?: EventLogOptions): EventLog;
export function createMemoryStore(options?: MemoryStoreOptions): EventStore;
/** Loads node-redis (the optional peer dependency `redis`) and connects; rejects naming the package if it is missing. */
export function createRedisStore(options?: RedisStoreOptions): Promise<RedisStore>;

/** The Redis store: an EventStore with its backpressure bounds and what waits against them. */
export interface RedisStore extends EventStore {
  readonly key: string;
  readonly maxPendingAppends: number;
  readonly maxPendingBytes: number;
  /** Appends sent or queued to Redis and not answered yet, and their bytes of data. */
  readonly waiting: { appends: number; bytes: number };
  /** The node-redis client of the command connection. */
  readonly client: unknown;
}
/** Orders two `<ms>-<seq>` ids. */
export function compareIds(a: string, b: string): number;
/** The ladder's full-jitter delay before attempt n (from 1): uniform in [0, min(maxMs, baseMs * factor^(n-1))]. */
export function ladderDelay(attempt: number, ladder?: { baseMs?: number; maxMs?: number; factor?: number }, random?: () => number): number;

// ---- resumable streams -----------------------------------------------------------------------------------

export type Chunk = string | { event?: string; data: string };

export interface ResumableStreamsOptions {
  /** How long an ended stream stays resumable, ms, at most 2^31 - 1 (with a store, also how long a running stream's frames outlive its last renewal). Default 300,000. */
  keepMs?: number;
  /** The most chunks a stream holds; past it the stream is interrupted, and an `error` event says so. Default 100,000. */
  maxEvents?: number;
  /** The most UTF-16 units (about bytes, for ASCII) a stream's frames hold, `id:` and `data:` lines included; past it the stream is interrupted, and an `error` event says so. Default 64 MiB. */
  maxBytes?: number;
  /** A producer that gives nothing for this long, ms, is stopped (its signal aborts with a TimeoutError) and its stream interrupted. Default 0: no limit. */
  idleTimeoutMs?: number;
  /** The query parameter read when there is no Last-Event-ID header. Default 'lastEventId'. */
  lastEventIdParam?: string;
  /** A client more than this many bytes behind when the next chunk comes is sent no more: its stream ends after what it was sent, whole, and it resumes from its last id (with serve(), one that then takes in nothing for 30 s is disconnected). Default 1 MiB. */
  maxBufferedBytes?: number;
  /** What a producer threw (the client sees only an `error` event saying the stream failed on the server), a response's write that threw (that client alone is dropped), or a store's failure. */
  onerror?: (error: unknown) => void;
  /** A Redis store (createRedisStore, shareable with an event log): every frame is stored there too, so any node of a fleet serves a resume, and cancel() reaches the node that produces. Default: none (this process's memory; resumes must reach the node that started the stream). */
  store?: RedisStore | null;
  /** With a store: how long, ms, a running stream whose node stops renewing it (the node died) still counts as running for the other nodes; they then answer its resumes 410, interrupted. Renewed every third of it. Default 10,000 (at least 100). */
  leaseMs?: number;
}

/** What a producer is given: the stream's id, and a signal that aborts when the stream is cancelled or its producer idles past idleTimeoutMs (hand it to the model call, e.g. streamText({ abortSignal: signal })). */
export interface ProduceContext {
  id: string;
  signal: AbortSignal;
}

export type Producer = (context: ProduceContext) => AsyncIterable<Chunk> | Iterable<Chunk> | Promise<AsyncIterable<Chunk> | Iterable<Chunk>>;

export interface ResumableStreams {
  /** Streams produced on this node (running, or ended and still resumable). */
  readonly size: number;
  /** Starts a stream without a request; returns its id. */
  start(produce: Producer): string;
  /** Stops stream `id`'s producer (its signal aborts), on whichever node runs it when there is a store; the stream ends as finished with what it has. Resolves to whether a running stream was told. A TypeError for an id that is not 16 hex digits. */
  cancel(id: string): Promise<boolean>;
  /** No last id: start `produce` as a new stream (with no producer, 204: a resume route with nothing to resume). A last id `<stream>:<n>`: the rest of that stream; 204 when it is over and fully sent, 410 when it was interrupted (its producer threw, idled, or its node died) or is not held. 503 (Retry-After) when the store cannot be read. */
  serve(req: any, res: any, produce?: Producer | null): void;
  /** serve() as a Web Response; a Promise of one where the store must be asked (a resume of a stream not produced on this node). */
  response(request: Request, produce?: Producer | null): Response | Promise<Response>;
}

export function createResumableStreams(options?: ResumableStreamsOptions): ResumableStreams;

/** The AI SDK's UI message stream (`streamText(...).toUIMessageStream()`, or any ReadableStream or async iterable of its chunks) as a producer's chunks: each chunk's JSON, then `[DONE]`, as toUIMessageStreamResponse writes them. */
export function uiMessageChunks(stream: ReadableStream<unknown> | AsyncIterable<unknown>): AsyncGenerator<string, void, undefined>;
