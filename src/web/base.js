// What every module of the JavaScript half uses (a wasm-bindgen snippet of src/web/, as each file here is):
// the hooks to the Rust side, the error helpers, and the guard that keeps exceptions out of wasm.
//
// It may hold no state but the hooks `define` installs, and may import nothing but boundary.js.

import { STATUSES } from './boundary.js';

/** What the shell (or a shared instance's stand-in for it) answers to question `code` (`I_STATUS` and on). */
export const ask = (link, code) => link.s.input(code);
export const NAMES = STATUSES;
export const PREFIX = 'managed-eventsource: ';

/**
 * Set by `define`: `shell(link, values)` builds a Rust shell (which starts it) and returns its handle;
 * `input`, `lastEventId` and `free` take that handle (see `own`).
 */
export let hooks;

/** Installs the Rust side. The package's entry calls it once with the wasm exports. */
export function define(h) {
  hooks = h;
}


/** Reports an exception thrown by user code without stopping anything (even if reporting throws). */
export function report(e) {
  try {
    (globalThis.reportError ?? console.error)(e);
  } catch {}
}

/** Throws a TypeError with our prefix. */
export const fail = (message) => {
  throw new TypeError(PREFIX + message);
};

/**
 * Runs `f` for Rust, which must never see an exception: one that unwinds through wasm skips its stack's
 * epilogue, and a thousand later the module traps for the whole page. What would throw is reported.
 */
export const guard = (f) =>
  function (...args) {
    try {
      return f.apply(this, args);
    } catch (e) {
      report(e);
    }
  };

/** The error Rust throws for an invalid option: a RangeError or a TypeError, worded as OptionError::message. */
export const error = (range, option, rule) => new (range ? RangeError : TypeError)(PREFIX + 'option ' + option + ' ' + rule);

/** A list with nothing in it, shared. */
export const EMPTY = [];
