// The WebSocket policy of seed 002, which is socket.js's (the shell's module holds none of it): which
// closes reconnect, which close codes `reconnectOnCleanClose` may list, and what the `queue` option lets
// wait. The browser suite (tests/browser/websocket.mjs) holds the same against real sockets.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeCode, ends, queueMax, RECONNECT_CODES } from '../../src/web/socket.js';

test('an unclean close always reconnects; 1006 reconnects even if called clean', () => {
  for (const code of [1006, 1000, 1001, 4000]) assert.equal(ends(false, code, RECONNECT_CODES), false, `${code}`);
  assert.equal(ends(true, 1006, []), false);
});

test('a clean close reconnects only for the codes listed', () => {
  for (const code of RECONNECT_CODES) assert.equal(ends(true, code, RECONNECT_CODES), false, `${code}`);
  for (const code of [1000, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4000, 4999]) {
    assert.equal(ends(true, code, RECONNECT_CODES), true, `${code}`);
  }
  assert.equal(ends(true, 4000, [4000]), false);
  assert.equal(ends(true, 1001, []), true, 'an empty list: only unclean closes reconnect');
});

test('only codes a close frame can carry may be listed', () => {
  for (const ok of [1000, 1001, 1011, 1012, 1013, 3000, 4999]) assert.ok(closeCode(ok), `${ok}`);
  for (const bad of [999, 1004, 1005, 1006, 1015, 5000, 1001.5, NaN, -1, Infinity, '1000']) assert.ok(!closeCode(bad), `${bad}`);
});

test("queue: 'none' (the default) queues nothing, 'all' everything, { max } up to max; anything else throws naming the option", () => {
  assert.equal(queueMax(), undefined);
  assert.equal(queueMax('none'), undefined);
  assert.equal(queueMax('all'), Infinity);
  for (const max of [0, 3, 2 ** 32 - 1]) assert.equal(queueMax({ max }), max);
  for (const max of [-1, 1.5, NaN, Infinity, 2 ** 32]) {
    assert.throws(() => queueMax({ max }), { name: 'RangeError', message: 'managed-eventsource: option queue max must be a whole number, 0 or more' }, `${max}`);
  }
  for (const bad of ['some', 1, {}, { max: '2' }, true]) {
    assert.throws(() => queueMax(bad), { name: 'TypeError', message: "managed-eventsource: option queue must be 'none', 'all' or { max: number }" }, String(bad));
  }
});
