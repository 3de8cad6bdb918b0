// Reading the user's option object as a dictionary argument is read: each option of a class checked for its
// JavaScript type (a throwing getter throws to the caller, never through wasm), a misspelt name refused, and
// the values laid out for Rust as boundary.rs describes them; and copying those values into the option
// check's module (src/check.rs), which a client made before the shell's module is ready runs instead.
//
// It may not check a value's range or hold a default: Rust (options.rs) does both, so that the rules live in
// one place. (A socket's own options, its subprotocols, close codes and queue, which the shell never reads,
// are socket.js's.)

import { OPTIONS, V_PROBE_URL, V_GIVEN, V_COUNT, CHECK_UNITS } from './boundary.js';
import { fail } from './errors.js';

export const quote = (v) => (typeof v === 'string' ? "'" + v + "'" : String(v));

/** Edit distance (Levenshtein) between two short strings. */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] !== b[j - 1]));
    prev = cur;
  }
  return prev[b.length];
}

/** The option of `known` that `k` probably misspells (same letters but for case, or up to two edits away). */
const misspelt = (k, known) =>
  known.find((o) => o.toLowerCase() === k.toLowerCase() || (k.length > 4 && distance(o.toLowerCase(), k.toLowerCase()) <= 2));

/**
 * Reads `options` as a dictionary argument is read: the options of class `cls` in OPTIONS (from
 * boundary.js, which Rust's table writes) checked for their JavaScript type, and `others` (names read by
 * the caller). Returns the options object and the values for Rust (see boundary.rs): numbers as they are,
 * booleans as 0 or 1, a choice as its index, strings as they are, with a bit in `values[V_GIVEN]` for
 * each option given. Rust checks every value and holds every default.
 */
export function readOptions(options, cls, others) {
  if (options != null && typeof options !== 'object' && typeof options !== 'function') fail('options must be an object');
  const o = options ?? {};
  const mine = OPTIONS.filter((x) => x[2] & cls);
  const known = [...mine.map(([k]) => k), ...others];
  // A key the API does not know is ignored, as EventSource ignores it, unless it looks like one of ours
  // misspelt: then silently taking the default would hide the mistake.
  for (const k of Object.keys(o)) {
    const meant = known.includes(k) ? null : misspelt(k, known);
    if (meant) fail(`unknown option '${k}' (did you mean '${meant}'?)`);
  }
  const values = new Array(V_COUNT); // undefined where not given
  let given = 0;
  OPTIONS.forEach(([k, type, classes], i) => {
    let v = classes & cls ? o[k] : undefined;
    if (v == null) return;
    if (type === 'probe') {
      if (typeof v === 'string') {
        values[V_PROBE_URL] = v;
        v = true;
      } else if (typeof v !== 'boolean') fail('option probe must be true, false or a URL');
    } else if (typeof type === 'string' ? typeof v !== type : !type.includes(v)) {
      const rule = typeof type === 'string' ? 'a ' + type : type.filter((v) => v !== true).map(quote).join(', ').replace(/, ([^,]*)$/, ' or $1');
      fail('option ' + k + ' must be ' + rule);
    }
    values[i] = type === 'string' ? v : typeof type === 'object' ? type.indexOf(v) : +v;
    given |= 1 << i;
  });
  values[V_GIVEN] = given;
  return { o, values };
}

/**
 * Whether the option values `values` (see readOptions) pass every rule the shell checks, asked of the
 * option check's instance `x` (its exports): each number is copied to its position of the module's
 * numbers, each string as its length there and its first code units at the same position of its units
 * (src/check.rs), and anything else as -1.
 */
export function valid(x, values) {
  const n = new Float64Array(x.memory.buffer, x.numbers(), V_COUNT);
  const u = new Uint16Array(x.memory.buffer, x.units(), V_COUNT * CHECK_UNITS);
  for (let i = 0; i < V_COUNT; i++) {
    const v = values[i];
    if (typeof v !== 'string') n[i] = typeof v === 'number' ? v : -1;
    else {
      n[i] = v.length;
      for (let j = 0; j < CHECK_UNITS && j < v.length; j++) u[i * CHECK_UNITS + j] = v.charCodeAt(j);
    }
  }
  return x.check() === 1;
}

/**
 * The `signal` option: an AbortSignal, or nothing. Checked by its brand (the `aborted` getter refuses any
 * other object), so that a signal from another realm (an iframe's) passes and a look-alike does not.
 */
export function signalOf(o) {
  const signal = o.signal;
  if (signal == null) return null;
  try {
    Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted').get.call(signal);
  } catch {
    fail('option signal must be an AbortSignal');
  }
  return signal;
}
