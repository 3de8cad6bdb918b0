// managed-eventsource/ai's ManagedChatTransport (pkg/ai.js, over the fetch transport as it runs in Node)
// against a chat server on the real AI SDK (`ai` 7: streamText over its MockLanguageModelV4, the UI message
// stream served by createResumableStreams; tests/server/ai-chat.mjs). The answers are read with the SDK's own
// readUIMessageStream, as useChat reads them. Each answer is 50 tokens `w1 ... w50`; every test counts them:
// none lost, none repeated, in order, across cuts, a server down for a while, a "reload" (a new transport on
// the same storage), and on a fleet (two nodes on one Redis, each request to either). Stop cancels the
// producer on the server; a producer that fails and a 401 are errors, never a finished answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readUIMessageStream } from 'ai';
import { startChatServer } from '../server/ai-chat.mjs';
import { redisForTests, server } from './fixtures/redis-stores.mjs';

const aiEntry = new URL('../../pkg/ai.js', import.meta.url);
const built = existsSync(aiEntry);
const skip = built ? false : 'pkg/ai.js is not built (npm test builds it before this step)';
const { ManagedChatTransport } = built ? await import(aiEntry) : {};
const { createResumableStreams, createRedisStore, uiMessageChunks } = server;
const fixture = redisForTests('ai-transport');

const WORDS = 50;
const expected = (n = WORDS) => Array.from({ length: n }, (_, i) => `w${i + 1} `).join('');
const user = (text) => ({ id: `u${Math.random()}`, role: 'user', parts: [{ type: 'text', text }] });
const LADDER = { baseMs: 20, maxMs: 100 };
const send = (transport, chatId) => transport.sendMessages({ trigger: 'submit-message', chatId, messageId: undefined, messages: [user('hi')], abortSignal: undefined });

/** A storage as sessionStorage behaves (a reload keeps it). */
function memoryStorage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), map: m };
}

/** Reads an answer's chunks, counting text deltas (`onDelta(n)` after each), and then builds the message
 * from them with the SDK's readUIMessageStream, as useChat does. Resolves to { text, deltas, error }. */
async function read(stream, onDelta = () => {}) {
  const chunks = [];
  const deltas = [];
  let error = null;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      if (value.type === 'text-delta') {
        deltas.push(value.delta);
        onDelta(deltas.length);
      }
    }
  } catch (e) {
    error = e;
  }
  let text = '';
  const replay = new ReadableStream({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) });
  for await (const message of readUIMessageStream({ stream: replay })) text = message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  return { text, deltas, error };
}

async function until(predicate, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a 50-token answer cut twice mid-stream reaches readUIMessageStream whole: each token once, in order; each resume names its last event', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 5 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  try {
    const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'c1', messageId: undefined, messages: [user('hi')], abortSignal: undefined });
    const cuts = new Set([10, 30]);
    const r = await read(stream, (n) => cuts.has(n) && (cuts.delete(n), chat.cut()));
    assert.equal(r.error, null);
    assert.equal(r.text, expected());
    assert.deepEqual(r.deltas, expected().split(/(?<= )/));
    const posts = chat.requests.filter((q) => q.path === '/api/chat');
    assert.equal(posts.length, 3, 'one answer, two resumes');
    assert.equal(posts[0].lastEventId, null);
    for (const q of posts.slice(1)) assert.match(q.lastEventId, /^[0-9a-f]{16}:\d+$/);
    assert.equal(chat.produced, WORDS, 'generated once');
  } finally {
    transport.close();
    await chat.close();
  }
});

test('a server down when the message is sent (connections refused) is retried on the ladder, and the answer arrives once', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 1 });
  chat.refuse = 3;
  const statuses = [];
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER, onStatus: (s) => statuses.push(s) });
  try {
    const r = await read(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c2', messageId: undefined, messages: [user('hi')], abortSignal: undefined }));
    assert.equal(r.text, expected());
    assert.equal(chat.requests.length, 4);
    assert.equal(chat.produced, WORDS, 'generated once');
    assert.deepEqual(statuses.filter((s, i) => s !== statuses[i - 1]), ['connecting', 'reconnecting', 'open', 'closed']);
  } finally {
    await chat.close();
  }
});

