// Errors: the prefix every message of ours carries, the TypeError a bad argument gets, the error Rust
// words for a bad option, reporting what user code throws, and the guard that keeps exceptions out of wasm.
//
// It holds no state and imports nothing.

export const PREFIX = 'managed-eventsource: ';

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
