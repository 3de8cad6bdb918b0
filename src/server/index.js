// managed-eventsource/server: the server's half of seed 001, for Node (node:http, Express) and for
// runtimes with Web Request/Response (Next.js route handlers, Hono, Deno, Bun, Workers).
//
// This file holds the admission gate (a token bucket with an open-stream budget, whose refusals say when to
// come back) and the few lines a stream sends to keep its clients spread out, and is the module's entry:
//   common.js     argument checks, the stream's headers, the soft rejection (reject, rejectResponse)
//   log.js        the event log: topics and authorization, the drain, metrics, the HTTP adapters
//   engine.js     the replay engine of one topic (replay after a last id, then live)
//   ids.js        ids and generations; frames.js, an event's bytes; memory.js, the memory store
//   redis.js      the Redis Streams store; node-redis is imported only when it is created
//   resumable.js  resumable streams started by a request (an LLM completion over POST)
// Nothing here needs a package installed. The build bundles these files into pkg/server.js and .cjs
// (readable, `redis` left external); the development server and the population run use that as it ships.

import { ENCODER, describe, finite, range, wait } from './common.js';

const MAX_WAIT_MS = 2 ** 31 - 1;

export { reject, rejectResponse } from './common.js';
export { createEventLog } from './log.js';
export { createMemoryStore } from './memory.js';
export { compareIds } from './ids.js';
export { createRedisStore, ladderDelay } from './redis.js';
export { createResumableStreams, uiMessageChunks } from './resumable.js';

/**
 * An admission gate: a token bucket of `ratePerSec` tokens a second holding at most `burst` (seed 001,
 * step 4), and at most `maxStreams` streams open at once.
 *
 * `admit()` answers `{ ok: true, release }` (call `release` when the stream ends; a second call does
 * nothing) or `{ ok: false, retryMs }`. A refused client's wait is, with `pace`, its place in line divided
 * by the rate plus up to `spreadMs` of jitter, so the clients turned away come back at the rate the gate
 * admits (the simulator's table 4); without, a random wait of `minWaitMs` plus up to `spreadMs` (seed 001).
 * A refusal because `maxStreams` are open is always the random wait: streams end at no rate the gate knows.
 */
export function createGate(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`managed-eventsource/server: createGate takes an options object, not ${describe(options)}`);
  const { ratePerSec, pace = false, now = Date.now, random = Math.random } = options;
  finite('ratePerSec', ratePerSec, 0);
  if (ratePerSec === 0) throw new RangeError('managed-eventsource/server: ratePerSec must be above 0 (a gate that admits no one); to admit everyone, do not use a gate');
  const burst = finite('burst', options.burst ?? Math.max(1, ratePerSec), 1);
  const maxStreams = options.maxStreams === undefined ? Infinity : range('maxStreams', options.maxStreams, 1);
  if (maxStreams !== Infinity && !Number.isInteger(maxStreams)) throw new RangeError(`managed-eventsource/server: maxStreams must be a whole number, not ${maxStreams}`);
  if (typeof pace !== 'boolean') throw new TypeError(`managed-eventsource/server: pace must be true or false, not ${describe(pace)}`);
  const spreadMs = wait('spreadMs', options.spreadMs ?? (pace ? 500 : 20_000));
  const minWaitMs = wait('minWaitMs', options.minWaitMs ?? 5_000);
  if (typeof now !== 'function') throw new TypeError(`managed-eventsource/server: now must be a function returning milliseconds, not ${describe(now)}`);
  if (typeof random !== 'function') throw new TypeError(`managed-eventsource/server: random must be a function like Math.random, not ${describe(random)}`);

  const gap = 1000 / ratePerSec; // milliseconds between two places in line
  let tokens = burst;
  let last = now();
  let open = 0;
  let nextSlot = -Infinity; // when the next client turned away may come back (paced)
  let closedUntil = -Infinity; // pause(): nobody before this

  const clock = () => {
    const t = now();
    if (typeof t !== 'number' || !Number.isFinite(t)) throw new TypeError(`managed-eventsource/server: now() returned ${describe(t)}, not a finite number of milliseconds`);
    return t;
  };

  function refill(t) {
    if (t > last) {
      tokens = Math.min(burst, tokens + ((t - last) / 1000) * ratePerSec);
      last = t;
    }
  }

  /** How long a client turned away at `t` waits: paced, until its place in line, the moment the bucket
   * will hold a token for it (or the pause ends) with every earlier place served 1/rate apart. Never more
   * than MAX_WAIT_MS, the most `retry:` (and reject()) and a timer take. */
  function retryMs(t, paced) {
    if (!paced) return Math.min(MAX_WAIT_MS, Math.round(Math.max(minWaitMs, closedUntil - t) + random() * spreadMs));
    const ready = t < closedUntil ? closedUntil : t + Math.max(0, 1 - tokens) * gap;
    const at = Math.max(nextSlot, ready);
    nextSlot = at + gap;
    return Math.min(MAX_WAIT_MS, Math.round(at - t + random() * spreadMs));
  }

  function release() {
    open--;
  }

  return {
    admit() {
      const t = clock();
      refill(t);
      // A full stream budget frees at no rate the gate knows: that refusal is a random wait, paced or not.
      if (open >= maxStreams && t >= closedUntil) return { ok: false, retryMs: retryMs(t, false) };
      if (t < closedUntil || tokens < 1) return { ok: false, retryMs: retryMs(t, pace) };
      tokens -= 1;
      open++;
      let held = true;
      return {
        ok: true,
        release() {
          if (held) {
            held = false;
            release();
          }
        },
      };
    },
    /** Admits nobody until `untilMs` on the gate's clock (a restart, an incident); with `pace`, the clients
     * turned away meanwhile are given places in line from then, so the first seconds after are not a spike. */
    pause(untilMs) {
      closedUntil = finite('untilMs', untilMs, -Infinity);
    },
    /** Streams admitted and not yet released. */
    get open() {
      return open;
    },
    /** Whole tokens in the bucket now. */
    get tokens() {
      refill(clock());
      return Math.floor(tokens);
    },
  };
}

