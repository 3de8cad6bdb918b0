// managed-eventsource/server: the replay engine, one for each topic of an event log (the log's own is one):
// attach a connection, read what it missed, join it to the live feed with no gap and no duplicate.
//
// What must stay true:
// - A connection attaches to the feed (buffering) before its store read is issued, so an event appended
//   after the read reached the store is in that buffer; a read shared with other connections (issued before
//   this one attached) is joined to the feed through the recent window, which holds every event fed since
//   its `start`. Either way events at or below the snapshot's head are never written twice.
// - A client whose id the engine cannot vouch for (older than the log, trimmed past, never issued, garbage,
//   beyond the last id, another generation's) is sent the reload event, never a silent gap.
// - Every connection sees the live events in one order: an event fed while another is being dispatched (a
//   writer that appends) waits for it.

import { StoreUnavailableError, after, compareIds, parseWireId, timeOf, wireId } from './ids.js';
import { frameOf } from './frames.js';

const PREFIX = 'managed-eventsource/server';

/** The append-to-delivery lag histogram's upper bounds, seconds (Prometheus `le`). */
export const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The log's side of one client's connection, in `connections` while attached: one object with no
 * closures of its own, so that a connection costs the server little beside the socket under it. */
export class Attachment {
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
    this.endedByLog = false; // ended by the log (a drain, close()), perhaps before start
  }
  /** Queues a frame for start to write first. */
  replay(text) {
    (this.pending ??= []).push(text);
  }
}

/**
 * One topic's engine (the log's own, `name` null, or a named one): its store, its recent window, its
 * shared reads and its live feed, dispatched to its connections. Topics share the log's connections set
 * (drain, close, heartbeats), its stats and its options, which `log` carries: recent, now,
 * maxBufferedBytes, shareReads, snapshotMs, maxReplay, frame, send, detach, stats, lag, connections,
 * closed(), and storeStatus(next, error) for the log's own store.
 */
export function openTopic(name, store, log) {
  const { recent, now, maxBufferedBytes, shareReads, snapshotMs, maxReplay, frame, send, detach, stats, lag, connections } = log;
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
  /** Queues `events` for a connection's replay (a gap marker among them is a reload event it is sent). */
  function replayTo(conn, events) {
    for (const ev of events) {
      if (ev.gap) stats.reloads++;
      conn.replay(frame(ev));
    }
  }

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
        if (ev.gap) stats.reloads++; // a gap marker reaches each client as a reload event
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
      // The log's status and onstatus are its own store's; a topic's store that cannot deliver is told as an
      // error of its own (onerror, storeErrors, the topics_unavailable gauge).
      if (name === null) log.storeStatus(next, error);
      else log.topicStatus(name, next, error);
    },
    /** The feed is not continuous with what the window holds (a store that lost its data). */
    reset(position = null) {
      recentWindow.events = [];
      recentWindow.from = 0;
      recentWindow.start = position;
      reads.clear();
    },
  });

  // A topic's store that failed while it opened (its feed's connection refused) is told as it attaches.
  if (name !== null && topicStatus === 'unavailable') log.topicStatus(name, topicStatus, store.error ?? undefined);

  // One gap marker at a time covers every event sent with no id before it was appended; one that fails while
  // the store is ready is tried again (a store that goes unavailable tries again when it is back).
  let markerInFlight = false;
  let markerRetry = null;
  function writeGapMarker() {
    if (markerInFlight || !gapPending || log.closed()) return;
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
        if (topicStatus !== 'ready' || markerRetry || log.closed()) return;
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
    if (log.closed()) throw new Error(`${PREFIX}: the event log is closed`);
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
        replayTo(conn, replay);
        conn.skipThrough = windowLast();
        return conn;
      }
      // An id that does not parse is told to reload from the head, which a read of no events gives.
      let position = X ?? '0-0';
      let limit = X === null ? 0 : maxReplay;
      // At most two reads: the second is never shared, so it is issued after this connection attached and
      // returns at the issuedAt check below.
      for (let attempt = 0; attempt < 2; attempt++) {
        const entry = read(position, limit, attempt > 0);
        const snap = await entry.promise;
        if (!conn.active) return conn;
        if (snap.epoch !== undefined && otherGeneration(snap.epoch)) {
          conn.reload = 'epoch'; // the store started afresh since this log last knew its generation
          conn.reloadFrom = snap.head;
          return conn;
        }
        if (X === null || !snap.complete || snap.more) {
          // Also when reading on from a shared snapshot: what it could not give is never skipped silently.
          // start() writes it, with the newest id known then (see startAttachment).
          conn.reload = X === null ? 'invalid' : snap.more ? 'too-far' : 'unknown';
          conn.reloadFrom = snap.head;
          return conn;
        }
        replayTo(conn, snap.events);
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
          replayTo(conn, windowAfter(P));
          conn.skipThrough = last !== null && compareIds(last, P) > 0 ? last : P;
          return conn;
        }
        position = P; // the window does not reach back to the shared snapshot: read on from it, unshared
        limit = maxReplay;
      }
      // Not reached (see the loop); should the invariant ever break, the client reloads: never a silent gap.
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
      if (log.closed()) throw new Error(`${PREFIX}: the event log closed before its store took the event; it was not stored`, { cause: error });
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
    /** Its store's status: 'ready', or 'unavailable' while it cannot deliver live events (or be read). */
    get status() {
      return topicStatus;
    },
    /** An append to this topic elsewhere on this node was not stored: a gap marker follows, as for its own. */
    oweGap() {
      gapPending = true;
      if (topicStatus === 'ready') writeGapMarker();
    },
    get held() {
      return recentWindow.events.length;
    },
    /** Stops this topic's timers (its store is closed or released by the caller). Returns whether it still
     * owes a gap marker (one refused, or on its way and perhaps to be refused): the caller's to write. */
    stop() {
      clearTimeout(sweeper);
      clearTimeout(markerRetry);
      clearTimeout(topic.idle);
      return gapPending || markerInFlight;
    },
  };
  return topic;
}
