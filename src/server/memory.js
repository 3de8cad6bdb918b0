// managed-eventsource/server: the memory store, the default store of the event log. A store keeps the events
// behind one interface (the Redis store of redis.js is the other):
//
//   store.append({ id?, event, data }) -> Promise<id>      ids in order; a given id must be above the last
//   store.read(afterId, limit) -> Promise<Snapshot>         events after afterId and where the log stands
//   store.attach({ event, status, reset })                  the live feed, in log order, to one log
//   store.topic?(name) -> store (or a promise of one)       a topic's own store; open?() starts its feed
//   store.status, store.reads, store.head, store.epoch, store.close()

import { describe, range } from './common.js';
import { after, compareIds, newEpoch, tooOld, topicName, vouches } from './ids.js';

const PREFIX = 'managed-eventsource/server';

/**
 * Events in this process's memory: the default store, nothing to set up. Holds at most `maxEvents` events
 * (default 10,000) and none older than `maxAgeMs` (default one hour), trimmed on every append and read.
 * Ids are `<ms>-<seq>` like Redis's, so that an id from before a restart is older than the new log.
 */
export function createMemoryStore(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: createMemoryStore takes an options object, not ${describe(options)}`);
  const maxEvents = range('maxEvents', options.maxEvents ?? 10_000, 1);
  if (maxEvents !== Infinity && !Number.isInteger(maxEvents)) throw new RangeError(`${PREFIX}: maxEvents must be a whole number, not ${maxEvents}`);
  const maxAgeMs = range('maxAgeMs', options.maxAgeMs ?? 3_600_000, 1);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError(`${PREFIX}: now must be a function returning milliseconds, not ${describe(now)}`);

  const parent = options[TOPIC_OF] ?? null; // a topic's store: { children, name } of the store it came from
  const children = new Map(); // name -> the store of that topic
  let made = 0; // topic stores made
  const epoch = newEpoch(); // this store's generation: its ids mean nothing to another store, or after a restart
  const events = []; // { id, event, data, at, epoch }, from `start` on
  let start = 0;
  let head = null;
  let floor = null;
  let lastMs = 0n;
  let lastSeq = 0n;
  let consumer = null;
  let reads = 0;

  function trim(t) {
    let drop = Math.max(0, events.length - start - maxEvents);
    while (start + drop < events.length && events[start + drop].at <= t - maxAgeMs) drop++;
    if (drop === 0) return;
    floor = events[start + drop - 1].id;
    start += drop;
    if (start > 1024 && start * 2 > events.length) {
      events.splice(0, start);
      start = 0;
    }
  }

  function nextId(t) {
    const ms = BigInt(Math.max(0, Math.floor(t)));
    if (ms > lastMs) return `${ms}-0`;
    return `${lastMs}-${lastSeq + 1n}`;
  }

  return {
    kind: 'memory',
    status: 'ready',
    maxEvents,
    maxAgeMs,
    get reads() {
      return reads;
    },
    /** The last id issued, or null. */
    get head() {
      return head;
    },
    /** This store's generation. */
    epoch,
    append(entry) {
      const t = now();
      const id = entry.id ?? nextId(t);
      if (head !== null && compareIds(id, head) <= 0) return Promise.reject(new RangeError(`${PREFIX}: a given id must be above the last one (${head}), not ${id}`));
      const old = entry.id === undefined ? null : tooOld(id, t, maxAgeMs);
      if (old) return Promise.reject(old);
      const [ms, seq] = id.split('-');
      lastMs = BigInt(ms);
      lastSeq = BigInt(seq);
      head = id;
      const record = { id, event: entry.event, data: entry.data, gap: entry.gap === true, at: t, epoch };
      events.push(record);
      trim(t);
      consumer?.event(record);
      return Promise.resolve(id);
    },
    read(afterId, limit) {
      reads++;
      trim(now());
      const first = events.length > start ? events[start].id : null;
      const complete = vouches(afterId, { head, floor, first });
      let list = [];
      let more = false;
      if (complete && limit > 0) {
        const from = after(events, afterId, start);
        more = events.length - from > limit;
        list = events.slice(from, from + limit);
      }
      return Promise.resolve({ events: list, complete, more, head, epoch });
    },
    attach(log) {
      if (consumer) throw new Error(`${PREFIX}: a store belongs to one event log`);
      consumer = log;
    },
    /** The store of topic `name`: its own events and ids, kept here when no log follows it (one that never
     * had an event is let go). */
    topic: parent
      ? undefined
      : (name) => {
          topicName(name);
          let child = children.get(name);
          if (!child) {
            // Every 256th new topic, the topics no log follows whose events have all aged out are let go
            // (a client's id from one of them then names a generation gone: the reload event).
            if (++made % 256 === 0) for (const [n, c] of children) if (c.unused()) children.delete(n);
            child = createMemoryStore({ maxEvents, maxAgeMs, now, [TOPIC_OF]: { children, name } });
            children.set(name, child);
          }
          return child;
        },
    /** No log follows it and it holds no event (after the age bound). */
    unused() {
      if (consumer) return false;
      trim(now());
      return events.length === start;
    },
    close() {
      consumer = null;
      if (parent) {
        // A topic's events outlive the log's interest in it: the next log to open the topic finds them.
        if (head === null) parent.children.delete(parent.name);
        return;
      }
      this.status = 'closed';
    },
  };
}

const TOPIC_OF = Symbol('the store a topic store belongs to');
