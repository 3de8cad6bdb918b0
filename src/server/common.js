// managed-eventsource/server's shared parts: argument checks whose errors name the argument, the event
// stream's headers, and seed 001's soft rejection (a 200 event stream carrying `retry:`, then its end),
// which the gate's refusals and the event log's both answer with. No I/O of its own; imports nothing.

export const ENCODER = new TextEncoder();

/** A finite number in [min, max], or a RangeError naming `name`. */
export function range(name, value, min, max = Infinity) {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`managed-eventsource/server: ${name} must be a number, not ${describe(value)}`);
  }
  if (!(value >= min && value <= max)) {
    throw new RangeError(`managed-eventsource/server: ${name} must be ${max === Infinity ? `at least ${min}` : `from ${min} to ${max}`}, not ${value}`);
  }
  return value;
}

/** The same, and finite. */
export function finite(name, value, min, max) {
  range(name, value, min, max);
  if (!Number.isFinite(value)) throw new RangeError(`managed-eventsource/server: ${name} must be finite, not ${value}`);
  return value;
}

export const describe = (v) => (v === null ? 'null' : typeof v === 'string' ? JSON.stringify(v) : typeof v);

/** A wait in whole milliseconds, as `retry:` takes it (digits only; the specification ignores the rest). */
export const wait = (name, ms) => Math.round(finite(name, ms, 0, 2 ** 31 - 1));

/** An event name that cannot break the frame it goes in. */
export function eventName(name, value) {
  if (typeof value !== 'string') throw new TypeError(`managed-eventsource/server: ${name} must be a string, not ${describe(value)}`);
  if (value === '' || /[\r\n]/.test(value)) throw new TypeError(`managed-eventsource/server: ${name} must be a non-empty string with no line break, not ${JSON.stringify(value)}`);
  return value;
}

/** The soft rejection's body: `retry:`, the hint event when asked for, and a comment. */
export function rejection(retryMs, options = {}) {
  const ms = wait('retryMs', retryMs);
  if (options === null || typeof options !== 'object') throw new TypeError(`managed-eventsource/server: the options must be an object, not ${describe(options)}`);
  const hint = options.hintEvent === undefined ? '' : `event: ${eventName('hintEvent', options.hintEvent)}\ndata: ${ms}\n`;
  return `retry: ${ms}\n${hint}\n: come back in ${ms} ms\n\n`;
}

// X-Accel-Buffering: nginx (with its default proxy_buffering on) would hold a stream in its buffer.
export const HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };

/** How long a node:http stream that was ended because its client fell behind waits for that client to take
 * in anything before the connection is dropped. */
export const STALLED_MS = 30_000;

/** Whether a node:http (or HTTP/2 compatibility) response's client has already gone. */
export const responseGone = (res) => res.destroyed === true || res.closed === true || res.stream?.destroyed === true;

/** Ends a node:http stream after what it holds; a client that takes in nothing of it for STALLED_MS is
 * dropped. Watched on our own timer, by the bytes the socket still holds: node:http's res.setTimeout lets its
 * first expiry pass while a write is queued, which made it 60 s. */
export function endBehind(res) {
  if (res.writableEnded) return;
  res.end();
  const socket = res.socket;
  if (res.writableFinished) return;
  if (!socket || typeof socket.writableLength !== 'number') return void res.setTimeout?.(STALLED_MS, () => res.destroy());
  let held = socket.writableLength;
  let movedAt = Date.now();
  const watch = setInterval(() => {
    if (res.writableFinished || socket.destroyed) return clearInterval(watch);
    if (socket.writableLength < held) {
      held = socket.writableLength;
      movedAt = Date.now();
    } else if (Date.now() - movedAt >= STALLED_MS) {
      clearInterval(watch);
      res.destroy();
    }
  }, STALLED_MS / 10);
  watch.unref?.();
  res.once?.('close', () => clearInterval(watch));
}

/** Runs `fn` once the promise reactions of the current task have run: process.nextTick where there is one (its
 * queue runs after them), else a microtask. */
const afterReactions = typeof globalThis.process?.nextTick === 'function' ? (fn, arg) => globalThis.process.nextTick(fn, arg) : (fn, arg) => queueMicrotask(() => fn(arg));

/**
 * A writer that sends what one task writes as one piece, through `send(text)`: an append burst's events (a
 * thousand appends resolved in one task) become one write, so one HTTP chunk and one read at the client, not
 * one each (node:http frames every write as a chunk of its own, corked or not, and WebKit hands each to the
 * page: its fetch reader under load took 26 s, not 2, over 100,000 one-event chunks). `write.flush()` sends
 * what is held at once (before the stream ends). What `send` throws goes to `failed(error)`, not out of the
 * later task that sends (it would be an uncaught exception there, which ends a Node process).
 */