test("stop (the abort signal) is not a disconnect: the server's producer is cancelled within a second, and the reader ends as stopped (AbortError)", { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 20 });
  const storage = memoryStorage();
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage, ...LADDER });
  const stop = new AbortController();
  try {
    const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'c3', messageId: undefined, messages: [user('hi')], abortSignal: stop.signal });
    const reading = read(stream, (n) => n === 5 && stop.abort());
    const r = await reading;
    assert.equal(r.error?.name, 'AbortError');
    const t0 = Date.now();
    await until(() => chat.aborted === 1, "the producer's abort", 1000);
    assert.ok(Date.now() - t0 < 1000);
    assert.ok(chat.produced < WORDS, `${chat.produced} tokens generated: the model stopped`);
    assert.equal(chat.stops, 1);
    assert.equal(storage.map.size, 0, 'nothing kept to resume');
  } finally {
    await chat.close();
  }
});

test('a producer that fails mid-answer errors the stream with a message saying the answer was interrupted; a 401 rejects sendMessages with its status', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams({ onerror: () => {} }), { uiMessageChunks, paceMs: 1 });
  chat.failAfter = 10;
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  try {
    const r = await read(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c4', messageId: undefined, messages: [user('hi')], abortSignal: undefined }));
    assert.match(String(r.error?.message), /managed-eventsource\/ai: the answer was interrupted/);
    assert.ok(r.deltas.length < WORDS);
    chat.unauthorized = true;
    await assert.rejects(
      transport.sendMessages({ trigger: 'submit-message', chatId: 'c5', messageId: undefined, messages: [user('hi')], abortSignal: undefined }),
      (e) => e.status === 401 && /could not be fetched/.test(e.message),
    );
  } finally {
    await chat.close();
  }
});

test('after a reload (a new transport on the same storage) reconnectToStream replays the running answer from its start, each token once; with nothing kept it resolves null', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 5 });
  const storage = memoryStorage();
  const before = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage, ...LADDER });
  try {
    const stream = await before.sendMessages({ trigger: 'submit-message', chatId: 'c6', messageId: undefined, messages: [user('hi')], abortSignal: undefined });
    const reader = stream.getReader();
    let seen = 0;
    while (seen < 12) if ((await reader.read()).value?.type === 'text-delta') seen++;
    // The page goes: its connection with it.
    before.close();
    const after = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage, ...LADDER });
    assert.equal(after.resumeStreamIsReplay, true);
    const resumed = await after.reconnectToStream({ chatId: 'c6' });
    const r = await read(resumed);
    assert.equal(r.text, expected());
    const resume = chat.requests.at(-1);
    assert.equal(resume.method, 'GET');
    assert.equal(resume.path, '/api/chat/c6/stream');
    assert.match(resume.lastEventId, /^[0-9a-f]{16}:0$/);
    assert.equal(storage.map.size, 0, 'a finished answer is no longer kept');
    assert.equal(await after.reconnectToStream({ chatId: 'c6' }), null, 'nothing to resume: 204');
    assert.equal(chat.produced, WORDS);
  } finally {
    await chat.close();
  }
});

