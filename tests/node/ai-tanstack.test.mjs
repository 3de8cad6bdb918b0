// TanStack AI on managed-eventsource (issue 53): its ChatClient (@tanstack/ai-client 0.33.2) with its own
// fetchServerSentEvents adapter, given managedFetch() (pkg/ai.js) as its fetchClient, against a resumable
// stream of AG-UI events (tests/server/ai-chat.mjs's /api/agui; TanStack's server needs a provider adapter).
// The answer's 50 tokens are compared whole, as the chat client builds the message: cut twice, the server
// down when the message is sent; a request refused as such is a Response with its status, never asked again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { ChatClient, fetchServerSentEvents } from '@tanstack/ai-client';
import { startChatServer } from '../server/ai-chat.mjs';

const aiEntry = new URL('../../pkg/ai.js', import.meta.url);
const built = existsSync(aiEntry);
const skip = built ? false : 'pkg/ai.js is not built (npm test builds it before this step)';
const { managedFetch } = built ? await import(aiEntry) : {};
const { createResumableStreams, uiMessageChunks } = await import(built ? new URL('../../pkg/server.js', import.meta.url) : new URL('../../src/server/index.js', import.meta.url));

const WORDS = 50;
const expected = Array.from({ length: WORDS }, (_, i) => `w${i + 1} `).join('');
const LADDER = { baseMs: 20, maxMs: 100 };
const textOf = (messages) => (messages.filter((m) => m.role === 'assistant').at(-1)?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.content).join('');

/** A ChatClient on managedFetch; `onWords(n)` after each change of the answer's text. */
function client(url, onWords = () => {}, ladder = LADDER) {
  const seen = { text: '', error: null };
  const chat = new ChatClient({
    connection: fetchServerSentEvents(url, { fetchClient: managedFetch(ladder) }),
    onMessagesChange: (messages) => {
      seen.text = textOf(messages);
      onWords(seen.text.split(' ').filter(Boolean).length);
    },
    onError: (error) => (seen.error = error),
  });
  return { chat, seen };
}

test("TanStack AI's ChatClient with managedFetch as its fetchClient: an answer cut twice arrives whole, each token once, resumed with Last-Event-ID", { skip }, async () => {
  const server = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 5 });
  try {
    const cuts = new Set([10, 30]);
    const { chat, seen } = client(`${server.url}/api/agui`, (n) => cuts.has(n) && (cuts.delete(n), server.cut()));
    await chat.sendMessage('hi');
    assert.equal(seen.error, null);
    assert.equal(seen.text, expected);
    const posts = server.requests.filter((q) => q.path === '/api/agui');
    assert.equal(posts.length, 3, `one answer, two resumes: ${JSON.stringify(posts.map((q) => q.lastEventId))}`);
    assert.equal(posts[0].lastEventId, null);
    for (const q of posts.slice(1)) assert.match(q.lastEventId, /^[0-9a-f]{16}:\d+$/);
    assert.equal(server.produced, WORDS, 'generated once');
  } finally {
    await server.close();
  }
});

test('TanStack AI: the server refusing connections when the message is sent is the ladder\'s, and the answer comes once', { skip }, async () => {
  const server = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 1 });
  server.refuse = 3;
  try {
    const { chat, seen } = client(`${server.url}/api/agui`);
    await chat.sendMessage('hi');
    assert.equal(seen.error, null);
    assert.equal(seen.text, expected);
    assert.equal(server.requests.length, 4);
    assert.equal(server.produced, WORDS);
  } finally {
    await server.close();
  }
});

test('managedFetch: a request refused as such is a Response with its status, asked once; an aborted signal rejects with an AbortError; its own options are refused', { skip }, async () => {
  const server = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 1 });
  try {
    const fetch = managedFetch(LADDER);
    server.statuses.push(422);
    const refused = await fetch(`${server.url}/api/agui`, { method: 'POST', body: JSON.stringify({ threadId: 't', runId: 'r' }) });
    assert.equal(refused.status, 422);
    assert.match(await refused.text(), /the server answered 422/);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(server.requests.length, 1);
    await assert.rejects(fetch(`${server.url}/api/agui`, { method: 'POST', signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
    assert.throws(() => managedFetch({ until: () => true }), TypeError);
  } finally {
    await server.close();
  }
});

test("TanStack AI: the server unreachable for 2 s mid-answer: its own adapter's fixed 250 ms reconnects give up, and with managedFetch the ladder brings the whole answer", { skip }, async () => {
  const server = await startChatServer(createResumableStreams(), { uiMessageChunks, paceMs: 5 });
  try {
    const outage = (n) => n === 10 && !server.downUntil && ((server.downUntil = Date.now() + 2000), server.cut());
    // TanStack's own: no fetchClient of ours.
    const own = { text: '', error: null };
    const alone = new ChatClient({
      connection: fetchServerSentEvents(`${server.url}/api/agui`),
      onMessagesChange: (m) => ((own.text = textOf(m)), outage(own.text.split(' ').filter(Boolean).length)),
      onError: (e) => (own.error = e),
    });
    await alone.sendMessage('hi');
    assert.ok(own.error, `its own adapter gave up: ${own.text.length} characters`);
    assert.notEqual(own.text, expected);
    server.downUntil = 0;
    const { chat, seen } = client(`${server.url}/api/agui`, outage, { baseMs: 100, maxMs: 500 }); // 8 attempts span the outage
    await chat.sendMessage('hi');
    assert.equal(seen.error, null);
    assert.equal(seen.text, expected);
  } finally {
    await server.close();
  }
});