export function batched(send, failed) {
  let held = '';
  const flush = () => {
    const text = held;
    if (text === '') return;
    held = '';
    try {
      send(text);
    } catch (error) {
      try {
        failed(error);
      } catch {} // nowhere left to tell
    }
  };
  const write = (text) => {
    if (held === '') afterReactions(flush);
    held += text;
  };
  write.flush = flush;
  /** What is held, in UTF-16 units (about its bytes): a client's bound counts it with what its socket holds. */
  write.held = () => held.length;
  return write;
}

/** The node:http stream's batch, on the response, for the write and end that flush it first. */
const BATCH = Symbol('managed-eventsource batch');

/**
 * batched() for a node:http stream: `add(text)` holds what a task writes, sent as one write; what is held goes
 * out before anything else written to `res` or its end, by whoever calls them (a handler that ends the
 * response after an append must not lose that append's event: the instance's write and end flush first, as
 * compression middleware wraps them). One object a stream, its functions shared: closures of its own cost
 * each idle connection about 500 bytes more (bench:server's heap per connection).
 */
class ResponseBatch {
  constructor(res, failed) {
    this.res = res;
    this.failed = failed; // told what a write throws, in the later task that flushes
    this.text = '';
    this.write = res.write; // the instance's own (a middleware's), else its prototype's
    this.end = res.end;
    res[BATCH] = this;
    res.write = flushThenWrite;
    res.end = flushThenEnd;
  }
  add(text) {
    if (this.text === '') afterReactions(flushBatch, this);
    this.text += text;
  }
  /** What is held, in UTF-16 units (about its bytes): a client's bound counts it with what its socket holds. */
  held() {
    return this.text.length;
  }
  flush() {
    const text = this.text;
    if (text === '') return;
    this.text = '';
    const res = this.res;
    if (res.writableEnded || responseGone(res)) return;
    try {
      this.write.call(res, text);
    } catch (error) {
      try {
        this.failed(error);
      } catch {} // nowhere left to tell
    }
  }
}
function flushThenWrite(...args) {
  const batch = this[BATCH];
  batch.flush();
  return batch.write.apply(this, args);
}
function flushThenEnd(...args) {
  const batch = this[BATCH];
  batch.flush();
  return batch.end.apply(this, args);
}
const flushBatch = (batch) => batch.flush();

/** A ResponseBatch for `res`; `failed(error)` hears what a write throws. */
export const batchedResponse = (res, failed) => new ResponseBatch(res, failed);

/**
 * batched() for a Web stream's controller: what a task writes is one chunk. `close()` enqueues what is held,
 * then closes the stream, once; what is written after it, or after the reader cancelled, goes nowhere.
 */
export function batchedBody(controller) {
  let closed = false;
  const enqueue = batched((text) => closed || controller.enqueue(ENCODER.encode(text)), () => {}); // cancelled meanwhile
  enqueue.close = () => {
    if (closed) return;
    enqueue.flush();
    closed = true;
    controller.close();
  };
  return enqueue;
}

/** endBehind, and then the connection is closed rather than kept alive for the client's next request. */
export function endAndClose(res) {
  const socket = res.socket; // node:http lets go of it as the response finishes
  endBehind(res);
  if (res.writableFinished) socket?.end();
  else res.once?.('finish', () => socket?.end());
}

/**
 * Seed 001, step 2, for node:http and Express: answers 200 with an event stream that says `retry:
 * retryMs` (and, with `hintEvent`, dispatches that event with the wait as its data, for clients that
 * cannot read `retry:`, such as ours: `retryHintEvent`), then ends it. Every SSE client reconnects after
 * an ended 200 stream; a 503 would end a native EventSource for good.
 */
export function reject(res, retryMs, options) {
  if (!res || typeof res.writeHead !== 'function' || typeof res.end !== 'function') throw new TypeError(`managed-eventsource/server: reject takes a node:http ServerResponse (or Express response), not ${describe(res)}`);
  const body = rejection(retryMs, options);
  if (res.headersSent) throw new Error('managed-eventsource/server: reject: the response has already sent its headers; reject before writing');
  res.writeHead(200, HEADERS);
  res.end(body);
}

/** The same soft rejection as a Web `Response` (Next.js route handlers, Hono, Deno, Bun, Workers). */
export function rejectResponse(retryMs, options) {
  return new Response(rejection(retryMs, options), { status: 200, headers: HEADERS });
}

