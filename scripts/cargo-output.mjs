// Reading `cargo test`'s output (as wasm-pack test prints it), for scripts/test.mjs's retries.

/**
 * Whether `out` shows the test target `label` (as cargo names it after "Running": "unittests src/lib.rs",
 * "tests/web.rs") run to its end: its result line, or wasm-bindgen-test-runner's "no tests to run!". A
 * target cut short, failed or never started has not finished.
 */
export function finished(out, label) {
  // Cargo indents its "Running" lines; the runner's own "Running headless tests in" is not.
  const parts = out.split(/^ +Running /m).filter((p) => p.startsWith(label + ' '));
  return parts.some((p) => /test result: ok\.|no tests to run!/.test(p));
}
