// PENDING (not run: the file name matches none of node --test's patterns; run it with
// `node --test tests/node/pending/redis-unresponsive.pending.mjs`). Fails today.
//
// A Redis that stops answering on connections that stay open (a network partition that drops packets with
// no reset; here CLIENT PAUSE stands in for it): commands in flight hang. log.append does not resolve, a
// resume waits with no headers, and log.close() waits for them (node-redis's close() lets pending replies
// arrive; under CLIENT PAUSE 3000 it returned after 3,040 ms). A fix needs a command timeout in the store and
// a decision for appends: a timed-out XADD may have been stored, so answering it with null (and sending the
// event live, with no id) could deliver it twice. (createRedisStore itself is bounded by connectTimeout: the
// test in log-faults.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startRedis } from '../../../scripts/redis-server.mjs';

const shipped = new URL('../../../pkg/server.js', import.meta.url);
const { createEventLog, createRedisStore } = await import(existsSync(shipped) ? shipped : new URL('../../../src/server/index.js', import.meta.url));

test('an append while Redis answers nothing settles within 8 s (an id, or null and live)', async () => {
  const redis = await startRedis();
  const { createClient } = await import('redis');
  const admin = createClient({ url: redis.url });
  await admin.connect();
  const log = createEventLog({ store: await createRedisStore({ url: redis.url, key: 'unresponsive' }), heartbeatMs: 0 });
  let timer;
  try {
    await log.append({ data: 'before' });
    await admin.sendCommand(['CLIENT', 'PAUSE', '20000', 'ALL']);
    const settled = await Promise.race([
      log.append({ data: 'during' }).then(() => true),
      new Promise((resolve) => (timer = setTimeout(() => resolve(false), 8000))),
    ]);
    assert.ok(settled, 'the append settled');
  } finally {
    clearTimeout(timer);
    await admin.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => {});
    await admin.close();
    await log.close();
    await redis.stop();
  }
});