test('redis: on a fleet of two nodes behind a balancer, an answer cut three times resumes on whichever node it reaches, each token once; a serving node that restarts loses nothing', { skip }, async () => {
  const key = fixture.key();
  const nodes = [];
  const start = async () => {
    const store = await createRedisStore({ url: fixture.redis.url, key, commandTimeoutMs: 1000 });
    const chat = await startChatServer(createResumableStreams({ store }), { uiMessageChunks, paceMs: 5 });
    return { store, chat };
  };
  nodes.push(await start(), await start());
  let turn = 0;
  const hits = [0, 0];
  // The balancer: each request to the next node that is up, round robin.
  const balanced = (url, init) => {
    const i = turn++ % nodes.length;
    hits[i]++;
    return fetch(url.replace(/^http:\/\/balancer/, nodes[i].chat.url), init);
  };
  const transport = new ManagedChatTransport({ api: 'http://balancer/api/chat', fetch: balanced, storage: null, ...LADDER });
  try {
    const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'c7', messageId: undefined, messages: [user('hi')], abortSignal: undefined });
    let restarting = null;
    const r = await read(stream, (n) => {
      if (n === 10 || n === 20) for (const { chat } of nodes) chat.cut();
      // Node 1 restarts (node 0 generates: the first request went there): its connections are cut, and until
      // it is back the balancer sends everything to node 0.
      if (n === 35)
        restarting = (async () => {
          const [old] = nodes.splice(1, 1);
          await old.chat.close();
          await old.store.close();
          nodes.push(await start());
        })();
    });
    await restarting;
    assert.equal(r.error, null);
    assert.equal(r.text, expected());
    assert.deepEqual(r.deltas, expected().split(/(?<= )/));
    assert.ok(hits[0] >= 1 && hits[1] >= 1, `both nodes served: ${hits}`);
    assert.equal(nodes[0].chat.produced + nodes[1].chat.produced, WORDS, 'generated once, on one node');
  } finally {
    transport.close();
    for (const { chat, store } of nodes) {
      await chat.close();
      await store.close();
    }
  }
});

test('a request refused as such (422, 400) rejects at once with its status, never posted again; a 503 is the ladder\'s, and the answer then comes once', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 1 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  try {
    for (const status of [422, 400]) {
      chat.statuses.push(status);
      const before = chat.requests.length;
      await assert.rejects(send(transport, `refused-${status}`), (e) => e.status === status && new RegExp(`could not be fetched: the server answered ${status}`).test(e.message));
      await new Promise((r) => setTimeout(r, 150)); // past the ladder's first waits: a retry would have come
      assert.equal(chat.requests.length - before, 1, `${status}: asked once`);
    }
    chat.statuses.push(503, 503);
    const r = await read(await send(transport, 'shed'));
    assert.equal(r.text, expected());
    assert.equal(chat.produced, WORDS);
  } finally {
    await chat.close();
  }
});

test('a stop before the answer\'s first event still cancels the producer on the server (the client waits for the stream\'s id to name it)', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 20 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  const stop = new AbortController();
  try {
    const answer = transport.sendMessages({ trigger: 'submit-message', chatId: 'early', messageId: undefined, messages: [user('hi')], abortSignal: stop.signal });
    setTimeout(() => stop.abort(), 0); // the POST is on its way; nothing has come back yet
    await assert.rejects(answer, (e) => e.name === 'AbortError');
    await until(() => chat.aborted === 1, "the producer's abort", 2000);
    assert.equal(chat.stops, 1);
    assert.ok(chat.produced < WORDS);
  } finally {
    await chat.close();
  }
});

test("DefaultChatTransport's forms: an api with a query keeps it on the resume and stop routes; Headers with content-type send one; the transport's own options are refused", { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 1 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat?tenant=7`, headers: new Headers({ 'content-type': 'application/json', 'x-app': 'a' }), storage: null, ...LADDER });
  try {
    // The POST goes to /api/chat?tenant=7: the chat server answers only /api/chat, and reads the query apart.
    const r = await read(await send(transport, 'q'));
    assert.equal(r.text, expected());
    const post = chat.requests.find((q) => q.method === 'POST');
    assert.equal(post.search, '?tenant=7');
    assert.equal(post.headers['content-type'], 'application/json', 'one Content-Type');
    assert.equal(post.headers['x-app'], 'a');
    assert.equal(await transport.reconnectToStream({ chatId: 'q' }), null);
    const resume = chat.requests.at(-1);
    assert.deepEqual([resume.path, resume.search], ['/api/chat/q/stream', '?tenant=7']);
    await assert.rejects(transport.reconnectToStream({ chatId: '..' }), TypeError);
    for (const name of ['share', 'signal', 'until', 'lastEventIdKey', 'method']) {
      assert.throws(() => new ManagedChatTransport({ [name]: 'x' }), (e) => e instanceof TypeError && e.message.includes(`option ${name} is the transport's own`), name);
    }
  } finally {
    await chat.close();
  }
});

