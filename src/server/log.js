// managed-eventsource/server's event log: append events, and serve a (re)connecting client everything after
// its last id, then the live events, with no gap and no duplicate between the two (seed 001's "GET,
// Last-Event-ID: 8812 -> replay, then live"), on any number of topics. The log keeps no events of its own
// beyond each topic's recent window: a store does (memory.js, or redis.js). Its rooms:
//   ids.js      ids, generations, the rule a store applies to a client's id, a topic's name
//   frames.js   an event's bytes on the wire; an append's argument checked
//   memory.js   the memory store (and the store interface)
//   engine.js   the replay engine of one topic: attach, read, de-duplicate, live
//   log.js      this file: topics and authorization, the drain, metrics, and the HTTP adapters (node:http
//               and Web Response) composing them with a gate
//
// What must stay true here:
// - Nothing thrown by a client's input leaves serve() or response(): bad ids follow the engine's rules, a
//   store failure answers with seed 001's soft rejection, a bad topic is a 400, a refusal a 401 or 403.
// - A connection the log lets go is ended, never left open and silent: close(), a drain, a writer that threw,
//   a client more than maxBufferedBytes behind (which is sent no more, so what it holds stays bounded).

import { ENCODER, HEADERS, batchedBody, batchedResponse, describe, endAndClose, endBehind, eventName, finite, range, reject, rejectResponse, responseGone, wait } from './common.js';
import { StoreUnavailableError, compareIds, timeOf, topicName, wireId } from './ids.js';
import { checkEntry, frameOf } from './frames.js';
import { createMemoryStore } from './memory.js';
import { LAG_BUCKETS, openTopic } from './engine.js';

const PREFIX = 'managed-eventsource/server';

/** The longest `retry:` a drained connection is sent: a native EventSource then reconnects within it, ours
 * after its ladder's first step (up to baseMs, 1 s at the defaults); the window is what spreads them. */
const DRAIN_RETRY_MS = 1000;
/** How often a gap marker owed for a topic not open here is tried again while the store refuses it. */
const GAP_RETRY_MS = 1000;

/** A Prometheus label value, escaped (backslash, double quote, line feed). */
const escapeLabel = (v) => String(v).replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : '\\' + c));

/** The Prometheus text exposition format's content type. */
const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** How far ahead of the clock a given id's time part may be (another node's clock, a little ahead). */
const MAX_AHEAD_MS = 10_000;

