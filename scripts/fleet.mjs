// `npm run population -- --fleet`: resume without loss across a fleet. Two node processes
// (scripts/fleet-node.mjs, managed-eventsource/server as it ships) share one event log in a real
// redis-server, behind a small TCP proxy on loopback (scripts/fleet-proxy.mjs, round robin, a refusing node
// skipped). N real clients (the built package, pkg/index.js, in this process with the `eventsource`
// package as the global EventSource) connect through the proxy; events are published throughout (POST
// /publish through the proxy, so each is appended at whichever node the proxy picks); one node is killed
// (SIGKILL) mid-stream and started again once its clients have moved to the other. Each client must end
// with every event exactly once, in order, and the gate must still pace the moved clients' arrivals: all
// of them admitted within 1.15 x N/C (N the moved clients, C the surviving node's gate rate). The same run
// with the memory store (no shared log) prints what it loses.
//
//   node scripts/population.mjs --fleet                 2,000 clients, Redis then memory (about 2 minutes)
//   node scripts/population.mjs --fleet --quick         300 clients, both stores (under a minute); `npm test`
//   node scripts/population.mjs --fleet --store redis   one store only
//   node scripts/population.mjs --fleet --write         also writes the fleet section of docs/storm.md (if it passed)
//   node scripts/population.mjs --fleet --rolling       a rolling deploy instead of the kill: each node drains
//                                                       (log.drain), exits and starts again; Redis only
//
// Exits 1 if the Redis run lost or repeated an event, left a client out of order or unconnected, or took
// longer than 1.15 x N/C to admit all the moved clients (99 % is printed beside it).

import { fork } from 'node:child_process';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource } from 'eventsource';
import { startRedis } from './redis-server.mjs';
import { freePort } from './runner-pool.mjs';
import { writeSection } from './sections.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const write = process.argv.includes('--write');
const only = process.argv.includes('--store') ? process.argv[process.argv.indexOf('--store') + 1] : null;
const N = quick ? 300 : 2000;
const RATE = quick ? N / 10 : N / 20; // each node's gate: the moved half fills in about 5 s (quick) or 10 s
const MAX_MS = quick ? 8000 : 30_000;
const PUBLISH_EVERY_MS = quick ? 50 : 100;
const BEFORE_MS = quick ? 1500 : 3000; // publishing before the kill
const AFTER_MS = quick ? 1500 : 3000; // publishing after the node is back
const PACING_LIMIT = 1.15;
// --rolling: a rolling deploy instead of the kill. Each node drains (log.drain) over its clients / the other
// node's gate rate x DRAIN_MARGIN, so that they arrive there within its rate.
const rolling = process.argv.includes('--rolling');
const DRAIN_MARGIN = 1.25;

