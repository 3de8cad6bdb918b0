// Async iteration: `for await (const ev of client)` and `client.events(types, options)`. An iteration is one
// more listener of the client, in the table onmessage sits in (events.js), so it sees the very events the
// other listeners see, in the same order, with the client as their target; and one more watcher of its
// status (client.js's `watchers`), which ends it.
//
// What must stay true:
// - the loop owns the client: however an iteration ends (the loop's `break`, `return` or throw, the
//   client's 'closed' or 'failed', an overflow), its listeners and watcher are removed and the client is
//   closed, so nothing is left running for a loop that no longer reads;
// - events that arrived are never lost silently: a queue holds what the consumer has not taken yet;
// - `max` bounds how far the loop is behind, not how many events one task hands over. While the loop keeps
//   up (it last waited with nothing queued, and no turn has found it doing something else with events
//   queued since), nothing queued counts against `max`: an engine dispatches a whole network read in one
//   task, a replay after a reconnect is one write of any size, and the fetch transport's reader may hand
//   over more reads in the microtasks of the loop's own turn, while the loop is still taking the burst
//   before them. A turn (the task posted after events arrive, in which a waiting loop is woken; see serve)
//   that finds the loop not waiting while events are queued ends that: from then on, until it waits again,
//   every queued event counts;
// - past `max`, `overflow: 'error'` ends the iteration with a RangeError after the queued events, and
//   `overflow: 'drop-oldest'` drops the oldest and counts them in `dropped`: at that turn down to `max`, and
//   at each event after it down to `max` - 1. So the queue holds at most `max` events plus what arrived
//   between the loop's last wait and the turn that found it busy;
// - the queue's array holds at most about twice the events queued (take compacts it), however long the
//   loop stays behind;
// - 'failed' is thrown from the iterator, after the events queued before it; 'closed' (close(), `until`, a
//   204, an abort) ends it normally, after them;
// - a waiting loop is woken in a task of its own (see tick), and then takes every queued event in that turn.
//
// It decides nothing about the connection and never talks to Rust. It imports client.js, events.js,
// errors.js and boundary.js.

import { S_CLOSED, S_FAILED } from './boundary.js';
import { attemptOf } from './client.js';
import { add, remove } from './events.js';
import { fail, PREFIX } from './errors.js';

/** How far a loop may fall behind by default: ten thousand events (see docs/reference.md for why). */
export const MAX = 10000;

/** The dead slots at the head of the queue's array past which take() copies the live ones down. */
const COMPACT_AT = 1024;

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
  /** Whether the loop keeps up: it last waited with nothing queued, and no turn has found it busy with
   * events queued since. While it does, nothing queued counts against `max`. */
  let keepingUp = true;
  /** The loop's next() calls not answered yet (for-await makes one at a time). */
  const waiting = [];
  /** Whether no more events will come; `error`, if set, is thrown once the queue is taken. */
  let finished = false, error = null;
  /** The channel whose message gives the loop its turn (made on first use), and whether one is posted. */
  let wakeup = null, posted = false;

  const take = () => {
    const value = queue[head];
    queue[head++] = undefined;
    const left = queue.length - head;
    if (left === 0) (queue = []), (head = 0);
    else if (head >= COMPACT_AT && head >= left) (queue = queue.slice(head)), (head = 0);
    return value;
  };

  /** Drops the oldest queued events until `limit` are left, counting them (`overflow: 'drop-oldest'`). */
  const dropTo = (limit) => {
    while (queue.length - head > limit) {
      take();
      iterator.dropped++;
    }
  };

  /** Answers a next() call: the oldest queued event, else the error, else the end. */
  const settle = (w) => {
    if (head < queue.length) w.resolve({ value: take(), done: false });
    else if (error) {
      w.reject(error);
      error = null;
    } else w.resolve({ value: undefined, done: true });
  };

  /**
   * Gives the loop its turn in a task of its own after events arrive, not in the microtask after each one:
   * then a waiting loop takes every event that arrived meanwhile in one turn (its next() calls find them
   * queued), where a wake per event costs an engine's microtask checkpoint per event (in Firefox, twice
   * onmessage's cost; docs/performance.md). A MessageChannel's task, which timers' clamping and throttling
   * do not delay. Posted also while the loop is busy (none of its next() calls waiting), to find it so.
   */
  function tick() {
    if (posted) return;
    posted = true;
    if (typeof MessageChannel !== 'function') return void setTimeout(serve);
    if (!wakeup) {
      wakeup = new MessageChannel();
      wakeup.port1.onmessage = serve;
    }
    wakeup.port2.postMessage(null);
  }

  /**
   * The loop's turn. A loop doing something else while events are queued is behind by all of them; a
   * waiting loop takes what is queued, in the microtasks after this task, and whether it took all of it is
   * seen at the turn after (posted here).
   */
  function serve() {
    posted = false;
    if (waiting.length === 0 && head < queue.length) {
      keepingUp = false;
      if (overflow === 'drop-oldest') dropTo(max);
    }
    while (waiting.length !== 0 && (head < queue.length || finished)) settle(waiting.shift());
    if (finished) hangUp();
    else if (keepingUp && head < queue.length) tick();
  }

  /** Closes the wake-up channel (an open port would keep Node's loop alive). */
  function hangUp() {
    wakeup?.port1.close();
    wakeup = null;
  }

  /** A listener entry for each type: the path onmessage takes. */
  const listener = (e) => {
    if (finished) return;
    if (!keepingUp && queue.length - head >= max) {
      if (overflow !== 'drop-oldest') {
        end(new RangeError(`${PREFIX}the loop fell ${max} events behind the stream (events(types, { max }) sets the bound; overflow: 'drop-oldest' drops the oldest instead)`));
        record.client.close();
        return;
      }
      dropTo(max - 1);
    }
    queue.push(e);
    tick();
  };

  /** The client's status, told after its callbacks: 'closed' ends the iteration, 'failed' throws. */
  const watcher = (s) => {
    if (s !== S_CLOSED && s !== S_FAILED) return;
    end(s === S_FAILED ? failure(record) : null);
    // Closing inside the shell's telling of a status would make the news queued after it stale (ongiveup
    // after 'failed'): the client closes once that telling is over.
    queueMicrotask(() => record.client.close());
  };

  /** No more events: the listeners and the watcher go; a waiting loop gets the queue, then the error or the end. */
  function end(e) {
    if (finished) return;
    finished = true;
    error = e;
    for (const type of types) remove(record, type, listener);
    record.watchers.delete(watcher);
    if (waiting.length !== 0) tick();
    else hangUp();
  }

  const iterator = {
    /** Events dropped because the loop was `max` behind (with `overflow: 'drop-oldest'`). */
    dropped: 0,
    next() {
      if (waiting.length === 0) {
        // The loop's turn through what is queued: one promise and one result an event, nothing more.
        if (head < queue.length) return Promise.resolve({ value: take(), done: false });
        if (finished) return new Promise((resolve, reject) => settle({ resolve, reject }));
      }
      // Nothing queued: the loop has caught up, and what comes next arrives while it waits.
      keepingUp = true;
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    /** The loop ended early (`break`, `return`, a throw): nothing queued is kept, and the client closes. */
    return(value) {
      queue = [];
      head = 0;
      end(null);
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