/** A bad topic's 400: the message that says why, as text. */
const BAD_TOPIC_HEADERS = Object.freeze({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });

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

  /** Closes a connection from the log's side and tells its owner (the `end` given to start, or, if start has
   * not been called yet, the one given to it then). */
  function end(c) {
    if (!c.active) return;
    c.endedByLog = true;
    detach(c);
    try {
      c.end?.();
    } catch (error) {
      onerror?.(error);
    }
  }

  /** What every topic's engine shares with the log (engine.js). */
  const engineContext = {
    recent,
    now,
    maxBufferedBytes,
    shareReads,
    snapshotMs,
    maxReplay,
    frame,
    send,
    detach,
    stats,
    lag,
    connections,
    closed: () => closed,
    storeStatus(next, error) {
      status = next;
      if (next === 'unavailable') {
        outages++;
        stats.storeErrors++;
        if (error !== undefined) onerror?.(error);
      }
      onstatus?.(next, error);
    },
    /** A named topic's store changed status: its failure is a store error of the log's (onerror names it),
     * told once the log's own feed would have failed too were the whole store down (a silent Redis fails
     * every feed, each at its own deadline): then it is the log's own status's to tell, once. */
    topicStatus(name, next, error) {
      if (next !== 'unavailable') return void failingTopics.delete(name);
      if (status !== 'ready') return;
      failingTopics.set(name, { error, outages });
      if (topicReport !== null || closed) return;
      topicReport = setTimeout(tellFailingTopics, Math.min(2 ** 31 - 1, store.feedDeadlineMs ?? 0));
      topicReport.unref?.();
    },
  };
  /** Topics whose store became unavailable while the log's own was ready, not told yet: name -> { error,
   * outages (the log's own outages then) }. */
  const failingTopics = new Map();
  let topicReport = null;
  let outages = 0; // times the log's own store became unavailable
  function tellFailingTopics() {
    topicReport = null;
    const failing = [...failingTopics];
    failingTopics.clear();
    for (const [name, seen] of failing) {
      // Not if the whole store failed meanwhile (its own status told it), or the topic is back, or let go.
      if (closed || status !== 'ready' || outages !== seen.outages || topics.get(name)?.topic?.status !== 'unavailable') continue;
      stats.storeErrors++;
      onerror?.(new StoreUnavailableError(`${PREFIX}: topic ${JSON.stringify(name)} is unavailable: ${seen.error?.message ?? 'its store says so'}`, seen.error));
    }
  }
  const main = openTopic(null, store, engineContext);
  /** Named topics, open or opening: name -> { topic, opening } (topic null until its store is open). */
  const topics = new Map();

  const noTopics = () => new TypeError(`${PREFIX}: this store (${store.kind ?? 'a custom store'}) has no topics: give it a topic(name) method that returns (or resolves to) a store of that topic's own`);

  /** The topic `name` (null: the log's own), opened on first use: synchronously when it is open already. */
  function topicFor(name) {
    if (name === null) return main;
    const known = topics.get(name);
    if (known) return known.topic ?? known.opening;
    if (closed) return Promise.reject(new Error(`${PREFIX}: the event log is closed`));
    if (typeof store.topic !== 'function') return Promise.reject(noTopics());
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
      entry.topic = openTopic(name, topicStore, engineContext);
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
      // A gap marker it still owes (its store refused an append, and has not taken the marker yet) is the
      // log's to write now, as for a topic not open here.
      if (topic.stop()) oweGap(topic.name);
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

  /** Writes (synchronously) what `conn` missed and from then on every live event; `ended` is called when
   * the log ends it. */
  function startAttachment(conn, write, ended) {
    if (typeof write !== 'function') throw new TypeError(`${PREFIX}: start takes a function that writes a string, not ${describe(write)}`);
    if (ended !== undefined && typeof ended !== 'function') throw new TypeError(`${PREFIX}: start's second argument must be a function called when the log ends the connection, not ${describe(ended)}`);
    if ((conn.overflowed || conn.endedByLog) && !conn.write) {
      // Let go, or ended by the log (a drain, close()), before start: it ends now. Started once: a second
      // start is ignored.
      conn.write = write;
      conn.buffer = null;
      try {
        ended?.();
      } catch (error) {
        onerror?.(error); // as the log's end() does
      }
      return;
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
      if (ev.gap) stats.reloads++;
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
  const connect = (lastEventId) => connectTo(lastEventId, null);

  /** connect() on topic `name`: during a drain, refused (as serve() turns a client away), so that every
   * connection on this node is one the drain ends. */
  async function connectTo(lastEventId, name) {
    if (draining()) throw drainingError();
    const conn = await attachClient(lastEventId, name);
    if (draining()) {
      // The drain began while its topic opened or its replay was read: its list was taken before.
      detach(conn);
      throw drainingError();
    }
    return new Connection(conn);
  }
  const drainingError = () => {
    const retryAfterMs = drainWait();
    return Object.assign(new Error(`${PREFIX}: this node is draining (log.drain): connect again in ${retryAfterMs} ms, or to another node`), { code: 'DRAINING', retryAfterMs });
  };

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
    // A topic still opening appends once it is open; one whose opening failed, as a topic not open.
    const open = known ? known.topic ?? (await known.opening.catch(() => null)) : null;
    if (open) return open.append(checked);
    // A topic not open on this node has no connections here: the event goes to its store only, with no feed
    // opened for it (an append to an offline user's topic costs no connection).
    // (A store of a topic used only to append holds nothing to let go: the Redis one opens no connection.)
    if (typeof store.topic !== 'function') throw noTopics();
    try {
      const topicStore = await store.topic(name);
      const id = await topicStore.append(checked);
      return wireId(id, topicStore.epoch ?? null);
    } catch (error) {
      if (error?.code !== 'STORE_UNAVAILABLE') throw error;
      // Not stored, and no one here to send it to live; the topic's clients on other nodes are told by the
      // gap marker it now owes, as an open topic's are (null means the same wherever the topic is open).
      oweGap(name);
      return null;
    }
  }

  /** Topics not open here whose append the store did not take: name -> how many, each owing a gap marker,
   * written (by payGaps) once the store takes it. Held by name alone: a store is made again to pay. */
  const gapsOwed = new Map();
  let paying = false;
  let gapRetry = null;
  function oweGap(name) {
    gapsOwed.set(name, (gapsOwed.get(name) ?? 0) + 1);
    payGaps();
  }
  /** Appends each owed gap marker, in turn; while the store refuses, tries again every GAP_RETRY_MS. */
  async function payGaps() {
    if (paying || gapRetry !== null) return;
    paying = true;
    try {
      for (const [name, owed] of gapsOwed) {
        if (closed) return;
        const open = topics.get(name)?.topic;
        try {
          if (open) open.oweGap(); // opened here since: its engine writes it, and tries again itself
          else await (await store.topic(name)).append({ event: 'message', data: '', gap: true });
        } catch {
          continue; // still refused (its Cluster node down, say): tried again below; the others go on
        }
        // One owed meanwhile is owed again: this marker may have been stored before that event was refused.
        if (gapsOwed.get(name) === owed) gapsOwed.delete(name);
      }
    } finally {
      paying = false;
      if (gapsOwed.size > 0 && !closed) {
        gapRetry = setTimeout(() => ((gapRetry = null), payGaps()), GAP_RETRY_MS);
        gapRetry.unref?.();
      }
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
      const unavailable = [...topics.values()].filter(({ topic }) => topic && topic.status === 'unavailable').length;
      metric('topics_unavailable', 'gauge', 'Named topics open on this node whose store cannot deliver their live events now.', [['', [], unavailable]]);
      metric('connections_total', 'counter', 'Clients the event log has served.', [['', [], stats.connections]]);
      metric('resumes_total', 'counter', 'Clients that came with a last event id.', [['', [], stats.resumes]]);
      metric('replays_total', 'counter', 'Resumes served from the recent window, and store reads made (shared ones apart).', [
        ['', ['from="window"'], stats.windowServed],
        ['', ['from="store"'], stats.reads],
        ['', ['from="shared_read"'], stats.sharedReads],
      ]);
      metric('reload_events_total', 'counter', 'Reload events sent: ids the log could not vouch for, and gaps.', [['', [], stats.reloads]]);
      metric('store_errors_total', 'counter', "Times the store (or a topic's, while the log's own was ready) became unavailable.", [['', [], stats.storeErrors]]);
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
        connect: (lastEventId) => connectTo(lastEventId, name),
        serve: (req, res, opts = {}) => log.serve(req, res, { ...opts, topic: name }),
        response: (request, opts = {}) => log.response(request, { ...opts, topic: name }),
        /** Connections following this topic on this node. */
        get connections() {
          const known = topics.get(name)?.topic;
          return known ? known.connections.size : 0;
        },
        /** Its store's status where the topic is open on this node ('unavailable' while its live events
         * cannot be delivered), else null. */
        get status() {
          return topics.get(name)?.topic?.status ?? null;
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
          res.writeHead(400, BAD_TOPIC_HEADERS);
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
        // Sent once a task (batchedResponse); a write that throws ends this connection alone (as send()).
        const batch = batchedResponse(res, (error) => (end(conn), onerror?.(error)));
        const finish = () => (conn.drained ? endAndClose(res) : endBehind(res));
        startAttachment(conn, (text) => {
          if (res.writableLength + batch.held() > maxBufferedBytes) {
            detach(conn);
            return finish();
          }
          batch.add(text);
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
        if (name instanceof Error) return new Response(name.message, { status: 400, headers: BAD_TOPIC_HEADERS });
        admission = admit(opts);
        if (!admission.ok) return rejectResponse(admission.retryMs, { hintEvent: opts.hintEvent });
        // A request aborted while it is authorized or its replay is read gives its gate place back then, as
        // serve()'s 'close' does, not when the hook settles (if it ever does).
        const abandoned = () => admission.release();
        request.signal?.addEventListener('abort', abandoned, { once: true });
        let conn;
        try {
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
          if (request.signal?.aborted) {
            admission.release(); // aborted before the call: its abort was never heard
            return new Response(null, { status: 204 }); // nothing opened
          }
          try {
            conn = await attachClient(lastEventIdOfRequest(request), name);
          } catch (error) {
            if (error?.code !== 'STORE_UNAVAILABLE' && !closed) onerror?.(error);
            admission.release();
            return rejectResponse(unavailableWait(), { hintEvent: opts.hintEvent });
          }
        } finally {
          request.signal?.removeEventListener('abort', abandoned);
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
              // Enqueued once a task (batchedBody).
              const enqueue = batchedBody(controller);
              const endBody = () => (finish(), enqueue.close());
              startAttachment(conn, (text) => {
                if (controller.desiredSize - enqueue.held() < 0) {
                  detach(conn);
                  return endBody();
                }
                enqueue(text);
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
      clearTimeout(gapRetry);
      clearTimeout(topicReport);
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
