// npm run bench:log: the event log's figures on this machine, for each store (memory, and Redis Streams in a
// real redis-server started for the run on a loopback port): appends a second (awaited one by one, and
// pipelined), replay (events a second a client is sent when it resumes far behind), and the time to serve
// a reconnect wave of 2,000 clients that dropped together (the same last id, 1,000 events behind the
// head), with and without shared reads, counting the store reads each took. In this process, with no HTTP:
// what the log and its store cost, not the network.
//
//   node scripts/bench-log.mjs [--rounds 3] [--write]   --write: also the bench-log section of docs/storm.md
import { existsSync } from 'node:fs';
import { startRedis } from './redis-server.mjs';
import { writeSection } from './sections.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? d : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 3);
const shipped = new URL('../pkg/server.js', import.meta.url);
const { createEventLog, createMemoryStore, createRedisStore } = await import(existsSync(shipped) ? shipped : new URL('../src/server/index.js', import.meta.url));

const redis = await startRedis();
let keys = 0;
const stores = {
  memory: () => createMemoryStore({ maxEvents: 100_000 }),
  redis: () => createRedisStore({ url: redis.url, key: `bench:${++keys}`, maxEvents: 100_000 }),
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const time = async (fn) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};

const WAVE = 2000;
const BEHIND = 1000;
const results = {};
try {
  for (const [kind, make] of Object.entries(stores)) {
    const r = (results[kind] = { sequential: [], pipelined: [], replay: [], waves: {} });
    const APPENDS = kind === 'memory' ? 100_000 : 10_000;
    for (let round = 0; round < ROUNDS; round++) {
      // Appends, one at a time.
      let log = createEventLog({ store: await make(), heartbeatMs: 0 });
      r.sequential.push(APPENDS / ((await time(async () => {
        for (let i = 0; i < APPENDS; i++) await log.append({ data: `event ${i}` });
      })) / 1000));
      await log.close();
      // Appends, pipelined (issued without waiting, awaited together in batches of 1,000).
      log = createEventLog({ store: await make(), heartbeatMs: 0 });
      r.pipelined.push(APPENDS / ((await time(async () => {
        for (let i = 0; i < APPENDS; i += 1000) await Promise.all(Array.from({ length: 1000 }, (_, j) => log.append({ data: `event ${i + j}` })));
      })) / 1000));
      await log.close();

      // Replay: one client 10,000 events behind, with no window and no sharing (a read of the store).
      const store = await make();
      log = createEventLog({ store, heartbeatMs: 0, recent: 0, shareReads: false });
      const ids = [];
      for (let i = 0; i < 10_000; i += 1000) ids.push(...(await Promise.all(Array.from({ length: 1000 }, (_, j) => log.append({ data: `event ${i + j}` })))));
      let bytes = 0;
      const ms = await time(async () => (await log.connect(ids[0])).start((t) => (bytes += t.length)).close());
      r.replay.push(9999 / (ms / 1000));
      await log.close();

      // A reconnect wave: WAVE clients with the same last id, BEHIND events behind the head.
      for (const [label, opts] of Object.entries({
        'no sharing (each reads the store)': { recent: 0, shareReads: false },
        'shared reads, no window': { recent: 0 },
        'shared reads and the recent window (default)': {},
      })) {
        const s = await make();
        const wave = createEventLog({ store: s, heartbeatMs: 0, ...opts });
        const waveIds = [];
        for (let i = 0; i < 5000; i += 1000) waveIds.push(...(await Promise.all(Array.from({ length: 1000 }, (_, j) => wave.append({ data: `event ${i + j}` })))));
        if (kind === 'redis') await new Promise((res) => setTimeout(res, 200)); // let the feed deliver them
        const from = waveIds[waveIds.length - 1 - BEHIND];
        const readsBefore = s.reads;
        let written = 0;
        const handles = [];
        const waveMs = await time(async () => {
          const all = await Promise.all(Array.from({ length: WAVE }, () => wave.connect(from)));
          for (const h of all) handles.push(h.start((t) => (written += t.length)));
        });
        (r.waves[label] ??= { ms: [], reads: 0 }).ms.push(waveMs);
        r.waves[label].reads = s.reads - readsBefore;
        for (const h of handles) h.close();
        await wave.close();
      }
    }
  }
} finally {
  await redis.stop();
}

const n = (x) => Math.round(x).toLocaleString('en-US');
const lines = [];
const out = (line = '') => (console.log(line), lines.push(line));
out(`managed-eventsource/server event log, Node ${process.version}, redis-server on loopback, medians of ${ROUNDS} rounds`);
out();
out('store    appends/s awaited   appends/s pipelined   replay events/s (10,000 behind)');
for (const [kind, r] of Object.entries(results)) out(`${kind.padEnd(8)} ${n(median(r.sequential)).padStart(17)}   ${n(median(r.pipelined)).padStart(19)}   ${n(median(r.replay)).padStart(31)}`);
out();
out(`A reconnect wave: ${n(WAVE)} clients with the same last id, ${n(BEHIND)} events behind the head, each sent what it missed`);
out('store    configuration                                    time to serve   store reads');
for (const [kind, r] of Object.entries(results)) {
  for (const [label, w] of Object.entries(r.waves)) out(`${kind.padEnd(8)} ${label.padEnd(48)} ${`${median(w.ms).toFixed(1)} ms`.padStart(13)}   ${n(w.reads).padStart(11)}`);
}
if (process.argv.includes('--write')) {
  writeSection('docs/storm.md', 'bench-log', 'npm run bench:log -- --write', `In one Node process, no HTTP: what the log and its store cost. Appends awaited one by one and pipelined (1,000 at a time); replay of one client 10,000 events behind (no window, no sharing: a store read); a wave of ${n(WAVE)} resumes from one id ${n(BEHIND)} events behind the head, served with no sharing (each reads the store), with shared reads and no recent window, and with both (the default).\n\n\`\`\`\n${lines.join('\n')}\n\`\`\``);
}
