// Types for managed-eventsource/server: the server's half of seed 001 (admission, soft rejection, retry
// hints), for Node and for runtimes with Web Request/Response.

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
