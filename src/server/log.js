// managed-eventsource/server's event log: append events, and serve a (re)connecting client everything after
// its last id, then the live events, with no gap and no duplicate between the two (seed 001's "GET,
// Last-Event-ID: 8812 -> replay, then live"). The log keeps no events of its own beyond a recent window: a
// store does (the memory store here, or the Redis store of redis.js), behind one interface:
//
//   store.append({ id?, event, data }) -> Promise<id>      ids in order; a given id must be above the last
//   store.read(afterId, limit) -> Promise<Snapshot>         events after afterId and where the log stands
//   store.attach({ event, status, reset })                  the live feed, in log order, to one log
//   store.status, store.reads, store.close()
//
// What must stay true:
// - Every event a store holds has an id of the form `<ms>-<seq>` (Redis Streams' own), compared as two
//   unsigned integers; the feed delivers them in increasing order.
// - A connection attaches to the feed (buffering) before its store read is issued, so an event appended
//   after the read reached the store is in that buffer; a read shared with other connections (issued before
//   this one attached) is joined to the feed through the recent window, which holds every event fed since
//   its `start`. Either way events at or below the snapshot's head are never written twice.
// - A client whose id the log cannot vouch for (older than the log, trimmed past, never issued, garbage,
//   beyond the last id) is sent the reload event, never a silent gap. The reload frame carries the id from
//   which it goes on, so reconnecting after it asks for nothing twice.
// - Nothing thrown by a client's input leaves serve() or response(): bad ids follow the rules above, a store
//   failure answers with seed 001's soft rejection.
// - Every connection sees the live events in one order: a writer that throws ends its own connection only,
//   and an event fed while another is being dispatched (a writer that appends) waits for it.
// - A connection the log lets go is ended, never left open and silent: close(), a writer that threw, a
//   client more than maxBufferedBytes behind (which is sent no more, so what it holds stays bounded).

import { ENCODER, HEADERS, describe, endAndClose, endBehind, eventName, finite, range, reject, rejectResponse, responseGone, wait } from './common.js';

const PREFIX = 'managed-eventsource/server';

// ---- ids ---------------------------------------------------------------------------------------------

const ID = /^(0|[1-9]\d{0,19})-(0|[1-9]\d{0,19})$/;
const U64 = 18446744073709551615n;

/** The canonical id in `text`, or null: `<ms>-<seq>`, each part a decimal unsigned 64-bit integer with no
 * leading zero (Redis Streams' ids). Anything longer than 41 characters is refused before any parsing. */
export function parseId(text) {
  if (typeof text !== 'string' || text.length > 41) return null;
  const m = ID.exec(text);
  if (!m) return null;
  if ((m[1].length === 20 && BigInt(m[1]) > U64) || (m[2].length === 20 && BigInt(m[2]) > U64)) return null;
  return text;
}

/** A new generation's mark: 32 random bits in base 36 (7 characters), from crypto.getRandomValues (Node and
 * Web runtimes alike). A store draws one when it starts afresh: a memory store as it is made, a Redis
 * stream with its first append after it lost its data (or ever). */
export function newEpoch() {
  const [n] = globalThis.crypto.getRandomValues(new Uint32Array(1));
  return n.toString(36).padStart(7, '0');
}

const EPOCH = /^[0-9a-z]{1,16}$/;

/** The id a client sees: the store's `<ms>-<seq>`, `_`, and the generation that issued it (none for an event
 * a Redis stream held before generations were recorded). */
export const wireId = (id, epoch) => (id && epoch ? `${id}_${epoch}` : id);

/** A client's last id as `{ id, epoch }`: the store's id (canonical, or null if it is not one) and the
 * generation it names (null: none). */
export function parseWireId(text) {
  if (typeof text !== 'string' || text.length > 58) return { id: null, epoch: null };
  const u = text.indexOf('_');
  if (u < 0) return { id: parseId(text), epoch: null };
  const epoch = text.slice(u + 1);
  return EPOCH.test(epoch) ? { id: parseId(text.slice(0, u)), epoch } : { id: null, epoch: null };
}

/** An id's time part, in ms (a Number: exact up to 2^53, and larger ones still compare as far ahead). */
export const timeOf = (id) => Number(id.slice(0, id.indexOf('-')));

/** Orders two canonical ids: negative, zero or positive. */
export function compareIds(a, b) {
  if (a === b) return 0;
  const i = a.indexOf('-');
  const j = b.indexOf('-');
  if (i !== j) return i - j; // a longer millisecond part is a larger one (no leading zeros)
  const ms = a.slice(0, i);
  const msB = b.slice(0, j);
  if (ms !== msB) return ms < msB ? -1 : 1;
  const seq = a.slice(i + 1);
  const seqB = b.slice(j + 1);
  if (seq.length !== seqB.length) return seq.length - seqB.length;
  return seq < seqB ? -1 : seq > seqB ? 1 : 0;
}

