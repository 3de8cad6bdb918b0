// A client's record and its life. Every public class (api.js's ManagedEventSource, socket.js's
// ManagedWebSocket) keeps one record, and every member reads from it. Its `state` is one of:
//
//   PENDING    made; its shell is not built yet (the module is compiling, or a shared client's lock was
//              granted and the module is compiling)
//   LIVE       its Rust shell drives it (also once the shell is closed for good: it answers `closed`)
//   FOLLOWING  another tab holds the connection (share.js) and this one mirrors it
//   CLOSED     final: nothing of it runs
//
//   PENDING ──begin──> LIVE ──the shell closes for good──> CLOSED
//   FOLLOWING ──the lock is granted──> PENDING
//   PENDING, FOLLOWING ──close()──> CLOSED
//
// What must stay true: a shell is built, assigned to the record, and only then started, so that a callback
// that runs during its start finds it; `close()` in any state, from any callback, ends everything the state
// holds at once; a status is told once, when it changes, and a callback that tells a newer one stops the
// older one's telling.
//
// It imports loader.js, events.js, errors.js, trace.js and boundary.js; nothing here knows a transport but through the
// record's `transport` (see eventsource.js for what one gives).

import {
  I_CLOSE, I_CLOSED, I_RETRY_NOW, I_STATUS, I_READY_STATE, I_ATTEMPT,
  N_STATUS, N_OPEN, N_ERROR, N_RETRY, N_GIVE_UP, N_ID_DROPPED, N_UNAUTHORIZED, N_STALLS_RECUR, N_TRACE, S_CONNECTING, S_CLOSED, STATUSES,
  V_TRACE,
} from './boundary.js';
import { fail, guard, report, PREFIX } from './errors.js';
import { deliver, letGo } from './events.js';
import { instantiate, instantiated, optionsPass, rust, whenInstantiated } from './loader.js';
import { traceRecord } from './trace.js';

export const PENDING = 0, LIVE = 1, FOLLOWING = 2, CLOSED = 3;

/** The readyState of each status, for a client with no shell. */
const READY_STATES = [0, 1, 0, 2, 2];

/**
 * A client's record. `url` is what the user gave (a string, or a function called per attempt); `handlers`
 * createManagedStream's (the only callbacks that exist while the constructor runs).
 */
export function recordOf(client, url, transport, handlers) {
  return {
    client,
    state: PENDING,
    /** The status last told (an index of STATUSES); what a client with no shell answers. */
    status: S_CONNECTING,
    /** The Rust shell, once built: `{ handle, input, lastEventId }`. */
    shell: null,
    transport,
    url,
    /** What the constructor got for the first attempt's URL, until that attempt takes it (effects.js's askUrl). */
    firstUrl: undefined,
    /** The URL of the current or last attempt, as the browser resolved it. */
    currentUrl: '',
    withCredentials: false, // the record is the EventSourceInit that Rust makes sources with
    lastEventIdParam: undefined,
    retryHintEvent: undefined,
    heartbeatEvent: undefined,
    /** The heartbeat event's data last read (connection.js's `announced`). */
    announced: undefined,
    /** Whether the user set stallTimeoutMs (then a server's announcement does not). */
    stallGiven: false,
    /** Whether the user set connectTimeoutMs (then a server's announcement does not). */
    connectGiven: false,
    probeUrl: undefined,
    until: null,
    /** type -> { list: listener entries } (events.js) */
    listeners: new Map(),
    attributes: {}, // the on<type> attributes set
    callbacks: {}, // onstatus, onretry, ...
    handlers: handlers ?? {},
    /** The live connection's record (the transport's), while there is one. */
    connection: null,
    /** The browser's event a notification of the shell carries, while it is told (connection.js's inputWith). */
    event: null,
    /** The event the listeners are being called with (events.js). */
    dispatching: null,
    prototypes: new Map(), // an event class's prototype -> the client's (events.js's swap)
    /** A follower's mirror of the leader: its attempt and last event id. */
    attempt: 0,
    lastEventId: '',
    /** Event types that other tabs listen to, which the connection relays too (share.js). */
    remoteTypes: new Set(),
    /** Called with each server event after the listeners (share.js's leader posts it to the other tabs). */
    forward: null,
    /** Ends what a state other than LIVE holds (share.js's channel and lock), once, when the record closes. */
    teardown: null,
    /** share.js's state, for a shared client. */
    share: null,
    /** Whether close() was called (by the user, the signal, `until`, an iteration's end), as opposed to the
     * stream ending at the server's word: a shared leader hands the former over and tells the latter. */
    closeCalled: false,
    /** Called when a listener's type is first heard of: the live connection relays it. */
    typeAdded: relayType,
    /** Told each status after the callbacks (iterate.js's iterations). */
    watchers: new Set(),
    /** Removes the listener on the `signal` option's AbortSignal, once, when the record closes. */
    unfollow: null,
    /** The `trace` option: a function told each record of the trace (trace.js), or null. */
    trace: null,
    /** The listener entries added with a `signal` that holds a handler for them; null once the record
     * closes, when every such handler is taken off (events.js's letGo). */
    signalled: new Set(),
    /** The fetch transport's request: headers, method, body, the fetch function (fetch.js's configure). */
    fetchOptions: null,
    /** ManagedWebSocket's (socket.js's configure): messages sent while disconnected, in order, and their
     * bound; the binaryType set; close(code, reason) on a live socket, as { code, reason }; the socket last
     * let go of, whose protocol, extensions and bufferedAmount stay readable. */
    queue: null,
    queueMax: undefined,
    binaryType: 'blob',
    closing: null,
    last: null,
  };
}

