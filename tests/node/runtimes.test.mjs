// Where the package cannot run, it says so before a user finds out, in words that name the runtime's lack:
// a runtime with no WebAssembly at all (React Native's Hermes), stood in for by Node with its WebAssembly
// global removed, before the package loads. (A page whose Content-Security-Policy lacks 'wasm-unsafe-eval'
// is tested in real browsers: tests/page/package.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const entry = (name) => JSON.stringify(join(root, 'pkg', `${name}.js`));

/** Runs `body` in a Node child process with no WebAssembly global; returns what it printed, as JSON. */
function withoutWasm(body) {
  const script = `
    delete globalThis.WebAssembly;
    const said = [];
    const tell = (e) => said.push(e instanceof Error ? e.constructor.name + ': ' + e.message : 'no error');
    ${body}
    console.log(JSON.stringify(said));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const NO_WASM = /^Error: managed-eventsource: this runtime has no WebAssembly \(React Native's Hermes has none\)/;

test("no WebAssembly (Hermes): the first construct, a later one, prepare() and ManagedWebSocket each say so, and nothing connects", () => {
  assert.ok(existsSync(join(root, 'pkg', 'core.js')), 'pkg/ is not built: node scripts/build.mjs --no-demo');
  const said = withoutWasm(`
    let opened = 0;
    globalThis.EventSource = class { constructor() { opened++; } close() {} addEventListener() {} };
    globalThis.WebSocket = class { constructor() { opened++; } close() {} addEventListener() {} };
    const { ManagedEventSource, prepare } = await import(${entry('index')});
    const { ManagedWebSocket } = await import(${entry('websocket')});
    for (let i = 0; i < 2; i++) {
      try { new ManagedEventSource('http://127.0.0.1:1/x'); tell(); } catch (e) { tell(e); }
    }
    await prepare().then(() => tell(), tell);
    try { new ManagedWebSocket('ws://127.0.0.1:1/x'); tell(); } catch (e) { tell(e); }
    await new Promise((r) => setTimeout(r, 50));
    said.push('opened ' + opened);`);
  assert.equal(said.length, 5, JSON.stringify(said));
  for (const s of said.slice(0, 4)) assert.match(s, NO_WASM);
  assert.equal(said[4], 'opened 0');
});