/** The first index in `events` (sorted by id, from `from`) whose id is above `id`. */
function after(events, id, from = 0) {
  let lo = from;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(events[mid].id, id) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A topic's name, checked: a string of 1 to 256 characters with no control characters. */
export function topicName(name) {
  if (typeof name !== 'string') throw new TypeError(`${PREFIX}: a topic must be a string, not ${describe(name)}`);
  if (name === '' || name.length > 256 || /[\u0000-\u001f\u007f]/.test(name) || !name.isWellFormed()) throw new RangeError(`${PREFIX}: a topic must be 1 to 256 characters of well-formed Unicode with no control characters, not ${describe(name.length > 64 ? name.slice(0, 64) + '...' : name)}`);
  return name;
}

// ---- frames ------------------------------------------------------------------------------------------

/** One event's bytes on the wire; `data` split into one `data:` line a line (CR, LF or CRLF). */
export function frameOf(id, event, data) {
  let text = id ? `id: ${id}\n` : '';
  if (event && event !== 'message') text += `event: ${event}\n`;
  return `${text}data: ${data.replace(/\r\n|\r|\n/g, '\ndata: ')}\n\n`;
}

/** An append's argument, checked: `{ data, event?, id? }`. */
export function checkEntry(entry) {
  if (entry === null || typeof entry !== 'object') throw new TypeError(`${PREFIX}: append takes { data, event?, id? }, not ${describe(entry)}`);
  const { data, event, id } = entry;
  if (typeof data !== 'string') throw new TypeError(`${PREFIX}: an event's data must be a string, not ${describe(data)}`);
  if (event !== undefined) eventName('event', event);
  if (id !== undefined && (parseId(id) === null || id === '0-0')) throw new RangeError(`${PREFIX}: a given id must be <ms>-<seq> above 0-0 (two unsigned 64-bit integers, as Redis Streams write them), not ${describe(id)}`);
  return { data, event: event ?? 'message', id };
}

/** The rule every store applies to a client's id, given where the log stands: `head` the last id ever
 * issued, `floor` the last id trimmed away (null if none), `first` the first id held (null if none). */
export function vouches(X, { head, floor, first }) {
  if (head === null || compareIds(X, head) > 0) return false; // nothing issued yet, or beyond the last
  if (floor !== null) return compareIds(X, floor) >= 0; // nothing after X has been trimmed
  return first !== null && compareIds(X, first) >= 0; // never trimmed: X is at or after the first
}

/** A RangeError when a given id is older than the store's age bound (its time part at or before
 * `t - maxAgeMs`): Redis trims by an id's time, so such an event would be dropped as it is stored, and no
 * store may keep what the other drops. Null when the id is recent enough. */
export function tooOld(id, t, maxAgeMs) {
  if (!(maxAgeMs < Infinity) || timeOf(id) > t - maxAgeMs) return null;
  return new RangeError(`${PREFIX}: a given id must be newer than the store's maxAgeMs (${maxAgeMs} ms), not ${id}: it would be trimmed as it is stored`);
}

export class StoreUnavailableError extends Error {
  constructor(message, cause) {
    super(message, { cause });
    this.name = 'StoreUnavailableError';
    this.code = 'STORE_UNAVAILABLE';
  }
}

// ---- the memory store --------------------------------------------------------------------------------

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

// ---- the log -----------------------------------------------------------------------------------------

/** The longest `retry:` a drained connection is sent: a native EventSource then reconnects within it, ours
 * after its ladder's first step (up to baseMs, 1 s at the defaults); the window is what spreads them. */
const DRAIN_RETRY_MS = 1000;

/** The append-to-delivery lag histogram's upper bounds, seconds (Prometheus `le`). */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A Prometheus label value, escaped (backslash, double quote, line feed). */
const escapeLabel = (v) => String(v).replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : '\\' + c));

/** The Prometheus text exposition format's content type. */
const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** How far ahead of the clock a given id's time part may be (another node's clock, a little ahead). */
const MAX_AHEAD_MS = 10_000;

/** The admission of a server with no gate: nothing to release. */
const ADMITTED = Object.freeze({ ok: true, release() {} });

/**
 * An event log over a store (default: a memory store). See docs/reference.md for the rules; in short:
 * `append` assigns ids in order; `connect(lastEventId)` resolves to a connection that, once started,
 * writes everything after that id and then every live event; `serve(req, res)` and `response(request)` do
 * that over node:http (Express) and as a Web `Response`, composing with a gate.
 */
