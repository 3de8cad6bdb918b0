// managed-eventsource/server: ids and generations. Every event a store holds has an id of the form
// `<ms>-<seq>` (Redis Streams' own), compared as two unsigned integers; the log hands each out with the
// generation that issued it, `<ms>-<seq>_<generation>`, so that an id from another generation is never taken
// as a position. Also the rule every store applies to a client's id (`vouches`), and a topic's name.

import { describe } from './common.js';

const PREFIX = 'managed-eventsource/server';

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
export function after(events, id, from = 0) {
  let lo = from;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(events[mid].id, id) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A topic's name, checked: 1 to 256 characters (code points: an emoji is one) of well-formed Unicode with
 * no control characters (C0, DEL or C1: they would reach Redis keys and metric labels raw). */
export function topicName(name) {
  if (typeof name !== 'string') throw new TypeError(`${PREFIX}: a topic must be a string, not ${describe(name)}`);
  // Code points: one or two code units each, so only a name of 257 to 512 units is counted.
  if (name === '' || name.length > 512 || !name.isWellFormed() || (name.length > 256 && [...name].length > 256) || /[\u0000-\u001f\u007f-\u009f]/.test(name)) throw new RangeError(`${PREFIX}: a topic must be 1 to 256 characters of well-formed Unicode with no control characters, not ${describe(name.length > 64 ? name.slice(0, 64) + '...' : name)}`);
  return name;
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
