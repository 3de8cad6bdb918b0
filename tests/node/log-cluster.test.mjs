// The event log on a real Redis Cluster: three redis-server processes on loopback ports, joined by
// `redis-cli --cluster create` (scripts/redis-cluster.mjs), no mock. Topics spread over the cluster's nodes;
// two logs (two nodes of a fleet) on one cluster replay and serve what either appended, over real HTTP.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { listen, readEvents } from './fixtures/http-streams.mjs';
import { server } from './fixtures/redis-stores.mjs';

const { createEventLog, createRedisStore } = server;
let cluster;
let admin;
before(async () => {
  cluster = await startRedisCluster();
  const { createCluster } = await import('redis');
  admin = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
  await admin.connect();
});
after(async () => {
  await admin?.close();
  await cluster?.stop();
});

/** The port of the node that owns `key`'s slot. */
async function ownerOf(key) {
  const slot = await admin.sendCommand(key, true, ['CLUSTER', 'KEYSLOT', key]);
  const slots = await admin.sendCommand(undefined, true, ['CLUSTER', 'SLOTS']);
  return slots.find(([from, to]) => slot >= from && slot <= to)[2][1];
}

test('a script over two keys with no common hash tag is refused by the cluster (CROSSSLOT): why the keys are tagged', async () => {
  await assert.rejects(admin.sendCommand('events', false, ['EVAL', "return redis.call('GET', KEYS[2])", '2', 'events', 'events:floor']), /CROSSSLOT/);
  // The store's keys: the stream and its floor are in one slot, for its own stream and for each topic.
  for (const [a, b] of [['events', '{events}:floor'], ['events:{room:1}', 'events:{room:1}:floor']]) {
    assert.equal(await admin.sendCommand(a, true, ['CLUSTER', 'KEYSLOT', a]), await admin.sendCommand(b, true, ['CLUSTER', 'KEYSLOT', b]));
  }
});

test('topics on a three-node cluster: spread over the nodes, each resumed exactly, and live across two logs (two fleet nodes)', async () => {
  const key = `cluster:${process.pid}`;
  const [storeA, storeB] = await Promise.all([createRedisStore({ cluster: cluster.urls, key, maxEvents: 100 }), createRedisStore({ cluster: [cluster.urls[1]], key, maxEvents: 100 })]);
  const logA = createEventLog({ store: storeA, heartbeatMs: 0 });
  const logB = createEventLog({ store: storeB, heartbeatMs: 0 });
  const serveOn = (log) => listen((req, res) => log.serve(req, res, { topic: new URL(req.url, 'http://x').pathname.slice(1) || null }));
  const [a, b] = await Promise.all([serveOn(logA), serveOn(logB)]);
  try {
    // Topics until every node owns at least one of them.
    const names = [];
    const owners = new Set();
    for (let i = 0; owners.size < 3 && i < 100; i++) {
      names.push(`room:${i}`);
      owners.add(await ownerOf(`${key}:{room:${i}}`));
    }
    assert.equal(owners.size, 3, 'the topics span the three nodes');
    const ids = new Map();
    for (const name of [...names, null]) {
      const list = [];
      for (let i = 0; i < 5; i++) list.push(await (name === null ? logA.append({ data: `own ${i}` }) : logA.topic(name).append({ data: `${name} ${i}` })));
      ids.set(name, list);
    }
    // Each topic, resumed at the other fleet node: what followed its id there, its own events only.
    for (const name of names) {
      const { events: got } = await readEvents(`${b.url}/${name}`, { 'Last-Event-ID': ids.get(name)[1] }, (e) => e.length >= 3);
      assert.deepEqual(got.map((e) => [e.id, e.data]), [2, 3, 4].map((i) => [ids.get(name)[i], `${name} ${i}`]));
    }
    const { events: own } = await readEvents(`${b.url}/`, { 'Last-Event-ID': ids.get(null)[3] }, (e) => e.length >= 1);
    assert.deepEqual(own.map((e) => e.data), ['own 4']);

    // Live: clients on B for every topic; appends on A (and B) reach each exactly once, in order.
    const readers = names.map((name) => readEvents(`${b.url}/${name}`, { 'Last-Event-ID': ids.get(name)[4] }, (e) => e.some((x) => x.data === 'end')).then((r) => r.events));
    const deadline = Date.now() + 5000;
    while (names.some((name) => logB.topic(name).connections === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (let i = 0; i < 10; i++) await Promise.all(names.map((name) => (i % 2 ? logB : logA).topic(name).append({ data: `${name} live ${i}` })));
    await Promise.all(names.map((name) => logA.topic(name).append({ data: 'end' })));
    const got = await Promise.all(readers);
    got.forEach((events, k) => assert.deepEqual(events.map((e) => e.data), [...Array.from({ length: 10 }, (_, i) => `${names[k]} live ${i}`), 'end']));
    assert.equal(logB.stats.reloads, 0);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([logA.close(), logB.close()]);
  }
});

test('createRedisStore with cluster: bad options are TypeErrors, and a cluster no node of which answers is a StoreUnavailableError', async () => {
  await assert.rejects(createRedisStore({ cluster: 'redis://127.0.0.1:1' }), (e) => e instanceof TypeError && /cluster must be an array/.test(e.message));
  await assert.rejects(createRedisStore({ cluster: ['http://x'] }), (e) => e instanceof TypeError && /cluster\[0\] must be a redis/.test(e.message));
  await assert.rejects(createRedisStore({ cluster: cluster.urls, url: cluster.urls[0] }), (e) => e instanceof TypeError && /not both/.test(e.message));
  const dead = 'redis://127.0.0.1:9'; // the discard port: nothing listens on it here
  await assert.rejects(createRedisStore({ cluster: [dead], clientOptions: { socket: { connectTimeout: 500 } } }), (e) => e.code === 'STORE_UNAVAILABLE' && /no node of the Redis Cluster/.test(e.message));
});