const say = (msg) => console.log(`[fleet] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (!existsSync(join(root, 'pkg', 'index.js'))) {
  console.error('fleet: pkg/index.js is missing; run npm run build first');
  process.exit(1);
}
globalThis.EventSource = EventSource;
const { ManagedEventSource } = await import(join(root, 'pkg', 'index.js'));

/** A child process that says `{ ready: port }` once it listens. */
async function child(script, args) {
  const proc = fork(join(root, 'scripts', script), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    proc.once('message', (m) => resolve(m.ready));
    proc.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return { proc, port, gone: new Promise((r) => proc.once('exit', r)) };
}

async function json(url) {
  const res = await fetch(url, { cache: 'no-store' });
  return res.json();
}

/** One event published through the proxy on a connection of its own; resolves to its id or null. */
function publish(port, body) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/publish', method: 'POST', agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(res.statusCode === 200 ? text : null));
    });
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

async function runFleet(kind) {
  say(`${kind} store: ${N} clients, two nodes with a paced gate of ${RATE}/s each, behind a TCP proxy`);
  const redis = kind === 'redis' ? await startRedis() : null;
  const key = `fleet:${Date.now()}`;
  const ports = [await freePort(), await freePort()];
  const nodeArgs = (port) => ['--port', String(port), '--store', kind, ...(redis ? ['--redis', redis.url, '--key', key] : []), '--rate', String(RATE), '--burst', String(RATE)];
  const nodes = await Promise.all(ports.map((p) => child('fleet-node.mjs', nodeArgs(p))));
  const proxy = await child('fleet-proxy.mjs', ['--to', ports.join(',')]);
  const front = `http://127.0.0.1:${proxy.port}`;
  const open = async () => {
    let total = 0;
    const each = [];
    for (const p of ports) {
      try {
        const s = await json(`http://127.0.0.1:${p}/stats`);
        each.push(s.open);
        total += s.open;
      } catch {
        each.push(0);
      }
    }
    return { total, each };
  };
  const waitOpen = async (want, limitMs) => {
    const t0 = performance.now();
    while (performance.now() - t0 < limitMs) {
      const o = await open();
      if (o.total >= want) return performance.now() - t0;
      await sleep(100);
    }
    return null;
  };

  const clients = [];
  const result = { kind };
  try {
    // Connect: every client through the proxy, admitted by the two gates.
    for (let i = 0; i < N; i++) {
      const record = { seqs: [], reloads: 0 };
      record.es = new ManagedEventSource(`${front}/events`, { lastEventIdParam: 'lastEventId', retryHintEvent: 'retry-hint', baseMs: 1000, maxMs: MAX_MS });
      record.es.onmessage = (ev) => record.seqs.push(Number(ev.data));
      record.es.addEventListener('reload', () => record.reloads++);
      clients.push(record);
    }
    const connectMs = await waitOpen(N, 120_000);
    if (connectMs === null) throw new Error('the clients did not all connect');
    result.connect = { ms: connectMs, ideal: (N / (2 * RATE)) * 1000 };
    say(`${N} connected in ${(connectMs / 1000).toFixed(1)} s (N/C ${(N / (2 * RATE)).toFixed(1)} s through two gates)`);

    // Publish throughout.
    const published = [];
    let seq = 0;
    let running = true;
    let hold = null;
    const publisher = (async () => {
      while (running) {
        if (hold) await hold.promise;
        const id = await publish(proxy.port, String(seq));
        if (id !== null) published.push(seq);
        seq++;
        await sleep(PUBLISH_EVERY_MS);
      }
    })();
    const pause = async () => {
      let release;
      hold = { promise: new Promise((r) => (release = r)) };
      hold.release = release;
      // Let an append in flight finish, so none is cut by the kill.
      await sleep(PUBLISH_EVERY_MS + 50);
    };
    const resume = () => {
      const h = hold;
      hold = null;
      h?.release();
    };
    await sleep(BEFORE_MS);

    if (rolling) {
      // A rolling deploy: each node in turn drains over a window sized for the other's gate, exits and is
      // started again; the other node's arrivals (admitted or refused) are counted a second at a time.
      result.rolling = [];
      for (const i of [1, 0]) {
        const other = 1 - i;
        const moved = (await open()).each[i];
        const overMs = Math.ceil((moved / RATE) * 1000 * DRAIN_MARGIN);
        const t = Date.now();
        nodes[i].proc.send({ drain: overMs });
        await nodes[i].gone;
        nodes[i] = await child('fleet-node.mjs', nodeArgs(ports[i]));
        const backMs = await waitOpen(N, overMs * 3 + 30_000);
        const arrived = (await json(`http://127.0.0.1:${ports[other]}/stats?times`)).arrivedAt.filter((x) => x >= t);
        const perSecond = [];
        for (const x of arrived) perSecond[Math.floor((x - t) / 1000)] = (perSecond[Math.floor((x - t) / 1000)] ?? 0) + 1;
        const step = { node: i + 1, moved, overMs, backMs: backMs === null ? null : Date.now() - t, perSecond: Array.from(perSecond, (x) => x ?? 0) };
        step.peak = Math.max(0, ...step.perSecond);
        result.rolling.push(step);
        say(`node ${i + 1} drained ${moved} clients over ${(overMs / 1000).toFixed(1)} s; arrivals a second at node ${other + 1}: ${step.perSecond.join(' ')} (peak ${step.peak}, its gate ${RATE}/s); ${backMs === null ? 'NOT all back' : `all ${N} open again ${(step.backMs / 1000).toFixed(1)} s after the drain began`}`);
      }
      await sleep(AFTER_MS);
      running = false;
      await publisher;
      return await tally(published, clients, result, kind);
    }

    // Kill the second node; its clients move to the first through the proxy.
    await pause();
    const before = await open();
    const moved = before.each[1];
    const killedAt = performance.now();
    const killedAtWall = Date.now();
    nodes[1].proc.kill('SIGKILL');
    await nodes[1].gone;
    resume();
    const waveMs = await waitOpen(N, (moved / RATE) * 1000 * 3 + 30_000);
    result.wave = { moved, ms: waveMs === null ? null : performance.now() - killedAt, ideal: (moved / RATE) * 1000 };
    const times = (await json(`http://127.0.0.1:${ports[0]}/stats?times`)).admittedAt.filter((t) => t >= killedAtWall);
    const perSecond = [];
    for (const t of times) perSecond[Math.floor((t - killedAtWall) / 1000)] = (perSecond[Math.floor((t - killedAtWall) / 1000)] ?? 0) + 1;
    result.wave.perSecond = Array.from(perSecond, (x) => x ?? 0);
    const sorted = times.sort((a, b) => a - b);
    result.wave.p99 = sorted.length >= moved ? sorted[Math.ceil(moved * 0.99) - 1] - killedAtWall : null;
    say(`admitted a second on node 1 after the kill: ${result.wave.perSecond.join(' ')}`);
    say(`node 2 killed with ${moved} clients; ${waveMs === null ? 'NOT all back' : `all back on node 1 in ${(result.wave.ms / 1000).toFixed(1)} s`} (N/C ${(moved / RATE).toFixed(1)} s)`);

    // Restart it; publishing goes on a while with both nodes up.
    nodes[1] = await child('fleet-node.mjs', nodeArgs(ports[1]));
    await sleep(AFTER_MS);
    running = false;
    await publisher;
    return await tally(published, clients, result, kind);
  } finally {
    for (const c of clients) c.es.close();
    for (const n of nodes) n.proc.kill('SIGKILL');
    proxy.proc.kill('SIGKILL');
    await redis?.stop();
    await sleep(200);
  }
}

