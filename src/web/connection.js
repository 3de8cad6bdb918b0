// What every transport does with what a connection brings: a server's events go to the listeners (and the
// few that policy must see, to the shell first), the connection's own open and failure go to the shell,
// and `until` may end the stream after an event.
//
// It may not decide anything: the shell does. It imports events.js, effects.js, errors.js and boundary.js.

import { I_ANNOUNCED, I_HINT } from './boundary.js';
import { hintMs } from './effects.js';
import { guard, report } from './errors.js';
import { deliver } from './events.js';

/**
 * What Rust calls to begin and end a connection, through the client's transport: `attach` a source Rust
 * made (an EventSource), returning the connection record; `open` an attempt the transport makes itself (a
 * WebSocket, a fetch); `detach` either when Rust lets it go. The shell's glue thus imports no transport's
 * room, and a transport's JavaScript is only in the entry that adds it. `attach` and `detach` are the one
 * guard that keeps a transport's exceptions out of wasm (reported, not thrown); `open` throws what the URL
 * function throws, or what the transport throws for a URL it refuses, which Rust catches.
 */
export const attach = guard((record, source) => record.transport.attach(record, source));
export const open = (record, id, last) => record.transport.open(record, id, last);
export const detach = guard((connection) => connection.record.transport.detach(connection));

/**
 * A connection record: what a transport keeps of one connection for the shell and the stall watchdog.
 * `source` is the EventSource, WebSocket or fetch attempt; `first` and `last` its first and last events
 * (the heartbeat's aside), `beats` its heartbeat events so far.
 */
export const connectionOf = (record, source) => ({ record, source, first: undefined, last: undefined, seen: undefined, beats: 0, beatsSeen: 0 });

/**
 * A server's event of `type` on `connection`: to the shell if it is the retry hint, then to the listeners
 * (`listeners`: the type's slot, where the transport holds it).
 */
export function arrived(connection, type, e, listeners) {
  const record = connection.record;
  const beat = type === record.heartbeatEvent;
  if (beat) {
    connection.beats++; // life for the stall watchdog
    if (e.data !== record.announced) announced(record, e.data);
  }
  // The heartbeat's id only where it has one: managed-eventsource/server's has no id field, which an
  // EventSource that does not keep the last id across events (the eventsource package) reads as empty, and
  // the stream's id would be reset.
  if (!beat || e.lastEventId !== '') {
    connection.last = e;
    connection.first ??= e;
  }
  if (type === record.retryHintEvent) record.shell.input(I_HINT, hintMs(e.data));
  deliver(record, type, e, listeners);
  record.forward?.(type, e);
  if (record.until && !beat) until(record, e); // the stream's content, not its keep-alive
}

/**
 * The heartbeat event's data, as managed-eventsource/server writes it at the start of every stream and then
 * at each heartbeat: a JSON object, `{ "heartbeatMs": 15000, "lastEventIdParam": "lastEventId" }` (an object
 * with these names, so that an app's own 'heartbeat' event, a counter or a timestamp, is never read as one).
 * The interval goes to the shell, whose stall watchdog then needs no option; a parameter the user did not
 * name becomes the client's `lastEventIdParam`, so that our reconnects resume (an EventSource made by us
 * cannot send the Last-Event-ID header). Data that says neither changes nothing; each new data is read once.
 */
function announced(record, data) {
  record.announced = data;
  let said;
  try {
    said = JSON.parse(data);
  } catch {
    return;
  }
  if (said === null || typeof said !== 'object') return;
  const ms = said.heartbeatMs;
  const param = said.lastEventIdParam;
  const resume = record.lastEventIdParam === undefined && typeof param === 'string' && /^[^\r\n]+$/.test(param);
  if (resume) record.lastEventIdParam = param;
  // The interval, for the stall watchdog where the user set no stallTimeoutMs (not even 0, which keeps it
  // off), and for the connect timeout where the user set no connectTimeoutMs (a reconnect sent into a pooled
  // socket a proxy froze never opens; the server's first line comes at once).
  const interval = ms >= 0 && ms < 2 ** 31 ? ms : -1;
  const stall = interval >= 0 && !record.stallGiven;
  const connect = interval >= 0 && !record.connectGiven;
  if (resume || stall || connect) record.shell.input(I_ANNOUNCED, interval, (resume ? 1 : 0) | (stall ? 2 : 0) | (connect ? 4 : 0));
}

/** `until(ev)`: the event for which it returns true has been delivered; then the stream closes. */
export function until(record, e) {
  let done = false;
  try {
    done = record.until.call(undefined, e) === true;
  } catch (err) {
    report(err);
  }
  if (done) record.client.close();
}

/** Gives the shell input `code` with `a` and `b`, while `e` is the event a notification it makes carries
 * (the browser's open, error or close event, or one of the fetch transport's). */
export function inputWith(record, e, code, a, b) {
  record.event = e;
  try {
    record.shell.input(code, a, b);
  } finally {
    record.event = null;
  }
}

/** Whether an event arrived since the last call (for the stall watchdog). Rust calls it. */
export function active(connection) {
  const moved = connection.last !== connection.seen || connection.beats !== connection.beatsSeen;
  connection.seen = connection.last;
  connection.beatsSeen = connection.beats;
  return moved;
}

/** The `lastEventId` of the connection's first (`which` 0) or last (1) event; undefined before any. Rust calls it. */
export const eventId = (connection, which) => (which ? connection.last : connection.first)?.lastEventId;