export function createEventLog(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: createEventLog takes an options object, not ${describe(options)}`);
  const store = options.store ?? createMemoryStore();
  if (!store || typeof store.append !== 'function' || typeof store.read !== 'function' || typeof store.attach !== 'function') {
    throw new TypeError(`${PREFIX}: store must be a store (createMemoryStore() or await createRedisStore()), not ${describe(store)}`);
  }
  const recent = Math.min(range('recent', options.recent ?? 1000, 0), store.maxEvents ?? Infinity);
  if (!Number.isInteger(recent)) throw new RangeError(`${PREFIX}: recent must be a whole number, not ${recent}`);
  const snapshotMs = wait('snapshotMs', options.snapshotMs ?? 1000);
  const shareReads = options.shareReads ?? true;
  if (typeof shareReads !== 'boolean') throw new TypeError(`${PREFIX}: shareReads must be true or false, not ${describe(shareReads)}`);
  const maxReplay = range('maxReplay', options.maxReplay ?? 10_000, 1);
  if (!Number.isInteger(maxReplay)) throw new RangeError(`${PREFIX}: maxReplay must be a whole number, not ${maxReplay}`);
  const reloadEvent = eventName('reloadEvent', options.reloadEvent ?? 'reload');
  const lastEventIdParam = options.lastEventIdParam === null ? null : eventName('lastEventIdParam', options.lastEventIdParam ?? 'lastEventId');
  const heartbeatMs = wait('heartbeatMs', options.heartbeatMs ?? 15_000);
  const heartbeatEvent = eventName('heartbeatEvent', options.heartbeatEvent ?? 'heartbeat');
  if (['message', 'open', 'error'].includes(heartbeatEvent)) throw new TypeError(`${PREFIX}: heartbeatEvent must not be ${JSON.stringify(heartbeatEvent)}: an EventSource hands that to onmessage or its own handlers, not only to the clients that know the heartbeat`);
  // The heartbeat, written first on every stream and then every heartbeatMs: a named event, which an
  // EventSource delivers (it never shows a comment line) to the client's stall watchdog, announcing the
  // interval and where the log reads a reconnect's id. Our client knows it with no option (connection.js).
  const heartbeat = frameOf(null, heartbeatEvent, JSON.stringify(lastEventIdParam === null ? { heartbeatMs } : { heartbeatMs, lastEventIdParam }));
  const unavailableRetryMs = wait('unavailableRetryMs', options.unavailableRetryMs ?? 5000);
  const maxBufferedBytes = finite('maxBufferedBytes', options.maxBufferedBytes ?? 1 << 20, 1);
  const onstatus = options.onstatus ?? null;
  if (onstatus !== null && typeof onstatus !== 'function') throw new TypeError(`${PREFIX}: onstatus must be a function, not ${describe(onstatus)}`);
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new TypeError(`${PREFIX}: random must be a function like Math.random, not ${describe(random)}`);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError(`${PREFIX}: now must be a function returning milliseconds, not ${describe(now)}`);
  const onerror = options.onerror ?? null;
  if (onerror !== null && typeof onerror !== 'function') throw new TypeError(`${PREFIX}: onerror must be a function, not ${describe(onerror)}`);

  // A named topic with no connections is let go after this long: its store's feed stops; its history stays.
  const topicIdleMs = wait('topicIdleMs', options.topicIdleMs ?? 30_000);
  // Topics open at once on this node (on Redis, each holds a connection for its feed): past it, a client of a
  // topic not open is turned away softly until one is let go.
  const maxTopics = range('maxTopics', options.maxTopics ?? 10_000, 1);
  const authorize = options.authorize ?? null;
  if (authorize !== null && typeof authorize !== 'function') throw new TypeError(`${PREFIX}: authorize must be a function (request, topic) returning true, false, 401 or 403 (or a promise of one), not ${describe(authorize)}`);

  const connections = new Set(); // every topic's
  const stats = { reads: 0, sharedReads: 0, windowServed: 0, reloads: 0, connections: 0, storeErrors: 0, resumes: 0, events: 0, drained: 0 };
  /** Append-to-delivery lag of each event the feed delivers (its id's time part to now), a histogram over
   * LAG_BUCKETS (seconds), for metrics(). */
  const lag = { counts: new Array(LAG_BUCKETS.length).fill(0), count: 0, sum: 0 };
  let status = store.status ?? 'ready';
  let closed = false;
  /** While a drain runs: when it ends (now() ms), else null. New clients are turned away until then. */
  let drainingUntil = null;

  const reloadFrame = (id, epoch, reason) => {
    stats.reloads++;
    return frameOf(wireId(id, epoch), reloadEvent, reason);
  };
  const frame = (ev) => (ev.frame ??= ev.gap ? frameOf(wireId(ev.id, ev.epoch), reloadEvent, 'gap') : frameOf(wireId(ev.id, ev.epoch), ev.event, ev.data));

  /** Writes to one connection; a writer that throws ends that connection alone. */
  function send(c, text) {
    try {
      c.write(text);
    } catch (error) {
      end(c);
      onerror?.(error);
    }
  }

  /** Closes a connection from the log's side and tells its owner (the `end` given to start). */
  function end(c) {
    if (!c.active) return;
    detach(c);
    try {
      c.end?.();
    } catch (error) {
      onerror?.(error);
    }
  }

  /**
   * One topic's engine (the log's own, `name` null, or a named one): its store, its recent window, its
   * shared reads and its live feed, dispatched to its connections. Topics share the log's connections set
   * (drain, close, heartbeats), its stats and its options.
   */
  function openTopic(name, store) {
    /** The recent window: every event fed since `start` (exclusive; null: since its first event). */
    const recentWindow = { events: [], from: 0, start: store.head ?? null };
    const own = new Set(); // this topic's connections
    const reads = new Map(); // afterId -> { promise, issuedAt (fed count), done, at }
    let fed = 0; // events fed so far: a read issued at fed = n saw every event fed before n
    let gapPending = false; // events went out with no id while the store was down
    let topicStatus = store.status ?? 'ready';

    function remember(ev) {
      if (recent === 0) {
        recentWindow.start = ev.id;
        return;
      }
      recentWindow.events.push(ev);
      if (recentWindow.events.length - recentWindow.from > recent) {
        recentWindow.start = recentWindow.events[recentWindow.from].id;
        recentWindow.from++;
      }
      trimWindow();
    }

    /** Lets go of the events the window no longer holds once they are most of its array, whichever trim
     * (count or age) dropped them: what it keeps in memory stays within twice what it holds, or 1,024. */
    function compactWindow() {
      if (recentWindow.from > 1024 && recentWindow.from * 2 > recentWindow.events.length) {
        recentWindow.events.splice(0, recentWindow.from);
        recentWindow.from = 0;
      }
    }

    /** The window keeps to the store's age bound: what the store would no longer replay, it does not. */
    function trimWindow() {
      if (!(store.maxAgeMs < Infinity)) return compactWindow();
      const cutoff = now() - store.maxAgeMs;
      while (recentWindow.events.length > recentWindow.from && recentWindow.events[recentWindow.from].at <= cutoff) {
        recentWindow.start = recentWindow.events[recentWindow.from].id;
        recentWindow.from++;
      }
      compactWindow();
    }

    /** Whether the window holds every event after `id` that has been fed. */
    function windowJoins(id) {
      if (recentWindow.start !== null && compareIds(id, recentWindow.start) >= 0) return true;
      return recentWindow.events.length > recentWindow.from && compareIds(id, recentWindow.events[recentWindow.from].id) >= 0;
    }
    const windowLast = () => (recentWindow.events.length > recentWindow.from ? recentWindow.events[recentWindow.events.length - 1].id : recentWindow.start);
    const windowAfter = (id) => recentWindow.events.slice(after(recentWindow.events, id, recentWindow.from));

    // An event fed while another is being dispatched (a writer that appends, to a memory store) waits for it,
    // so that every connection sees the events in one order.
    const queue = [];
    let dispatching = false;
    function dispatch(ev) {
      queue.push(ev);
      if (dispatching) return;
      dispatching = true;
      try {
        for (let i = 0; i < queue.length; i++) dispatchOne(queue[i]);
      } finally {
        queue.length = 0;
        dispatching = false;
      }
    }

    function dispatchOne(ev) {
      const text = ev.id === null ? frameOf(null, ev.event, ev.data) : frame(ev);
      for (const c of own) {
        if (c.buffer) {
          // Not started yet (its replay is being read, or connect()'s caller has not called start): held, up to
          // maxBufferedBytes, past which it is let go, as a client that far behind is (start then ends it).
          c.buffer.push(ev);
          c.bufferedBytes += ev.data.length + 64;
          if (c.bufferedBytes > maxBufferedBytes) {
            c.buffer = [];
            c.overflowed = true;
            detach(c);
          }
        }
        else if (ev.id === null) send(c, text);
        else if (c.skipThrough !== null && compareIds(ev.id, c.skipThrough) <= 0) continue;
        else {
          c.skipThrough = null;
          send(c, text);
        }
      }
    }

    store.attach({
      event(ev) {
        fed++;
        stats.events++;
        const seconds = Math.max(0, now() - timeOf(ev.id)) / 1000;
        lag.count++;
        lag.sum += seconds;
        for (let i = 0; i < LAG_BUCKETS.length; i++) if (seconds <= LAG_BUCKETS[i]) lag.counts[i]++;
        remember(ev);
        dispatch(ev);
      },
      status(next, error) {
        if (next === topicStatus) return;
        topicStatus = next;
        if (next === 'ready' && gapPending) writeGapMarker();
        // The log's status, its errors and onstatus are its own store's: a topic's store shares its connection.
        if (name !== null) return;
        status = next;
        if (next === 'unavailable') {
          stats.storeErrors++;
          if (error !== undefined) onerror?.(error);
        }
        onstatus?.(next, error);
      },
      /** The feed is not continuous with what the window holds (a store that lost its data). */
      reset(position = null) {
        recentWindow.events = [];
        recentWindow.from = 0;
        recentWindow.start = position;
        reads.clear();
      },
    });

    // One gap marker at a time covers every event sent with no id before it was appended; one that fails while
    // the store is ready is tried again (a store that goes unavailable tries again when it is back).
    let markerInFlight = false;
    let markerRetry = null;
    function writeGapMarker() {
      if (markerInFlight || !gapPending || closed) return;
      markerInFlight = true;
      gapPending = false;
      store.append({ event: 'message', data: '', gap: true }).then(
        () => {
          markerInFlight = false;
          if (gapPending && topicStatus === 'ready') writeGapMarker();
        },
        () => {
          markerInFlight = false;
          gapPending = true;
          if (topicStatus !== 'ready' || markerRetry || closed) return;
          markerRetry = setTimeout(() => {
            markerRetry = null;
            if (topicStatus === 'ready') writeGapMarker();
          }, 1000);
          markerRetry.unref?.();
        },
      );
    }

    /** One read of the store after `id`, shared by every connection that asks for the same id while it is in
     * flight or for `snapshotMs` after. */
    function read(id, limit, fresh) {
      const key = limit === 0 ? 'head' : id;
      if (shareReads && !fresh) {
        const hit = reads.get(key);
        if (hit && (!hit.done || now() - hit.at <= snapshotMs)) {
          stats.sharedReads++;
          return hit;
        }
      }
      stats.reads++;
      const entry = { issuedAt: fed, done: false, at: 0, promise: null };
      entry.promise = store.read(id, limit).then(
        (snap) => {
          entry.done = true;
          entry.at = now();
          return snap;
        },
        (error) => {
          if (reads.get(key) === entry) reads.delete(key);
          throw error;
        },
      );
      if (shareReads) {
        reads.set(key, entry);
        sweep();
      }
      return entry;
    }

    let sweeper = null;
    function sweep() {
      if (sweeper) return;
      sweeper = setTimeout(() => {
        sweeper = null;
        const t = now();
        for (const [id, e] of reads) if (e.done && t - e.at > snapshotMs) reads.delete(id);
        if (reads.size) sweep();
      }, Math.max(snapshotMs, 100));
      sweeper.unref?.();
    }

    /** connect()'s work, the log's side of the connection (serve() and response() use it as it is). */
    async function attachClient(lastEventId) {
      if (closed) throw new Error(`${PREFIX}: the event log is closed`);
      const conn = new Attachment(topic, fed);
      own.add(conn);
      connections.add(conn);
      stats.connections++;
      if (typeof lastEventId !== 'string' || lastEventId === '') return conn; // a new client: live only
      stats.resumes++;
      const { id: X, epoch } = parseWireId(lastEventId);
      // An id that names another generation (a store that lost its data, another process's memory store,
      // another topic) is no position here, wherever its time part falls: the reload event, never a replay.
      const otherGeneration = (current) => X !== null && epoch !== null && epoch !== (current ?? null);
      if (otherGeneration(store.epoch)) {
        conn.reload = 'epoch';
        conn.reloadFrom = store.head ?? null;
        return conn;
      }
      try {
        trimWindow();
        // The window holds everything after X: no store read.
        const replay = X !== null && windowJoins(X) && compareIds(X, windowLast() ?? X) <= 0 ? windowAfter(X) : null;
        if (replay !== null && replay.length <= maxReplay) {
          stats.windowServed++;
          for (const ev of replay) conn.replay(frame(ev));
          conn.skipThrough = windowLast();
          return conn;
        }
        // An id that does not parse is told to reload from the head, which a read of no events gives.
        let position = X ?? '0-0';
        let limit = X === null ? 0 : maxReplay;
        for (let attempt = 0; attempt < 3; attempt++) {
          const entry = read(position, limit, attempt > 0);
          const snap = await entry.promise;
          if (!conn.active) return conn;
          if (snap.epoch !== undefined && otherGeneration(snap.epoch)) {
            conn.reload = 'epoch'; // the store started afresh since this log last knew its generation
            conn.reloadFrom = snap.head;
            return conn;
          }
          if (attempt === 0 ? X === null || !snap.complete || snap.more : !snap.complete || snap.more) {
            // Also when reading on from a shared snapshot: what it could not give is never skipped silently.
            // start() writes it, with the newest id known then (see startAttachment).
            conn.reload = X === null ? 'invalid' : snap.more ? 'too-far' : 'unknown';
            conn.reloadFrom = snap.head;
            return conn;
          }
          for (const ev of snap.events) conn.replay(frame(ev));
          const P = snap.head;
          if (P === null) return conn; // an empty log: everything from now on is live
          if (entry.issuedAt >= conn.issuedAt) {
            // Issued after this connection attached: its buffer holds every event after P.
            conn.skipThrough = P;
            return conn;
          }
          trimWindow();
          if (windowJoins(P)) {
            // A shared read issued earlier: the window holds what was fed between it and now.
            const last = windowLast();
            for (const ev of windowAfter(P)) conn.replay(frame(ev));
            conn.skipThrough = last !== null && compareIds(last, P) > 0 ? last : P;
            return conn;
          }
          position = P; // the window does not reach back to the shared snapshot: read on from it, unshared
          limit = maxReplay;
        }
        conn.reload = 'unknown';
        return conn;
      } catch (error) {
        detach(conn);
        throw error?.code === 'STORE_UNAVAILABLE' ? error : new StoreUnavailableError(`${PREFIX}: the store could not be read: ${error?.message ?? error}`, error);
      }
    }

    /** Appends a checked entry to this topic's store (see the log's append). */
    async function append(checked) {
      try {
        const id = await store.append(checked);
        return wireId(id, store.epoch ?? null);
      } catch (error) {
        if (error?.code !== 'STORE_UNAVAILABLE') throw error;
        if (closed) throw new Error(`${PREFIX}: the event log closed before its store took the event; it was not stored`, { cause: error });
        gapPending = true;
        dispatch({ id: null, event: checked.event, data: checked.data });
        // A store that failed an append while it still says 'ready' (it may never leave it) gets the gap
        // marker now: an event that went out with no id is never a silent gap.
        if (topicStatus === 'ready') writeGapMarker();
        return null;
      }
    }

    const topic = {
      name,
      store,
      connections: own,
      idle: null, // the timer that retires a named topic with no connections
      attachClient,
      append,
      windowLast,
      get held() {
        return recentWindow.events.length;
      },
      /** Stops this topic's timers (its store is closed or released by the caller). */
      stop() {
        clearTimeout(sweeper);
        clearTimeout(markerRetry);
        clearTimeout(topic.idle);
      },
    };
    return topic;
  }

  const main = openTopic(null, store);
  /** Named topics, open or opening: name -> { topic, opening } (topic null until its store is open). */
  const topics = new Map();

  /** The topic `name` (null: the log's own), opened on first use: synchronously when it is open already. */
  function topicFor(name) {
    if (name === null) return main;
    const known = topics.get(name);
    if (known) return known.topic ?? known.opening;
    if (closed) return Promise.reject(new Error(`${PREFIX}: the event log is closed`));
    if (typeof store.topic !== 'function') return Promise.reject(new TypeError(`${PREFIX}: this store (${store.kind ?? 'a custom store'}) has no topics: give it a topic(name) method that returns (or resolves to) a store of that topic's own`));
    if (topics.size >= maxTopics) return Promise.reject(new StoreUnavailableError(`${PREFIX}: ${topics.size} topics are open on this node (maxTopics): topic ${JSON.stringify(name)} waits until one is let go`));
    const entry = { topic: null, opening: null };
    entry.opening = (async () => {
      const topicStore = await store.topic(name);
      try {
        // Its feed starts here (a Redis topic's own connection, and where its stream stands).
        await topicStore.open?.();
        if (closed) throw new Error(`${PREFIX}: the event log is closed`);
      } catch (error) {
        await topicStore.close?.();
        throw error;
      }
      entry.topic = openTopic(name, topicStore);
      idle(entry.topic); // let go unless a connection comes (the one that opened it, as a rule)
      return entry.topic;
    })().catch((error) => {
      topics.delete(name);
      throw error?.code === 'STORE_UNAVAILABLE' || closed ? error : new StoreUnavailableError(`${PREFIX}: topic ${JSON.stringify(name)} could not be opened: ${error?.message ?? error}`, error);
    });
    topics.set(name, entry);
    return entry.opening;
  }

  /** A named topic with no connections is let go after topicIdleMs: its store (a Redis topic's own feed
   * connection) is closed, and its history stays in the store. */
  function idle(topic) {
    if (topic.name === null || closed) return;
    clearTimeout(topic.idle);
    topic.idle = setTimeout(() => {
      // A topic with connections again is let go later: its last one's detach sets the timer anew.
      if (topic.connections.size > 0 || topics.get(topic.name)?.topic !== topic) return;
      topics.delete(topic.name);
      topic.stop();
      Promise.resolve(topic.store.close?.()).catch(() => {});
    }, topicIdleMs);
    topic.idle.unref?.();
  }

  let beat = null;
  function heartbeats() {
    if (beat || heartbeatMs === 0) return;
    beat = setInterval(() => {
      for (const c of connections) if (!c.buffer) send(c, heartbeat);
      if (connections.size === 0) {
        clearInterval(beat);
        beat = null;
      }
    }, heartbeatMs);
    beat.unref?.();
  }

  /** The log's side of one client's connection, in `connections` while attached: one object with no
   * closures of its own, so that a connection costs the server little beside the socket under it. */
  class Attachment {
    constructor(topic, fed) {
      this.topic = topic; // the topic it follows
      this.write = null; // the writer given to start
      this.end = null; // called when the log ends the connection
      this.buffer = []; // live events fed before start; null once started
      this.bufferedBytes = 0; // about what the buffer holds
      this.overflowed = false; // let go because the buffer passed maxBufferedBytes
      this.skipThrough = null; // live events at or below this id were in the replay
      this.active = true;
      this.issuedAt = fed; // the topic's feed count when it attached: a read issued at or after it was issued after it attached
      this.pending = null; // the replay that start writes first: frames
      this.drained = false; // ended by a drain
      this.reload = null; // why the client is told to reload, instead of a replay: start writes it
      this.reloadFrom = null; // the head its store read saw
    }
    /** Queues a frame for start to write first. */
    replay(text) {
      (this.pending ??= []).push(text);
    }
  }

  /** Writes (synchronously) what `conn` missed and from then on every live event; `ended` is called when
   * the log ends it. */
  function startAttachment(conn, write, ended) {
    if (typeof write !== 'function') throw new TypeError(`${PREFIX}: start takes a function that writes a string, not ${describe(write)}`);
    if (ended !== undefined && typeof ended !== 'function') throw new TypeError(`${PREFIX}: start's second argument must be a function called when the log ends the connection, not ${describe(ended)}`);
    if (conn.overflowed && !conn.write) {
      conn.write = write; // started once: a second start is ignored
      conn.buffer = null;
      return ended?.();
    }
    if (!conn.active || conn.write) return;
    conn.write = write;
    conn.end = ended ?? null;
    const buffered = conn.buffer;
    conn.buffer = null;
    const pending = conn.pending ?? [];
    conn.pending = null;
    if (conn.reload !== null) {
      // The reload's id is the newest the log knows as it is written (a shared read's head may be up to
      // snapshotMs old), and nothing at or below it follows: the state the client reloads includes it.
      const head = conn.reloadFrom;
      const fed = conn.topic.windowLast();
      const at = head === null ? fed : fed === null || compareIds(head, fed) > 0 ? head : fed;
      pending.push(reloadFrame(at, conn.topic.store.epoch ?? null, conn.reload));
      conn.skipThrough = at;
    }
    for (const ev of buffered) {
      if (ev.id === null) {
        pending.push(frameOf(null, ev.event, ev.data));
        continue;
      }
      if (conn.skipThrough !== null && compareIds(ev.id, conn.skipThrough) <= 0) continue;
      conn.skipThrough = null;
      pending.push(frame(ev));
    }
    const text = pending.join(''); // the replay in one write, not one a frame
    if (text) {
      try {
        write(text);
      } catch (error) {
        end(conn);
        throw error;
      }
    }
    heartbeats();
  }

  /** Detaches `conn` from the feed, from its owner's side (its `end` is not called). */
  function detach(conn) {
    if (!conn.active) return;
    conn.active = false;
    connections.delete(conn);
    conn.topic.connections.delete(conn);
    if (conn.topic.connections.size === 0) idle(conn.topic);
  }

  /** What connect() resolves to: `start`, `close` and `open`, which work unbound, as before
   * (`socket.on('close', conn.close)`); each bound function is made on first use. */
  class Connection {
    #conn;
    #start = null;
    #close = null;
    constructor(conn) {
      this.#conn = conn;
    }
    get start() {
      return (this.#start ??= (write, ended) => (startAttachment(this.#conn, write, ended), this));
    }
    get close() {
      return (this.#close ??= () => detach(this.#conn));
    }
    get open() {
      return this.#conn.active;
    }
  }

  /** The client's attachment to topic `name` (null: the log's own). */
  function attachClient(lastEventId, name = null) {
    if (closed) return Promise.reject(new Error(`${PREFIX}: the event log is closed`));
    // An open topic attaches at once (in this task, as connect() always has), one still opening when it is.
    const topic = topicFor(name);
    return topic instanceof Promise ? topic.then((t) => t.attachClient(lastEventId)) : topic.attachClient(lastEventId);
  }

  /**
   * Resolves to a connection for a client whose last id is `lastEventId` (a string, or null/'' for a new
   * client): `start(write)` writes (synchronously) what it missed and from then on every live event, as
   * strings; `close()` ends it. Rejects with a StoreUnavailableError when the store is down and the recent
   * window cannot serve the id.
   */
  const connect = async (lastEventId) => new Connection(await attachClient(lastEventId));

  /** The client's last id: the `Last-Event-ID` header, else the query parameter, else null. */
  function lastEventIdOf(headerValue, url) {
    if (typeof headerValue === 'string' && headerValue !== '') return headerValue;
    if (lastEventIdParam === null || typeof url !== 'string') return null;
    const q = url.indexOf('?');
    if (q < 0) return null;
    try {
      return new URLSearchParams(url.slice(q + 1)).get(lastEventIdParam);
    } catch {
      return null;
    }
  }

  /** The client's last id from a node:http request or a Web Request. serve() and response() call this, not
   * `this.lastEventId`: they are passed unbound as route handlers. */
  function lastEventIdOfRequest(request) {
    if (request?.headers && typeof request.headers.get === 'function') return lastEventIdOf(request.headers.get('last-event-id'), request.url);
    return lastEventIdOf(request?.headers?.['last-event-id'], request?.url);
  }

  /** The gate's decision; an admission's release runs once, however often the stream's end is seen. */
  function admit(opts) {
    if (!opts.gate && !opts.release) return ADMITTED; // nothing to release: no object a connection
    const a = opts.gate ? opts.gate.admit() : ADMITTED;
    if (!a.ok) return a;
    let held = true;
    return {
      ok: true,
      release: () => {
        if (!held) return;
        held = false;
        a.release();
        opts.release?.();
      },
    };
  }

  /** The authorize hook's verdict on `request` for topic `name`: 0 to go on, 401 or 403 to refuse. It
   * throws (the caller answers softly, as for a store that is down) when the hook throws or answers
   * something else. */
  async function verdict(request, name) {
    if (authorize === null) return 0;
    const answer = await authorize(request, name);
    if (answer === true) return 0;
    if (answer === false) return 403;
    if (answer === 401 || answer === 403) return answer;
    throw new TypeError(`${PREFIX}: authorize must return true, false, 401 or 403 (or a promise of one), not ${describe(answer)}`);
  }
  /** serve()'s and response()'s topic: null for the log's own, the name, or the Error that says why not. */
  function topicOf(opts) {
    if (opts.topic === undefined || opts.topic === null) return null;
    try {
      return topicName(opts.topic);
    } catch (error) {
      return error;
    }
  }

  /** append(), on topic `name` (null: the log's own). */
  async function appendTo(name, entry) {
    if (closed) throw new Error(`${PREFIX}: the event log is closed`);
    const checked = checkEntry(entry);
    if (checked.id !== undefined) {
      const ms = timeOf(checked.id);
      // Every later id would inherit a time part ahead of the clock, and those events would not age out.
      if (ms > now() + MAX_AHEAD_MS) throw new RangeError(`${PREFIX}: a given id's time part must not be more than ${MAX_AHEAD_MS} ms ahead of the clock (${Math.round(now())}), not ${checked.id}`);
    }
    if (name === null) return main.append(checked);
    const known = topics.get(name);
    if (known) return (known.topic ?? (await known.opening)).append(checked);
    // A topic not open on this node has no connections here: the event goes to its store only, with no feed
    // opened for it (an append to an offline user's topic costs no connection).
    if (typeof store.topic !== 'function') throw new TypeError(`${PREFIX}: this store (${store.kind ?? 'a custom store'}) has no topics: give it a topic(name) method that returns (or resolves to) a store of that topic's own`);
    let topicStore = null;
    try {
      topicStore = await store.topic(name);
      const id = await topicStore.append(checked);
      return wireId(id, topicStore.epoch ?? null);
    } catch (error) {
      // As for an open topic: not stored, and no one here to send it to live.
      if (error?.code === 'STORE_UNAVAILABLE') return null;
      throw error;
    } finally {
      topicStore?.release?.();
    }
  }

  /** metrics() with no labels, for the handlers, which are passed unbound. */
  const metricsText = () => log.metrics();
  const unavailableWait = () => Math.round(unavailableRetryMs + random() * unavailableRetryMs);
  /** A client turned away during a drain comes back after it, at a random moment of a window as long again:
   * to this node restarted, or (behind a balancer) to another. */
  const draining = () => drainingUntil !== null && now() < drainingUntil;
  const drainWait = () => {
    const left = Math.max(0, drainingUntil - now());
    return Math.min(2 ** 31 - 1, Math.round(left + random() * Math.max(left, DRAIN_RETRY_MS)));
  };

  /**
   * The drain (see the returned object's `drain`): each connection is ended at its own moment of the window,
   * the window cut into as many equal slots as there are connections, each at a random point of its own slot
   * (stratified, so the ends are spread evenly and never bunch), after a `retry:` of up to DRAIN_RETRY_MS.
   */
  function drain(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: drain takes an options object, not ${describe(options)}`);
    const overMs = wait('overMs', options.overMs ?? 10_000);
    if (closed) return Promise.resolve(0);
    const start = now();
    drainingUntil = Math.max(drainingUntil ?? 0, start + overMs);
    const list = [...connections];
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [list[i], list[j]] = [list[j], list[i]];
    }
    const slot = list.length ? overMs / list.length : 0;
    return new Promise((done) => {
      let left = list.length;
      let drained = 0;
      if (left === 0) return done(0);
      const resolve = () => (drainsPending.delete(resolve), done(drained));
      drainsPending.add(resolve);
      list.forEach((c, i) => {
        const timer = setTimeout(() => {
          drains.delete(timer);
          if (c.active) {
            // Where the client reconnects by itself (a native EventSource), it waits this long; ours takes
            // its ladder's first step.
            if (c.write) send(c, `retry: ${Math.round(random() * DRAIN_RETRY_MS)}\n\n`);
            c.drained = true;
            end(c);
            drained++;
            stats.drained++;
          }
          if (--left === 0) resolve();
        }, Math.round((i + random()) * slot));
        drains.add(timer);
      });
    });
  }
  const drains = new Set(); // the drains' timers, which close() clears
  const drainsPending = new Set(); // the drains' resolvers, which close() calls (it ends what is left)

  const log = {
    store,
    /** 'ready', or the store's other statuses ('connecting', 'unavailable', 'closed'). */
    get status() {
      return status;
    },
    /** Store reads issued, reads shared, connections served from the recent window, reload events sent. */
    get stats() {
      // recentHeld: the window's events in memory, those it no longer holds but has not let go of included.
      let recentHeld = main.held;
      for (const { topic } of topics.values()) recentHeld += topic?.held ?? 0;
      return { ...stats, recentHeld, topics: topics.size };
    },
    /** Connections attached to the live feed. */
    get connections() {
      return connections.size;
    },

    /**
     * The log's figures in Prometheus's text format: clients connected, connections and resumes, replays
     * from the window and the store, reload events, store errors and whether the store is up, events
     * delivered, drained connections, and the append-to-delivery lag (an event's id's time part to its
     * delivery by the feed: for ids the store assigned, the time it took). `labels` go on every sample.
     */
    metrics(labels = {}) {
      if (labels === null || typeof labels !== 'object') throw new TypeError(`${PREFIX}: metrics takes an object of labels, not ${describe(labels)}`);
      const own = Object.entries(labels).map(([k, v]) => {
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k)) throw new TypeError(`${PREFIX}: a label name must match [a-zA-Z_][a-zA-Z0-9_]*, not ${JSON.stringify(k)}`);
        return `${k}="${escapeLabel(v)}"`;
      });
      const l = (extra = []) => (own.length + extra.length ? `{${[...own, ...extra].join(',')}}` : '');
      const out = [];
      const metric = (name, type, help, samples) => {
        out.push(`# HELP managed_eventsource_${name} ${help}`, `# TYPE managed_eventsource_${name} ${type}`);
        for (const [suffix, extra, value] of samples) out.push(`managed_eventsource_${name}${suffix}${l(extra)} ${value}`);
      };
      metric('connections', 'gauge', 'Clients connected to the event log now.', [['', [], connections.size]]);
      const open = [...topics.values()].filter(({ topic }) => topic && topic.connections.size > 0);
      metric('topic_connections', 'gauge', 'Clients connected now to each named topic that has any.', open.map(({ topic }) => ['', [`topic="${escapeLabel(topic.name)}"`], topic.connections.size]));
      metric('topics', 'gauge', 'Named topics open on this node (each is let go after topicIdleMs with no connections).', [['', [], topics.size]]);
      metric('connections_total', 'counter', 'Clients the event log has served.', [['', [], stats.connections]]);
      metric('resumes_total', 'counter', 'Clients that came with a last event id.', [['', [], stats.resumes]]);
      metric('replays_total', 'counter', 'Resumes served from the recent window, and store reads made (shared ones apart).', [
        ['', ['from="window"'], stats.windowServed],
        ['', ['from="store"'], stats.reads],
        ['', ['from="shared_read"'], stats.sharedReads],
      ]);
      metric('reload_events_total', 'counter', 'Reload events sent: ids the log could not vouch for, and gaps.', [['', [], stats.reloads]]);
      metric('store_errors_total', 'counter', 'Times the store became unavailable.', [['', [], stats.storeErrors]]);
      metric('store_up', 'gauge', 'Whether the store is ready (1) or not (0).', [['', [], status === 'ready' ? 1 : 0]]);
      metric('events_total', 'counter', 'Events the feed delivered to the log.', [['', [], stats.events]]);
      metric('drained_total', 'counter', 'Connections ended by drain().', [['', [], stats.drained]]);
      metric('delivery_lag_seconds', 'histogram', 'From an event id\'s time part to its delivery by the feed.', [
        ...LAG_BUCKETS.map((le, i) => ['_bucket', [`le="${le}"`], lag.counts[i]]),
        ['_bucket', ['le="+Inf"'], lag.count],
        ['_sum', [], lag.sum],
        ['_count', [], lag.count],
      ]);
      return out.join('\n') + '\n';
    },

    /** metrics() for node:http and Express: `app.get('/metrics', log.serveMetrics)`. */
    serveMetrics(req, res) {
      res.writeHead(200, { 'Content-Type': METRICS_TYPE, 'Cache-Control': 'no-store' });
      res.end(metricsText());
    },

    /** metrics() as a Web Response: `export const GET = log.metricsResponse`. */
    metricsResponse() {
      return new Response(metricsText(), { status: 200, headers: { 'Content-Type': METRICS_TYPE, 'Cache-Control': 'no-store' } });
    },

    /** Appends an event; resolves to its id, or to null when the store is unavailable (the event then goes
     * out live, with no id, and later resumes that cross it are told to reload). */
    append: (entry) => appendTo(null, entry),

    connect,

    /**
     * Topic `name`: a stream of its own in the same log (a user's, a room's, a document's), with its own
     * history, ids and recovery, served by `serve(req, res, { topic })`. The handle's append, connect,
     * serve and response are the log's, on that topic. A topic with no connections is let go after a
     * while; its history stays in the store.
     */
    topic(name) {
      topicName(name);
      return {
        name,
        append: (entry) => appendTo(name, entry),
        connect: async (lastEventId) => new Connection(await attachClient(lastEventId, name)),
        serve: (req, res, opts = {}) => log.serve(req, res, { ...opts, topic: name }),
        response: (request, opts = {}) => log.response(request, { ...opts, topic: name }),
        /** Connections following this topic on this node. */
        get connections() {
          const known = topics.get(name)?.topic;
          return known ? known.connections.size : 0;
        },
      };
    },

    /** The client's last id from a node:http request or a Web Request. */
    lastEventId: lastEventIdOfRequest,

    /**
     * node:http (and Express): with `gate`, a refused client gets seed 001's soft rejection (`retry:` and
     * `hintEvent`); an admitted one its replay, then live events until it goes. Never throws or rejects.
     */
    async serve(req, res, opts = {}) {
      let admission = null;
      try {
        if (draining()) {
          res.shouldKeepAlive = false; // the client's next attempt on a new connection: to another node
          return reject(res, drainWait(), { hintEvent: opts.hintEvent });
        }
        const name = topicOf(opts);
        if (name instanceof Error) {
          res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
          return res.end(name.message);
        }
        admission = admit(opts);
        if (!admission.ok) return reject(res, admission.retryMs, { hintEvent: opts.hintEvent });
        let conn;
        // A client that went before serve() was called (a middleware that awaited) has had its 'close'.
        let gone = responseGone(res);
        res.on('close', () => {
          gone = true;
          if (conn) detach(conn);
          admission.release();
        });
        if (gone) return admission.release();
        let refusal;
        try {
          refusal = await verdict(req, name);
        } catch (error) {
          // A hook that failed (its session store down, say) is not a refusal: the client comes back later.
          onerror?.(error);
          if (!gone && !res.headersSent) reject(res, unavailableWait(), { hintEvent: opts.hintEvent });
          return;
        }
        if (gone) return;
        if (refusal) {
          // 401 or 403: our client stops retrying and calls onunauthorized (a native EventSource fails too).
          res.writeHead(refusal, { 'Cache-Control': 'no-store' });
          return res.end();
        }
        try {
          conn = await attachClient(lastEventIdOfRequest(req), name);
        } catch (error) {
          if (error?.code !== 'STORE_UNAVAILABLE' && !closed) onerror?.(error); // a store with no topics, say
          if (!gone && !res.headersSent) reject(res, unavailableWait(), { hintEvent: opts.hintEvent });
          return;
        }
        if (gone) return detach(conn);
        if (!conn.active || draining()) {
          // The log closed, or a drain ended it, while its replay was read; or a drain began while it was
          // authorized or its topic opened (the drain's list was taken before it attached).
          detach(conn);
          if (draining()) res.shouldKeepAlive = false;
          return reject(res, draining() ? drainWait() : unavailableWait(), { hintEvent: opts.hintEvent });
        }
        res.writeHead(200, { ...HEADERS, ...opts.headers });
        // The first bytes at once, so that every proxy forwards the headers (some wait for a byte of the body)
        // and the client opens now, even with nothing to replay.
        // Headers first, on their own: written with the first chunk, node:http keeps about 740 bytes more
        // for each idle connection (bench:server, 5,742 against 5,005 at 1,000 clients).
        res.flushHeaders?.();
        res.write(opts.retry ? `${opts.retry}\n${heartbeat}` : heartbeat);
        // The stream ends when the log does, or when the client is more than maxBufferedBytes behind as the
        // next write comes (one write, an event or a replay, may exceed it): it then gets everything written
        // so far, whole, and resumes from its last id. One that takes in nothing for STALLED_MS is dropped.
        // A drained client's connection is closed too: kept alive, its reconnect would come back over it to
        // this node, where a balancer that routes connections (a TCP one) would send it elsewhere.
        const finish = () => (conn.drained ? endAndClose(res) : endBehind(res));
        startAttachment(conn, (text) => {
          if (res.writableLength > maxBufferedBytes) {
            detach(conn);
            return finish();
          }
          res.write(text);
        }, finish);
      } catch (error) {
        options.onerror?.(error);
        if (!res.headersSent) {
          try {
            res.writeHead(500);
            res.end();
          } catch {}
        } else res.destroy();
        admission?.release?.();
      }
    },

    /** The same for runtimes with Web Request/Response: resolves to a `Response` (never rejects). */
    async response(request, opts = {}) {
      let admission = null;
      try {
        if (draining()) return rejectResponse(drainWait(), { hintEvent: opts.hintEvent });
        const name = topicOf(opts);
        if (name instanceof Error) return new Response(name.message, { status: 400, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } });
        admission = admit(opts);
        if (!admission.ok) return rejectResponse(admission.retryMs, { hintEvent: opts.hintEvent });
        let refusal;
        try {
          refusal = await verdict(request, name);
        } catch (error) {
          onerror?.(error); // as serve(): a hook that failed is not a refusal
          admission.release();
          return rejectResponse(unavailableWait(), { hintEvent: opts.hintEvent });
        }
        if (refusal) {
          admission.release();
          return new Response(null, { status: refusal, headers: { 'Cache-Control': 'no-store' } });
        }
        let conn;
        try {
          conn = await attachClient(lastEventIdOfRequest(request), name);
        } catch (error) {
          if (error?.code !== 'STORE_UNAVAILABLE' && !closed) onerror?.(error);
          admission.release();
          return rejectResponse(unavailableWait(), { hintEvent: opts.hintEvent });
        }
        const finish = () => {
          detach(conn);
          admission.release();
          request.signal?.removeEventListener('abort', finish); // a signal may outlive the stream
        };
        if (request.signal?.aborted) {
          finish();
          return new Response(null, { status: 204 });
        }
        if (!conn.active || draining()) {
          // The log closed meanwhile, or a drain began (as serve()).
          finish();
          return rejectResponse(draining() ? drainWait() : unavailableWait(), { hintEvent: opts.hintEvent });
        }
        request.signal?.addEventListener('abort', finish, { once: true });
        const body = new ReadableStream(
          {
            start(controller) {
              controller.enqueue(ENCODER.encode(opts.retry ? `${opts.retry}\n${heartbeat}` : heartbeat)); // as serve()
              // As serve(): the body ends, after what it holds, when the log does or the client is behind.
              let ended = false;
              const endBody = () => {
                finish();
                if (ended) return;
                ended = true;
                controller.close();
              };
              startAttachment(conn, (text) => {
                if (controller.desiredSize < 0) {
                  detach(conn);
                  return endBody();
                }
                controller.enqueue(ENCODER.encode(text));
              }, endBody);
            },
            cancel: finish,
          },
          { highWaterMark: maxBufferedBytes, size: (chunk) => chunk.byteLength },
        );
        return new Response(body, { status: 200, headers: { ...HEADERS, ...opts.headers } });
      } catch (error) {
        options.onerror?.(error);
        admission?.release?.();
        return new Response(null, { status: 500 });
      }
    },

    /**
     * For a rolling deploy: ends every connection over `overMs` (default 10,000) rather than at once, each at
     * its own moment of the window (spread evenly, at random), after a short `retry:`, so that the clients
     * arrive at the other nodes at about connections/overMs a second, not in one wave (seed 001). Until the
     * window ends, a new client is turned away softly (`retry:` past the window). Resolves to the number of
     * connections it ended (close() meanwhile ends the rest, and resolves it); then `close()`. Choose overMs so that connections/overMs is within what the other
     * nodes' gates admit.
     */
    drain,

    /** Ends every connection (the streams of serve() and response() end; a connect() handle's `end` is
     * called), refuses the resumes still in flight, and closes the store. */
    async close() {
      closed = true;
      for (const t of drains) clearTimeout(t);
      drains.clear();
      for (const resolve of [...drainsPending]) resolve(); // what is left, close() ends
      for (const c of [...connections]) end(c);
      connections.clear();
      clearInterval(beat);
      main.stop();
      const opened = [...topics.values()];
      topics.clear();
      await Promise.allSettled(opened.map(async ({ topic, opening }) => {
        const t = topic ?? (await opening.catch(() => null));
        t?.stop();
        await t?.store.close?.();
      }));
      await store.close?.();
    },
  };
  return log;
}