/** Seed 001, step 1: a `retry:` line of `baseMs` plus up to `spreadMs`, different for every stream so that
 * clients dropped together do not come back together. Send it as a stream's first line. */
export function retryField(baseMs, spreadMs = 0, random = Math.random) {
  const base = wait('baseMs', baseMs);
  const spread = wait('spreadMs', spreadMs);
  return `retry: ${base + Math.floor(random() * spread)}\n`;
}

/** A comment line, which every client ignores and which keeps proxies and stall watchdogs from closing an
 * idle stream (our fetch transport counts it; for `EventSource` send an event and `heartbeatEvent`). */
export function heartbeat(text = '') {
  if (typeof text !== 'string' || /[\r\n]/.test(text)) throw new TypeError(`managed-eventsource/server: heartbeat text must be a string with no line break, not ${describe(text)}`);
  return text ? `: ${text}\n\n` : ':\n\n';
}

/**
 * Seed 001, step 5: raises the wait of every open stream during an incident. Each stream is sent `retry:`
 * of `ms` plus up to `spreadMs` (by default `ms` again, as the seed does), which takes effect at its next
 * reconnect. A stream is anything with `write(string)` (node:http, Express, a text writer) or `enqueue`
 * (a `ReadableStream` controller, which is sent bytes). Streams that have ended are skipped. Returns how
 * many were written to.
 */
export function broadcastRetry(streams, ms, { spreadMs = ms, random = Math.random } = {}) {
  if (streams == null || typeof streams[Symbol.iterator] !== 'function') throw new TypeError(`managed-eventsource/server: broadcastRetry takes an iterable of streams, not ${describe(streams)}`);
  const base = wait('ms', ms);
  const spread = wait('spreadMs', spreadMs);
  let n = 0;
  for (const s of streams) {
    if (s?.writableEnded || s?.destroyed) continue;
    const line = `retry: ${base + Math.floor(random() * spread)}\n\n`;
    if (typeof s?.write === 'function') s.write(line);
    else if (typeof s?.enqueue === 'function') s.enqueue(ENCODER.encode(line));
    else throw new TypeError(`managed-eventsource/server: broadcastRetry: a stream has neither write() nor enqueue(): ${describe(s)}`);
    n++;
  }
  return n;
}