function relayType(record, type) {
  if (record.connection) record.transport.relay(record.connection, type);
}

/** Frees a shell once nothing can reach its record (Rust lets go of the record once the shell is closed). */
let shells = null;

/**
 * PENDING -> LIVE: builds the shell from the option values `values` (see options.js; an option's error is
 * thrown from here), assigns it, then starts it. What starting throws (the first source could not be
 * made) is thrown too, and the record is then PENDING again, with no shell.
 */
export function begin(record, values) {
  const handle = rust.shell(record, values);
  shells ??= typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((h) => rust.free(h)) : { register() {} };
  shells.register(record, handle);
  record.shell = { handle, input: (code, a, b, c) => rust.input(handle, code, a, b, c), lastEventId: () => rust.lastEventId(handle) };
  record.state = LIVE;
  try {
    rust.start(handle);
  } catch (e) {
    // The shell closed itself and told nothing: the record is as before, for its caller to throw or close.
    record.shell = null;
    record.state = PENDING;
    throw e;
  }
}

/**
 * Starts a client made by a constructor: at once where the module is instantiated, or where the options
 * fail the option check (the shell, built here, throws their error; or the page may not compile the module
 * at all, and instantiate says why). Else the client is PENDING until the module is compiled, off the main
 * thread, and then begins in a later task, unless it was closed meanwhile.
 */
export function launch(record, values) {
  if (instantiated()) return begin(record, values);
  if (!optionsPass(values)) {
    instantiate();
    return begin(record, values);
  }
  afterInstantiate(record, values);
}

/** Begins a PENDING record once the module is instantiated; if it cannot be, says why and closes it. */
export function afterInstantiate(record, values) {
  whenInstantiated()
    .then(() => record.state === PENDING && begin(record, values))
    .catch((e) => {
      report(e);
      close(record);
    });
}

/** PENDING -> FOLLOWING: a shared client waits for the lock (share.js), mirroring the tab that holds it. */
export function follows(record) {
  record.state = FOLLOWING;
}

/**
 * FOLLOWING -> PENDING: the lock was granted, or the page may not use Web Locks; the client begins once
 * the module is instantiated (afterInstantiate), with the option values `values`.
 */
export function granted(record, values) {
  record.state = PENDING;
  afterInstantiate(record, values);
}

/** The record is closed for good: whatever its state held ends. */
function ended(record) {
  record.state = CLOSED;
  const unfollow = record.unfollow;
  record.unfollow = null;
  unfollow?.();
  letGo(record);
  const teardown = record.teardown;
  record.teardown = null;
  teardown?.(record);
}

/** close(), in every state. */
export function close(record) {
  record.closeCalled = true;
  if (record.state === LIVE) {
    record.shell.input(I_CLOSE);
    // A shell whose status was 'closed' already (a 204, a socket the server closed) tells no new status.
    if (record.state === LIVE && record.shell.input(I_CLOSED)) ended(record);
  } else if (record.state !== CLOSED) tellStatus(record, S_CLOSED);
}

/**
 * The `signal` option: an abort is close(). Called once the client is started (a constructor that throws
 * leaves no listener on the signal); the listener goes when the record closes, whoever closes it.
 */
export function follow(record, signal, end = close) {
  if (!signal || record.state === CLOSED) return;
  // Aborted while the constructor ran (by a URL function, say): closed before the constructor returns.
  if (signal.aborted) return end(record);
  // The record, not the instance: an abort inside the constructor (from a status callback) finds no
  // instance member ready yet.
  const abort = () => end(record);
  signal.addEventListener('abort', abort);
  record.unfollow = () => signal.removeEventListener('abort', abort);
}

