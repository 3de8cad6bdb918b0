// npm run bench:server, run small: three servers (bare node:http, the event log on the memory store and on a
// real redis-server), a few clients, one short point and a small reconnect wave. What it must show: the table
// for each server, and no event lost, repeated or out of order in either log. A benchmark that rots fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/bench-server.mjs', import.meta.url));

test('bench:server runs, prints each server, and finds nothing lost, repeated or reordered', { timeout: 120_000 }, () => {
  const args = ['--clients', '50', '--rates', '20', '--seconds', '1', '--warmup', '0.5', '--rounds', '1', '--overload', '200x200', '--flood', '50x500', '--wave', '50', '--cap', '100'];
  const r = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 110_000 });
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stdout}\n${r.stderr}`);
  for (const kind of ['bare', 'memory', 'redis']) assert.match(r.stdout, new RegExp(`^50 @ 20/s\\s+${kind}\\s`, 'm'), kind);
  for (const kind of ['memory', 'redis']) {
    assert.match(r.stdout, new RegExp(`^  ${kind}\\s.*all points: lost 0, repeated 0, out-of-order 0`, 'm'), `${kind}: ${r.stdout}`);
    assert.match(r.stdout, new RegExp(`wave ${kind}\\s.*events missed 0, repeated 0, out-of-order 0`), kind);
  }
});
