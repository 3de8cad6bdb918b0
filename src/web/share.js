// One connection for all tabs (`share`).
//
// Clients with `share` in pages of one origin and the same URL (or share name) hold one connection: the one
// that holds a Web Lock named after it leads, with a Rust shell and a real connection, and relays every
// event and every notification over a BroadcastChannel of the same name. The others follow (FOLLOWING),
// mirroring the leader. When the leader closes, or its page goes, the lock passes to the next, which starts
// a shell of its own once the module is instantiated, resuming after the last event it saw.
//
// It may not decide anything: the browser grants the lock, and the leader's machine does the rest. It sits
// on top of client.js; nothing below imports it.

import { I_STATUS, I_RETRY_NOW, I_WAKE, I_HIDDEN, N_STATUS, N_OPEN, S_OPEN, S_CLOSED, S_FAILED, V_RESUME_FROM } from './boundary.js';
import { attemptOf, close, follows, granted, lastEventIdOf, notify, readyStateOf, tellStatus, FOLLOWING, LIVE } from './client.js';
import { until } from './connection.js';
import { instantiate, optionsPass, rust } from './loader.js';
import { deliver } from './events.js';
import { PREFIX } from './errors.js';

/** Whether this runtime has what sharing needs (else each client holds a connection of its own). */
export const sharing = () =>
  typeof BroadcastChannel === 'function' && typeof navigator === 'object' && typeof navigator.locks?.request === 'function';

/**
 * Starts `record` as a shared client of `key`, following until it gets the lock. Its options are checked
 * here, in every tab, so that they throw in the constructor: with the option check, or, where it refuses
 * them, with a shell that is never started.
 */
export function startShared(record, values, key) {
  if (!optionsPass(values)) {
    instantiate();
    rust.free(rust.shell(record, values));
  }
  const name = 'managed-eventsource:' + key;
  const share = {
    channel: new BroadcastChannel(name),
    abort: new AbortController(),
    leader: false,
    release: null,
    /** The record's typeAdded from before it shared, which it gets back when it leaves. */
    typeAddedAlone: record.typeAdded,
    note: (what, a, b) => {
      // A leader closed by close() (its user, its signal, `until`, a loop's end) hands the connection over:
      // the others are not told. A stream the server ended (a 204) is over for every tab: they are.
      if (share.leader && !(what === N_STATUS && a === S_CLOSED && record.closeCalled)) {
        share.channel.postMessage({ kind: 'note', what, a, b, state: what === N_STATUS ? shellState(record) : undefined });
      }
    },
    /** reconnectNow() on a client that follows, or leads and waits after 'failed' (see lead). */
    retryNow: () => (share.leader ? resume(record) : share.channel.postMessage({ kind: 'retryNow' })),
    /** This client's name among those that share, and whether each of the others' pages is visible. */
    id: Math.random().toString(36).slice(2),
    peers: new Map(),
    /** Whether the stream is out of every sharing page's view: what a leader's pauseWhenHiddenMs and
     * reconnectOnVisible go by (effects.js's watch), since its connection serves the visible ones too. */
    hidden: () => hiddenHere() && ![...share.peers.values()].includes(true),
    /** Tells the others this page's visibility when it changes, and that it is out of view once it goes
     * (pagehide: closed, navigated away, into the back-forward cache). */
    seen: (e) => share.channel.postMessage({ kind: 'seen', from: share.id, visible: e?.type !== 'pagehide' && !hiddenHere() }),
  };
  record.share = share;
  follows(record);
  record.teardown = leave;
  record.typeAdded = (record, type) => {
    if (record.connection) record.transport.relay(record.connection, type);
    else if (!share.leader) share.channel.postMessage({ kind: 'types', types: [type] });
  };
  record.forward = (type, e) => share.leader && share.channel.postMessage({ kind: 'event', type, data: e.data, id: e.lastEventId, origin: e.origin });
  watchPage(share, 'addEventListener');
  share.channel.onmessage = (m) => {
    // Every client keeps the others' event types, so that one that comes to lead relays them from its
    // first event on (those who joined before it are asked again: 'leading'); and their visibility.
    if (m.data.types) for (const type of m.data.types) record.remoteTypes.add(type);
    if (m.data.from !== undefined) peer(record, m.data);
    if (share.leader && record.state !== LIVE) beforeBegin(record, m.data);
    else if (share.leader) fromFollower(record, m.data);
    else fromLeader(record, m.data);
  };
  hello(record);
  // A request the page may not make (a sandboxed iframe, an opaque origin) rejects, or throws, with a
  // SecurityError: the client then connects on its own. One aborted by leave was closed before it led.
  new Promise((resolve) => resolve(navigator.locks.request(name, { signal: share.abort.signal }, () => new Promise((release) => lead(record, values, release)))))
    .catch((e) => share.abort.signal.aborted || unshared(record, values, e));
}

/** Whether the page was told that it may not use Web Locks (once a page: each client would say the same). */
let toldRefused = false;

/**
 * The page refused the lock request (`why`): the client holds a connection of its own, as where the APIs
 * are missing, and the page is told why once.
 */
function unshared(record, values, why) {
  if (record.state !== FOLLOWING) return;
  if (!toldRefused) {
    toldRefused = true;
    console.warn(`${PREFIX}share: this page may not use Web Locks (${why?.name ?? 'Error'}: ${why?.message ?? why}), so each client here holds a connection of its own`);
  }
  leave(record);
  Object.assign(record, { share: null, teardown: null, forward: null });
  values[V_RESUME_FROM] = record.lastEventId || values[V_RESUME_FROM]; // else the id lastEventIdKey kept, if any
  granted(record, values);
}