/**
 * A client whose `signal` is aborted already: its options are checked as a started client's are (with the
 * option check, or, where it refuses them, with a shell that is never started, which throws their error),
 * and it closes with nothing opened, armed or watched.
 */
export function abortedAtStart(record, values) {
  if (!optionsPass(values)) {
    instantiate();
    rust.free(rust.shell(record, values));
  }
  close(record);
}

/** reconnectNow(), in every state: a PENDING client connects as soon as it can anyway. */
export function reconnectNow(record) {
  if (record.state === LIVE) record.shell.input(I_RETRY_NOW);
  else if (record.state === FOLLOWING) record.share.retryNow();
}

export const statusOf = (record) => STATUSES[record.shell ? record.shell.input(I_STATUS) : record.status];
export const readyStateOf = (record) => (record.shell ? record.shell.input(I_READY_STATE) : READY_STATES[record.status]);
export const attemptOf = (record) => (record.shell ? record.shell.input(I_ATTEMPT) : record.attempt);
export const lastEventIdOf = (record) => (record.shell ? record.shell.lastEventId() : record.lastEventId) ?? '';

/**
 * The `trace` option of `o`, a function or nothing, kept on `record`; the values for Rust then ask the
 * machine to trace (a client with none pays nothing for it).
 */
export function traceOption(record, o, values) {
  const trace = o.trace;
  if (trace == null) return;
  if (typeof trace !== 'function') fail('option trace must be a function');
  record.trace = trace;
  values[V_TRACE] = 1;
}

/** Calls a user callback with one argument (and `self` as `this`, else undefined); reports what it throws. */
function call(f, arg, self) {
  if (typeof f !== 'function') return;
  try {
    f.call(self, arg);
  } catch (err) {
    report(err);
  }
}

/**
 * Tells status `s` (an index of STATUSES) to the client's callbacks, if it is not the status last told. A
 * `closed` that is final (every `closed` but a LIVE shell's that reconnectNow() can reopen) ends the record
 * first.
 */
export function tellStatus(record, s) {
  if (s === record.status) return;
  record.status = s;
  if (s === S_CLOSED && (record.state !== LIVE || record.shell.input(I_CLOSED))) ended(record);
  call(record.callbacks.onstatus, STATUSES[s], record.client);
  if (record.status === s) call(record.handlers.onStatus, STATUSES[s]);
  if (record.status === s) for (const w of record.watchers) w(s);
}

/** Tells createManagedStream's onStatus the first status, if it is still the first. */
export function announce(record) {
  if (record.status === S_CONNECTING) call(record.handlers.onStatus, STATUSES[S_CONNECTING]);
}

/** What the shell tells the client (and what share.js's followers hear from the leader). Never throws. */
export const notify = guard(function notify(record, what, a, b, c) {
  // A trace is the leader's own: the tabs that follow it made no attempt.
  if (what === N_TRACE) return call(record.trace, traceRecord(record, a, b, c, lastEventIdOf), record.client);
  record.share?.note(what, a, b);
  const { client, callbacks, handlers } = record;
  if (what === N_STATUS) tellStatus(record, a);
  else if (what === N_OPEN) {
    // A socket sends what waited for it before anyone hears it is open.
    record.transport.flush(record);
    deliver(record, 'open', record.event ?? new Event('open'));
    call(handlers.onOpen, { attempt: a });
  } else if (what === N_ERROR) record.transport.failed(record);
  else if (what === N_RETRY) {
    call(callbacks.onretry, { attempt: a, delayMs: b }, client);
    call(handlers.onRetryScheduled, { attempt: a, wait: b });
  } else if (what === N_GIVE_UP) {
    call(callbacks.ongiveup, { attempts: a }, client);
    call(handlers.onGiveUp, a);
  } else if (what === N_UNAUTHORIZED) {
    call(callbacks.onunauthorized, { status: a }, client);
    call(handlers.onUnauthorized, { status: a });
  } else if (what === N_ID_DROPPED) {
    report(new RangeError(`${PREFIX}the last event id is ${a} bytes once encoded, over the ${b} a reconnect URL carries (lastEventIdParam); reconnecting without it`));
  } else if (what === N_STALLS_RECUR) {
    // Told once a client: `a` stalls in a row of connections that had delivered events.
    // With no stallTimeoutMs of the user's, the watchdog is the server's announced heartbeat: it went missing.
    if (record.announced !== undefined && record.stallGiven === false) console.warn(`${PREFIX}the server's announced heartbeat went missing on ${a} connections in a row that had delivered events: something between (a proxy, the network) holds or cuts the stream silently`);
    else console.warn(`${PREFIX}stallTimeoutMs ended ${a} connections in a row that had delivered events; ${record.transport.stallAdvice}`);
  }
});
