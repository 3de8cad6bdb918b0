#!/usr/bin/env node
// Issue 53's figures for LLM streams, on a chat server on the real AI SDK (tests/server/ai-chat.mjs:
// streamText over the SDK's MockLanguageModelV4, served by createResumableStreams) in this process, over
// loopback HTTP, with the package as built (pkg/ai.js, pkg/server.js):
//   1. chunks lost and repeated across a cut, a reload and a node restart (two nodes on one Redis, the other
//      node serving the resume), with ManagedChatTransport, over many answers;
//   2. the time from the network's return to the next chunk, after a cut with the server unreachable for a
//      while, beside the AI SDK's DefaultChatTransport in the same run. WorkflowChatTransport (@workflow/ai)
//      is not run: see the note printed at the end.
// Usage: node scripts/bench-ai.mjs [--answers N] [--trials N] [--down-ms MS]
import { DefaultChatTransport } from 'ai';
import { startRedis } from './redis-server.mjs';
import { startChatServer } from '../tests/server/ai-chat.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ANSWERS = arg('answers', 20);
const TRIALS = arg('trials', 10);
const DOWN_MS = arg('down-ms', 2000);
const WORDS = 50;

const { ManagedChatTransport } = await import('../pkg/ai.js');
const { createResumableStreams, createRedisStore, uiMessageChunks } = await import('../pkg/server.js');

const user = { id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
const send = (transport, chatId) => transport.sendMessages({ trigger: 'submit-message', chatId, messageId: undefined, messages: [user], abortSignal: undefined });

/** Reads a stream's text deltas; `onDelta(n, t)` after each. Resolves to { deltas, error }. */
async function read(stream, onDelta = () => {}) {
  const deltas = [];
  let error = null;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === 'text-delta') {
        deltas.push(value.delta);
        onDelta(deltas.length, performance.now());
      }
    }
  } catch (e) {
    error = e;
  }
  return { deltas, error };
}

/** Lost and repeated tokens of one answer, from the deltas it delivered (`w1 ` ... `w50 `). */
function count(deltas) {
  const seen = new Map();
  for (const d of deltas) seen.set(d, (seen.get(d) ?? 0) + 1);
  let lost = 0;
  let repeated = 0;
  for (let i = 1; i <= WORDS; i++) {
    const n = seen.get(`w${i} `) ?? 0;
    if (n === 0) lost++;
    if (n > 1) repeated += n - 1;
  }
  return { lost, repeated };
}

/** Adds one answer's delivered, lost and repeated tokens, and whether it errored, to `total`. */
function tally(total, r) {
  const c = count(r.deltas);
  total.delivered += r.deltas.length;
  total.lost += c.lost;
  total.repeated += c.repeated;
  total.errors += r.error ? 1 : 0;
}

const pick = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));
const rows = [];

// ---- 1. lost and repeated --------------------------------------------------------------------------------
{
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 2 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, baseMs: 20, maxMs: 100 });
  const total = { delivered: 0, lost: 0, repeated: 0, errors: 0 };
  for (let a = 0; a < ANSWERS; a++) {
    const cuts = new Set([pick(1, 24), pick(25, 49)]);
    const r = await read(await send(transport, `cut-${a}`), (n) => cuts.has(n) && (cuts.delete(n), chat.cut()));
    tally(total, r);
  }
  rows.push({ scenario: 'a cut, twice an answer', answers: ANSWERS, ...total });
  await chat.close();
}
{
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 2 });
  const storage = new Map();
  const store = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, v), removeItem: (k) => storage.delete(k) };
  const total = { delivered: 0, lost: 0, repeated: 0, errors: 0 };
  for (let a = 0; a < ANSWERS; a++) {
    const page = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: store, baseMs: 20, maxMs: 100 });
    const reader = (await send(page, `reload-${a}`)).getReader();
    const before = pick(1, 45);
    for (let seen = 0; seen < before; ) if ((await reader.read()).value?.type === 'text-delta') seen++;
    page.close(); // the page goes; a new one (the reload) resumes: the answer is replayed from its start
    const reloaded = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: store, baseMs: 20, maxMs: 100 });
    const stream = await reloaded.reconnectToStream({ chatId: `reload-${a}` });
    const r = stream ? await read(stream) : { deltas: [], error: new Error('nothing to resume') };
    tally(total, r);
  }
  rows.push({ scenario: 'a reload, once an answer (the replay counted)', answers: ANSWERS, ...total });
  await chat.close();
}
const redis = await startRedis();
{
  const key = `bench-ai:${process.pid}`;
  const start = async () => {
    const store = await createRedisStore({ url: redis.url, key, commandTimeoutMs: 1000 });
    return { store, chat: await startChatServer(createResumableStreams({ store }), { uiMessageChunks, paceMs: 2 }) };
  };
  const nodes = [await start(), await start()];
  // The balancer: the first request of an answer to node 0 (which generates it), every later one to node 1
  // while it is up, else node 0.
  let first = true;
  const balanced = (url, init) => {
    const node = first ? nodes[0] : nodes[1] ?? nodes[0];
    first = false;
    return fetch(url.replace(/^http:\/\/balancer/, node.chat.url), init);
  };
  const transport = new ManagedChatTransport({ api: 'http://balancer/api/chat', fetch: balanced, storage: null, baseMs: 20, maxMs: 100 });
  const total = { delivered: 0, lost: 0, repeated: 0, errors: 0 };
  for (let a = 0; a < ANSWERS; a++) {
    first = true;
    let restarting = null;
    const [cut, restart] = [pick(1, 20), pick(21, 45)];
    const r = await read(await send(transport, `fleet-${a}`), (n) => {
      if (n === cut) nodes[0].chat.cut(); // the resume goes to node 1
      if (n === restart)
        restarting = (async () => {
          const old = nodes.pop(); // node 1, serving the resume, restarts
          await old.chat.close();
          await old.store.close();
          nodes.push(await start());
        })();
    });
    await restarting;
    tally(total, r);
  }
  rows.push({ scenario: 'two nodes on Redis: a cut (the other node serves the resume), then that node restarts', answers: ANSWERS, ...total });
  for (const { chat, store } of nodes) {
    await chat.close();
    await store.close();
  }
}
await redis.stop();

