// The `trace` option: one record per attempt and per change of what a client does, built from the shell's
// N_TRACE notes (boundary.rs's trace_note lays out their numbers; the machine decides when they come, one
// per step it takes). Nothing here runs per event: a client that traces pays per attempt, not per message.
//
// It imports boundary.js and effects.js.

import { T_ATTEMPT, T_OPEN, T_ENDED, T_PROBED, T_WAIT, T_GAVE_UP, T_CLOSED, TRACE_TYPES, TRIGGERS, CAUSES, BOUNDS } from './boundary.js';
import { now } from './effects.js';

/** The field an `ended` record's `b` (ms) goes in, by cause. */
const MS_OF_CAUSE = { status: 'retryAfterMs', stalled: 'silentMs', timeout: 'timeoutMs' };

/**
 * The record of one trace note (`a`, `b`, `c` as trace_note gives them). `lastEventIdOf(record)` is the id
 * the client holds, which an attempt's record carries when it sends it (in its URL, in a fetch's header, or
 * in the header of the browser's own retry).
 */
export function traceRecord(record, a, b, c, lastEventIdOf) {
  const kind = a % 16, detail = ((a - kind) / 16) % 16, count = Math.floor(a / 256);
  const r = { type: TRACE_TYPES[kind], time: now() };
  if (kind === T_ATTEMPT) {
    r.attempt = count;
    r.trigger = TRIGGERS[detail];
    // Not known yet while a URL function's Promise is pending (its attempt's URL arrives later).
    r.url = record.connection && !record.connection.awaitingUrl ? record.currentUrl : undefined;
    r.lastEventId = b === 1 || record.fetchOptions || r.trigger === 'browser' ? lastEventIdOf(record) : '';
  } else if (kind === T_OPEN) r.attempt = count;
  else if (kind === T_ENDED) {
    r.cause = CAUSES[detail];
    if (r.cause === 'status') r.status = count;
    if (b >= 0) r[MS_OF_CAUSE[r.cause]] = b;
    // What the transport said of it: the fetch transport's error events have a message, a socket's close
    // event its code and reason.
    const e = record.event;
    if (typeof e?.message === 'string') r.message = e.message;
    if (typeof e?.code === 'number') (r.code = e.code), (r.reason = e.reason);
  } else if (kind === T_PROBED) r.status = count;
  else if (kind === T_WAIT) {
    r.attempt = count;
    r.delayMs = b;
    r.ladderMs = c;
    r.bound = BOUNDS[detail];
  } else if (kind === T_GAVE_UP) r.attempts = count;
  else if (kind === T_CLOSED) r.by = detail ? 'user' : 'server';
  return r;
}
