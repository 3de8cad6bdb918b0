// Async iteration: `for await (const ev of client)` and `client.events(types, options)`. An iteration is one
// more listener of the client, in the table onmessage sits in (events.js), so it sees the very events the
// other listeners see, in the same order, with the client as their target; and one more watcher of its
// status (client.js's `watchers`), which ends it.
//
// What must stay true:
// - the loop owns the client: however an iteration ends (the loop's `break`, `return` or throw, the
//   client's 'closed' or 'failed', an overflow), its listeners and watcher are removed and the client is
//   closed, so nothing is left running for a loop that no longer reads;
// - events that arrived are never lost silently: a queue holds what the consumer has not taken yet, up to
//   `max`; past it, `overflow: 'error'` ends the iteration with a RangeError after the queued events, and
//   `overflow: 'drop-oldest'` drops the oldest and counts it in `dropped`;
// - 'failed' is thrown from the iterator, after the events queued before it; 'closed' (close(), `until`, a
//   204, an abort) ends it normally, after them.
//
// It decides nothing about the connection and never talks to Rust. It imports client.js, events.js,
// errors.js and boundary.js.

import { S_CLOSED, S_FAILED } from './boundary.js';
import { attemptOf } from './client.js';
import { add, remove } from './events.js';
import { fail, PREFIX } from './errors.js';

/** The bound of an iteration's queue by default: ten thousand events (see docs/reference.md for why). */
export const MAX = 10000;

const OVERFLOWS = ['error', 'drop-oldest'];

/** The types an iteration listens to: `types` (a string or a list of strings), 'message' by default. */
function typesOf(types) {
  if (types === undefined) return ['message'];
  const list = typeof types === 'string' ? [types] : types;
  if (!Array.isArray(list) || list.length === 0) fail('events(types) takes an event type or a non-empty array of them');
  return list.map((t) => `${t}`);
}

/**
 * An iteration of the record's events of `types` (see typesOf), with `options` `{ max, overflow }`: an
 * object that is its own AsyncIterator (next, return) and AsyncIterable, and counts in `dropped` the events
 * it dropped (with `overflow: 'drop-oldest'`).
 */
export function iterate(record, types, options) {
  types = typesOf(types);
  if (options != null && typeof options !== 'object') fail('events() options must be an object');
  const max = options?.max ?? MAX;
  const overflow = options?.overflow ?? 'error';
  if (typeof max !== 'number' || !(max >= 1) || max !== Math.floor(max)) throw new RangeError(PREFIX + 'events() option max must be a whole number of events, at least 1');
  if (!OVERFLOWS.includes(overflow)) fail("events() option overflow must be 'error' or 'drop-oldest'");

  /** Events not taken yet: queue[head] is the oldest. */
  let queue = [], head = 0;
  /** The consumer's next() calls not answered yet (for-await makes one at a time). */
  const waiting = [];
  /** Whether no more events will come; `error`, if set, is thrown once the queue is taken. */
  let finished = false, error = null;

  const take = () => {
    const value = queue[head];
    queue[head++] = undefined;
    if (head === queue.length) (queue = []), (head = 0);
    return value;
  };

  /** A listener entry for each type: the path onmessage takes. */
  const listener = (e) => {
    if (finished) return;
    if (waiting.length !== 0) return waiting.shift().resolve({ value: e, done: false });
    if (queue.length - head >= max) {
      if (overflow === 'drop-oldest') {
        take();
        iterator.dropped++;
      } else {
        end(new RangeError(`${PREFIX}the loop fell ${max} events behind the stream (events(types, { max }) sets the bound; overflow: 'drop-oldest' drops the oldest instead)`));
        record.client.close();
        return;
      }
    }
    queue.push(e);
  };

  /** The client's status, told after its callbacks: 'closed' ends the iteration, 'failed' throws. */
  const watcher = (s) => {
    if (s !== S_CLOSED && s !== S_FAILED) return;
    end(s === S_FAILED ? failure(record) : null);
    // Closing inside the shell's telling of a status would make the news queued after it stale (ongiveup
    // after 'failed'): the client closes once that telling is over.
    queueMicrotask(() => record.client.close());
  };

  /** No more events: the listeners and the watcher go; the waiting calls get the error, or the end. */
  function end(e) {
    if (finished) return;
    finished = true;
    error = e;
    for (const type of types) remove(record, type, listener);
    record.watchers.delete(watcher);
    for (const w of waiting.splice(0)) {
      if (error) {
        w.reject(error);
        error = null;
      } else w.resolve({ value: undefined, done: true });
    }
  }

  const iterator = {
    /** Events dropped because the loop was `max` behind (with `overflow: 'drop-oldest'`). */
    dropped: 0,
    next() {
      if (head < queue.length) return Promise.resolve({ value: take(), done: false });
      if (finished) {
        if (!error) return Promise.resolve({ value: undefined, done: true });
        const e = error;
        error = null;
        return Promise.reject(e);
      }
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    /** The loop ended early (`break`, `return`, a throw): nothing queued is kept, and the client closes. */
    return(value) {
      end(null);
      queue = [];
      head = 0;
      record.client.close();
      return Promise.resolve({ value, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };

  if (record.status === S_CLOSED) end(null);
  else if (record.status === S_FAILED) {
    end(failure(record));
    record.client.close();
  } else {
    for (const type of types) add(record, type, listener);
    record.watchers.add(watcher);
  }
  return iterator;
}

/** What an iteration throws for status 'failed'. */
function failure(record) {
  const attempts = attemptOf(record);
  return Object.assign(new Error(`${PREFIX}the stream failed (status 'failed' after ${attempts} attempts in a row)`), { status: 'failed', attempts });
}
