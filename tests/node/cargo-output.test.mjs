// scripts/cargo-output.mjs: which test targets a wasm-pack run finished, so that a retry runs only the rest.
import test from 'node:test';
import assert from 'node:assert/strict';
import { finished } from '../../scripts/cargo-output.mjs';

// Shaped as the output of a run whose web.rs page never started its scripts and was cut short.
const out = `     Running unittests src/lib.rs (target/wasm32-unknown-unknown/debug/deps/managed_eventsource-f98a.wasm)
no tests to run!
     Running tests/rust_api.rs (target/wasm32-unknown-unknown/debug/deps/rust_api-257e.wasm)
Set WASM_BINDGEN_TEST_TIMEOUT to 300 seconds...
Running headless tests in Chrome on \`http://127.0.0.1:41401/\`
Loading Wasm module...

running 6 tests
test the_ladder_recovers_and_resumes_each_event_once ... ok

test result: ok. 6 passed; 0 failed; 0 ignored; 0 filtered out; finished in 3.65s

     Running tests/socket.rs (target/wasm32-unknown-unknown/debug/deps/socket-8a5a.wasm)
no tests to run!
     Running tests/web.rs (target/wasm32-unknown-unknown/debug/deps/web-2239.wasm)
Set WASM_BINDGEN_TEST_TIMEOUT to 300 seconds...
Running headless tests in Chrome on \`http://127.0.0.1:35185/\`
Try find \`webdriver.json\` for configure browser's capabilities:
Ok
`;

test('targets with a result or nothing to run have finished', () => {
  assert.ok(finished(out, 'unittests src/lib.rs'));
  assert.ok(finished(out, 'tests/rust_api.rs'));
  assert.ok(finished(out, 'tests/socket.rs'));
});

test('the target cut short, and those cargo never started, have not', () => {
  assert.ok(!finished(out, 'tests/web.rs'));
  assert.ok(!finished(out, 'tests/storm.rs'));
});

test('a failed target has not finished, and a name is not taken for a longer one', () => {
  const failed = '     Running tests/web.rs (x.wasm)\ntest result: FAILED. 40 passed; 1 failed;\n';
  assert.ok(!finished(failed, 'tests/web.rs'));
  assert.ok(!finished('     Running tests/web_extra.rs (x.wasm)\nno tests to run!\n', 'tests/web.rs'));
});