/** Waits for every client to have the last event published (with no shared log some never will), then
 * counts what each lost, repeated or received out of order into `result`. */
async function tally(published, clients, result, kind) {
  {
    const last = published.at(-1);

    // Settle: wait for every client to have the last event (with no shared log some never will).
    const t0 = performance.now();
    const settleMs = kind === 'redis' ? 30_000 : 3000;
    while (performance.now() - t0 < settleMs && !clients.every((c) => c.seqs.includes(last))) await sleep(100);

    // Tally.
    const expected = new Set(published);
    let lost = 0;
    let lostClients = 0;
    let repeated = 0;
    let disordered = 0;
    let reloads = 0;
    let unexpected = 0;
    for (const c of clients) {
      const seen = new Set(c.seqs);
      let missing = 0;
      for (const s of expected) if (!seen.has(s)) missing++;
      lost += missing;
      if (missing) lostClients++;
      repeated += c.seqs.length - seen.size;
      for (const s of seen) if (!expected.has(s)) unexpected++;
      if (c.seqs.some((s, i) => i > 0 && s <= c.seqs[i - 1])) disordered++;
      reloads += c.reloads;
    }
    Object.assign(result, { events: published.length, deliveries: published.length * N, lost, lostClients, repeated, disordered, reloads, unexpected });
    return result;
  }
}

const kinds = only ? [only] : rolling ? ['redis'] : ['redis', 'memory'];
const results = [];
for (const kind of kinds) results.push(await runFleet(kind));