test('a stop while the server is unreachable and nothing has opened posts nothing more: the retries end with it', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 5 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  const stop = new AbortController();
  try {
    chat.downUntil = Date.now() + 3000;
    const answer = transport.sendMessages({ trigger: 'submit-message', chatId: 'down-stop', messageId: undefined, messages: [user('hi')], abortSignal: stop.signal });
    await until(() => chat.requests.length >= 2, 'two refused attempts');
    stop.abort();
    await assert.rejects(answer, (e) => e.name === 'AbortError');
    const asked = chat.requests.length;
    await new Promise((r) => setTimeout(r, 400)); // several of the ladder's waits
    assert.equal(chat.requests.length, asked, 'no attempt after the stop');
    assert.equal(chat.produced, 0);
  } finally {
    await chat.close();
  }
});

test('a stop during an outage after a cut is asked again until the server takes it, and cancels the producer; a stop URL that throws is reported, the client still closed', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 100 });
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage: null, ...LADDER });
  const stop = new AbortController();
  try {
    const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'outage-stop', messageId: undefined, messages: [user('hi')], abortSignal: stop.signal });
    const reading = read(stream, (n) => {
      if (n !== 3) return;
      chat.downUntil = Date.now() + 1500;
      chat.cut();
      setTimeout(() => stop.abort(), 200); // during the reconnect waits
    });
    assert.equal((await reading).error?.name, 'AbortError');
    await until(() => chat.aborted === 1, 'the producer cancelled once the server is back', 6000);
    assert.ok(chat.produced < WORDS, `${chat.produced} generated`);
  } finally {
    await chat.close();
  }
  const reported = [];
  const report = globalThis.reportError;
  globalThis.reportError = (e) => reported.push(e);
  const chat2 = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 20 });
  try {
    const throwing = new ManagedChatTransport({ api: `${chat2.url}/api/chat`, storage: null, stopApi: () => { throw new Error('no route for this chat'); }, ...LADDER });
    const stop2 = new AbortController();
    const r = await read(await throwing.sendMessages({ trigger: 'submit-message', chatId: 'x', messageId: undefined, messages: [user('hi')], abortSignal: stop2.signal }), (n) => n === 3 && stop2.abort());
    assert.equal(r.error?.name, 'AbortError');
    assert.match(String(reported[0]?.message), /no route for this chat/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(chat2.live.size, 0, 'no connection left open');
  } finally {
    globalThis.reportError = report;
    await chat2.close();
  }
});

test('an answer whose attempts run out mid-stream keeps its stream id: resumeStream (reconnectToStream) fetches it whole once the server is back; a refusal says the server\'s reason', { skip }, async () => {
  const chat = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 10 });
  const storage = memoryStorage();
  const transport = new ManagedChatTransport({ api: `${chat.url}/api/chat`, storage, baseMs: 20, maxMs: 50, maxAttempts: 2 });
  try {
    const r = await read(await send(transport, 'ran-out'), (n) => n === 5 && ((chat.downUntil = Date.now() + 1000), chat.cut()));
    assert.match(String(r.error?.message), /the answer was interrupted \(resumeStream\(\) or a reload may fetch it again\)/);
    assert.equal(storage.map.size, 1, 'its stream id is kept');
    await until(() => Date.now() > chat.downUntil, 'the server back', 3000);
    const again = await read(await transport.reconnectToStream({ chatId: 'ran-out' }));
    assert.equal(again.text, expected());
    chat.statuses.push(422);
    await assert.rejects(send(transport, 'reason'), (e) => e.statusCode === 422 && /answered 422 on purpose/.test(e.message));
  } finally {
    await chat.close();
  }
});