/** What a leader tells the followers of its state: its status, readyState and attempt (its shell's, or
 * those it mirrored, where it leads and waits after 'failed'). */
const shellState = (record) => [record.shell ? record.shell.input(I_STATUS) : record.status, readyStateOf(record), attemptOf(record)];

/** Adds or removes (`how`) the page listeners that tell the others this page's visibility (none in a worker). */
function watchPage(share, how) {
  const d = globalThis.document;
  if (typeof d?.[how] !== 'function') return;
  d[how]('visibilitychange', share.seen);
  globalThis[how]('pagehide', share.seen);
  globalThis[how]('pageshow', share.seen);
}

/** Whether this client's own page is hidden (a worker has no page: never). */
const hiddenHere = () => globalThis.document?.visibilityState === 'hidden';

/** Tells the other clients the event types this one listens to and whether its page is visible (and a
 * leader, that it has joined). */
const hello = (record) =>
  record.share.channel.postMessage({ kind: 'hello', types: [...record.listeners.keys()], from: record.share.id, visible: !hiddenHere() });

/**
 * Another client's page is visible or hidden (`hello`, `seen`), or it has gone (`bye`). A leader's shell
 * hears it as its own page's: a page that comes into view wakes the stream (a pause, a wait), and the last
 * one to leave the view lets it pause.
 */
function peer(record, m) {
  const share = record.share, was = share.peers.get(m.from);
  if (m.kind === 'bye') share.peers.delete(m.from);
  else share.peers.set(m.from, m.visible);
  if (!share.leader || record.state !== LIVE) return;
  if (m.visible && !was) record.shell.input(I_WAKE);
  else if (share.hidden()) record.shell.input(I_HIDDEN);
}

/** This client got the lock: it holds the connection now, once the module is instantiated. */
function lead(record, values, release) {
  const share = record.share;
  share.release = release;
  if (record.state !== FOLLOWING) return release(); // closed meanwhile
  share.leader = true;
  // The followers' event types, which they told the leader before this one: they tell them again.
  share.channel.postMessage({ kind: 'leading' });
  share.values = values;
  values[V_RESUME_FROM] = record.lastEventId || values[V_RESUME_FROM]; // else the id lastEventIdKey kept, if any
  // It begins a task later, so that what the previous leader told before it let go, posted before the lock
  // passed, reaches this client first (see beforeBegin): a MessageChannel's task, which a hidden page's
  // timer throttling does not delay.
  // A stream that failed (the previous leader gave up) stays failed: nothing is asked until reconnectNow(),
  // here or in another tab (see resume).
  const turn = new MessageChannel();
  turn.port1.onmessage = () => {
    turn.port1.close();
    if (record.status !== S_FAILED) resume(record);
  };
  turn.port2.postMessage(null);
}

/** A client that leads and has not begun begins (once the module is instantiated). */
function resume(record) {
  if (record.share.leader && record.state === FOLLOWING) granted(record, record.share.values);
}

/**
 * What a client that got the lock and has not begun does with a message: the previous leader's news, which
 * may reach it after the lock did. An event is still the stream's (and this client's connection resumes
 * after it). A stream the server ended ('closed') is over for this client too: it closes, asking nothing.
 */
function beforeBegin(record, m) {
  if (m.kind === 'event') relayed(record, m);
  else if (m.kind === 'note' && m.what === N_STATUS && m.a === S_CLOSED) close(record);
  else fromFollower(record, m);
}

/** Ends a shared client's part (its teardown): the channel closes and the lock goes to the next tab. */
function leave(record) {
  const share = record.share;
  share.leader = false;
  // A listener of a new type added later tells no one: the channel is closed.
  record.typeAdded = share.typeAddedAlone;
  watchPage(share, 'removeEventListener');
  share.channel.postMessage({ kind: 'bye', from: share.id });
  share.channel.close();
  share.abort.abort();
  share.release?.();
}

/** What a leader does with a follower's message. */
function fromFollower(record, m) {
  if (m.kind === 'hello' || m.kind === 'types') {
    if (record.connection) for (const type of m.types) record.transport.relay(record.connection, type);
    if (m.kind === 'hello' && (record.shell || record.state === FOLLOWING)) {
      record.share.channel.postMessage({ kind: 'state', state: shellState(record), id: lastEventIdOf(record) });
    }
  } else if (m.kind === 'retryNow') {
    if (record.shell) record.shell.input(I_RETRY_NOW);
    else resume(record);
  }
}

/** A server's event the leader relayed, for this client's listeners (and `until`). */
function relayed(record, m) {
  // The leader's event carries the stream's last id (an empty one is a reset, as on the leader).
  record.lastEventId = m.id;
  // A client that leads but has not begun resumes after it (see lead).
  if (record.share.leader) record.share.values[V_RESUME_FROM] = m.id || undefined;
  const e = new MessageEvent(m.type, { data: m.data, lastEventId: m.id, origin: m.origin });
  deliver(record, m.type, e);
  if (record.until) until(record, e);
}

/** What a follower does with the leader's news. */
function fromLeader(record, m) {
  if (record.state !== FOLLOWING) return;
  if (m.kind === 'leading') {
    hello(record);
  } else if (m.kind === 'event') {
    relayed(record, m);
  } else if (m.kind === 'note') {
    if (m.what === N_STATUS) record.attempt = m.state[2];
    notify(record, m.what, m.a, m.b);
  } else if (m.kind === 'state') {
    // The leader's state when this client joined: as if it had connected itself.
    record.attempt = m.state[2];
    if (m.id) record.lastEventId = m.id;
    const was = record.status;
    tellStatus(record, m.state[0]);
    if (m.state[0] === S_OPEN && was !== S_OPEN) notify(record, N_OPEN, 0, 0);
  }
}