if (rolling) {
  const r = results[0];
  console.log(`\n${N.toLocaleString('en-US')} clients through a TCP proxy to two nodes on one Redis log, each with a paced gate of ${RATE}/s; a rolling deploy: each node in turn drained (log.drain over its clients / ${RATE} x ${DRAIN_MARGIN}), exited and started again.`);
  console.log(`events ${r.events}, deliveries ${r.deliveries}: lost ${r.lost}, repeated ${r.repeated}, out of order ${r.disordered}, reload events ${r.reloads}`);
  const problems = [];
  for (const step of r.rolling) {
    console.log(`node ${step.node}: ${step.moved} clients drained over ${(step.overMs / 1000).toFixed(1)} s; peak arrivals at the other node ${step.peak}/s (its gate ${RATE}/s: ${(step.peak / RATE).toFixed(2)}x); a second: ${step.perSecond.join(' ')}`);
    if (step.backMs === null) problems.push(`node ${step.node}'s clients did not all come back`);
    if (step.peak > RATE * PACING_LIMIT) problems.push(`node ${step.node}'s drain sent ${step.peak} a second to the other node, over ${PACING_LIMIT} x its gate's ${RATE}`);
  }
  if (r.lost || r.repeated || r.disordered) problems.push(`lost ${r.lost}, repeated ${r.repeated}, out of order ${r.disordered}`);
  if (problems.length) {
    console.error(`[fleet] FAILED (rolling): ${problems.join('; ')}`);
    process.exit(1);
  }
  say(`ok: a rolling deploy of both nodes lost and repeated nothing, and each drain kept arrivals at the other node within ${PACING_LIMIT} x its gate's rate`);
  process.exit(0);
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const s1 = (ms) => (ms == null ? 'never' : (ms / 1000).toFixed(1));
console.log(`\n${N.toLocaleString('en-US')} clients (pkg/index.js over the eventsource package) through a TCP proxy to two nodes, each with a paced gate of ${RATE}/s; an event published every ${PUBLISH_EVERY_MS} ms through the proxy; node 2 SIGKILLed after ${BEFORE_MS / 1000} s and started again once its clients were back.\n`);
const header = ['store', 'events', 'deliveries', 'lost', 'clients losing', 'repeated', 'out of order', 'reload events', 'moved', 'N/C', '99% back in', 'ratio', 'all back in', 'ratio'];
const rows = results.map((r) => [r.kind, fmt(r.events), fmt(r.deliveries), fmt(r.lost), fmt(r.lostClients), fmt(r.repeated), fmt(r.disordered), fmt(r.reloads), fmt(r.wave.moved), `${s1(r.wave.ideal)} s`, `${s1(r.wave.p99)} s`, r.wave.p99 == null ? '—' : (r.wave.p99 / r.wave.ideal).toFixed(2), `${s1(r.wave.ms)} s`, r.wave.ms == null ? '—' : (r.wave.ms / r.wave.ideal).toFixed(2)]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
console.log(header.map((h, i) => h.padStart(widths[i])).join('  '));
for (const row of rows) console.log(row.map((c, i) => c.padStart(widths[i])).join('  '));
for (const r of results) console.log(`${r.kind}: all ${N} first connected in ${s1(r.connect.ms)} s against N/C ${s1(r.connect.ideal)} s through both gates (ratio ${(r.connect.ms / r.connect.ideal).toFixed(2)})`);

let failed = false;
for (const r of results.filter((x) => x.kind === 'redis')) {
  const problems = [];
  if (r.lost) problems.push(`lost ${r.lost}`);
  if (r.repeated) problems.push(`repeated ${r.repeated}`);
  if (r.disordered) problems.push(`${r.disordered} clients out of order`);
  if (r.wave.ms == null || r.wave.p99 == null) problems.push('not every moved client came back');
  else if (r.wave.ms / r.wave.ideal > PACING_LIMIT) problems.push(`the moved clients all back in ${(r.wave.ms / r.wave.ideal).toFixed(2)} x N/C (99 % in ${(r.wave.p99 / r.wave.ideal).toFixed(2)}), above ${PACING_LIMIT}`);
  if (problems.length) {
    failed = true;
    console.error(`[fleet] FAILED (redis): ${problems.join(', ')}`);
  }
}
if (!failed && results.some((r) => r.kind === 'redis')) say(`ok: with the shared log every client has every event once, in order, and the moved clients were all back within ${PACING_LIMIT} x N/C`);
if (write && !quick && !only && !failed) {
  const md = (cells) => `| ${cells.join(' | ')} |`;
  const table = [md(header), md(header.map((_, i) => (i ? '---:' : '---'))), ...rows.map(md)].join('\n');
  const waves = results.map((r) => `- ${r.kind}: admitted a second on node 1 from the kill: ${r.wave.perSecond.join(', ')}; all ${N} first connected in ${s1(r.connect.ms)} s against N/C ${s1(r.connect.ideal)} s (${(r.connect.ms / r.connect.ideal).toFixed(2)}).`).join('\n');
  writeSection('docs/storm.md', 'fleet', 'npm run population -- --fleet --write', `${N.toLocaleString('en-US')} real clients (pkg/index.js in one Node process, the \`eventsource\` package as its EventSource) connect through a small Node TCP proxy (scripts/fleet-proxy.mjs: round robin, a refusing node skipped) to two node processes (scripts/fleet-node.mjs), each an event log behind a paced gate of ${RATE}/s (burst ${RATE}). An event is published every ${PUBLISH_EVERY_MS} ms through the proxy, so each is appended at whichever node the proxy picks; after ${BEFORE_MS / 1000} s node 2 is SIGKILLed, its clients reconnect through the proxy to node 1 with their last id, and node 2 is started again once they are all back. "Lost" counts, over every client, the published events it never received; "repeated" the ones it received twice. With Redis every node replays what any node appended; with the memory store each node knows only its own appends.\n\n${table}\n\n${waves}\n\nN/C is the moved clients over the surviving node's gate rate: how long the gate needs to admit them all; the ratio is the time measured from the kill.`);
}
process.exit(failed ? 1 : 0);