console.log(`\nChunks lost and repeated (${WORDS} tokens an answer, ManagedChatTransport, pkg/ai.js):\n`);
console.log('| scenario | answers | tokens delivered | lost | repeated | answers that errored |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) console.log(`| ${r.scenario} | ${r.answers} | ${r.delivered} | ${r.lost} | ${r.repeated} | ${r.errors} |`);

// ---- 2. the network's return to the next chunk ----------------------------------------------------------
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
async function outage(makeTransport, label) {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 20 });
  const transport = makeTransport(`${chat.url}/api/chat`);
  const waits = [];
  let errored = 0;
  let lostTotal = 0;
  for (let t = 0; t < TRIALS; t++) {
    let back = null;
    let next = null;
    const r = await read(await send(transport, `outage-${t}`), (n, at) => {
      if (n === 10) {
        chat.downUntil = Date.now() + DOWN_MS; // every connection refused meanwhile
        chat.cut();
        back = performance.now() + DOWN_MS;
      } else if (back !== null && next === null && at >= back) next = at;
    });
    if (next !== null) waits.push(next - back);
    if (r.error) errored++;
    lostTotal += count(r.deltas).lost;
    chat.downUntil = 0;
  }
  await chat.close();
  const ms = (x) => (x === undefined ? '-' : `${Math.round(x)} ms`);
  return { label, trials: TRIALS, resumed: waits.length, median: ms(quantile(waits, 0.5)), p90: ms(quantile(waits, 0.9)), max: ms(waits.length ? Math.max(...waits) : undefined), errored, lost: lostTotal };
}
const outages = [
  await outage((api) => new ManagedChatTransport({ api, storage: null }), 'ManagedChatTransport, defaults (ladder 1 s base, full jitter; in Node, no `online` event)'),
  await outage((api) => new ManagedChatTransport({ api, storage: null, baseMs: 250, maxMs: 2000 }), 'ManagedChatTransport, baseMs 250, maxMs 2000'),
  await outage((api) => new DefaultChatTransport({ api: api.replace('/api/chat', '/api/native') }), 'DefaultChatTransport (ai 7.0.173), against the SDK\'s own toUIMessageStreamResponse'),
];
console.log(`\nThe network's return to the next chunk: the answer cut at token 10, every connection refused for ${DOWN_MS} ms (${TRIALS} answers each):\n`);
console.log('| transport | answers resumed | median | p90 | max | answers that errored | tokens lost |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const o of outages) console.log(`| ${o.label} | ${o.resumed} of ${o.trials} | ${o.median} | ${o.p90} | ${o.max} | ${o.errored} | ${o.lost} |`);
console.log(`
DefaultChatTransport does not retry a dropped answer: its stream errors at the cut (useChat's status
'error'), and the rest comes only if the app calls resumeStream() once the network is back.
WorkflowChatTransport (@workflow/ai 4.1.2's source, read, not run; 5.0.0 is current): installing it pulls the Workflow SDK (about 300 MB,
320 packages here), and its answers need a Workflow run (an x-workflow-run-id header). Its reconnect is
immediate, with no wait, and a refused fetch ends it at once (the fetch is outside its retry), so with the
network down at the cut it errors as DefaultChatTransport does; a cut with the network up resumes at once.
In a browser, ManagedChatTransport reconnects at the 'online' event, not the ladder's next draw.`);
process.exit(0);
