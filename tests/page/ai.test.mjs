// Issue 53: an LLM chat as an app on the AI SDK writes one, in Chromium, Firefox and WebKit: React with
// @ai-sdk/react's useChat({ transport: new ManagedChatTransport(), resume: true }) (bundled by esbuild with
// the package's pkg/ai.js), against a chat server on the real `ai` (streamText over its MockLanguageModelV4,
// served by createResumableStreams; tests/server/ai-chat.mjs). Each answer is 50 tokens `w1 ... w50`, and the
// text useChat renders is compared whole: a token lost or repeated fails it. One page per engine goes through
// a cut answer (twice), a reload mid-answer, stop (the producer cancelled on the server), an interrupted answer
// and its regenerate, a 401, and a server down for a while.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached } from './browser.mjs';
import { appLoaded, startChatPage } from '../server/ai-chat.mjs';

const LIMIT_MS = 20_000;
const WORDS = 50;
const expected = Array.from({ length: WORDS }, (_, i) => `w${i + 1} `).join('');

const APP = `
import { createElement as h } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { ManagedChatTransport } from 'managed-eventsource/ai';

const params = new URLSearchParams(location.search);
const transport = new ManagedChatTransport({ api: '/api/chat', baseMs: 50, maxMs: 300 });
const r = (window.__r = { status: 'none', text: '', error: null, messages: 0, renders: 0 });
function Chat() {
  const chat = useChat({ id: params.get('chat'), transport, resume: params.has('resume') });
  const last = chat.messages.filter((m) => m.role === 'assistant').at(-1);
  Object.assign(r, {
    status: chat.status,
    error: chat.error ? chat.error.message : null,
    text: last ? last.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') : '',
    messages: chat.messages.length,
    renders: r.renders + 1,
  });
  window.app = { send: (text) => chat.sendMessage({ text }), stop: () => chat.stop(), regenerate: () => chat.regenerate() };
  return null;
}
createRoot(document.body.appendChild(document.createElement('div'))).render(h(Chat));
`;

let chat = null;
before(async () => {
  chat = await startChatPage(APP);
});
after(() => chat?.close());

/** The chat server's requests for chat `id` (the POSTs name it in their body, the others in their path). */
const requestsOf = (id) => chat.requests.filter((q) => q.path.includes(`/${id}/`) || (q.body && JSON.parse(q.body).id === id));
const words = (text) => text.split(' ').filter(Boolean).length;

inEachEngine('useChat with ManagedChatTransport: a cut answer, a reload mid-answer, stop, an interrupted answer and regenerate, a 401; every answer whole, each token once', async (engine, page) => {
  const id = (what) => `${engine}-${what}-${process.pid}`;
  const open = async (what, resume = false) => {
    await page.goto(`${chat.url}/?chat=${id(what)}${resume ? '&resume' : ''}`);
    await appLoaded(page, LIMIT_MS, engine);
  };
  const send = (text) => page.evaluate(`(window.app.send(${JSON.stringify(text)}), 1)`);

  // A cut answer, twice: useChat never sees it, and renders the whole answer once.
  await open('cut');
  await send('hi');
  await pageReached(page, (r) => words(r.text) >= 10, LIMIT_MS);
  chat.cut();
  await pageReached(page, (r) => words(r.text) >= 30, LIMIT_MS);
  chat.cut();
  let r = await pageReached(page, (r) => r.status === 'ready' && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: the cut answer`);
  assert.equal(r.error, null);
  const cutPosts = requestsOf(id('cut')).filter((q) => q.method === 'POST');
  assert.equal(cutPosts.length, 3, `${engine}: one answer and two resumes: ${JSON.stringify(cutPosts.map((q) => q.lastEventId))}`);
  assert.ok(cutPosts.slice(1).every((q) => /^[0-9a-f]{16}:\d+$/.test(q.lastEventId)));

  // A reload mid-answer: useChat's resume (reconnectToStream) replays the answer from its start, whole.
  await open('reload', true);
  chat.paceMs = 100; // 5 s an answer: the reload comes mid-answer however slow the driver is
  await send('hi');
  await pageReached(page, (r) => words(r.text) >= 5, LIMIT_MS);
  await open('reload', true);
  chat.paceMs = 20;
  r = await pageReached(page, (r) => r.status === 'ready' && words(r.text) === WORDS, LIMIT_MS).catch((e) => {
    throw new Error(`${e.message}; the chat's requests: ${JSON.stringify(requestsOf(id('reload')).map((q) => [q.method, q.path, q.lastEventId]))}`);
  });
  assert.equal(r.text, expected, `${engine}: the answer resumed after the reload`);
  assert.equal(requestsOf(id('reload')).filter((q) => q.method === 'POST').length, 1, `${engine}: the reload came mid-answer, and nothing was posted again`);
  const resumes = requestsOf(id('reload')).filter((q) => q.method === 'GET');
  assert.ok(resumes.some((q) => /^[0-9a-f]{16}:0$/.test(q.lastEventId ?? '')), `${engine}: the resume named the kept stream: ${JSON.stringify(resumes)}`);

  // Stop: the producer is cancelled on the server, and useChat is ready again (a stop, not an error).
  const abortedBefore = chat.aborted;
  await open('stop');
  await send('hi');
  await pageReached(page, (r) => words(r.text) >= 5, LIMIT_MS);
  await page.evaluate('(window.app.stop(), 1)');
  const t0 = Date.now();
  r = await pageReached(page, (r) => r.status === 'ready', LIMIT_MS);
  assert.equal(r.error, null);
  while (chat.aborted === abortedBefore && Date.now() - t0 < 2000) await new Promise((ok) => setTimeout(ok, 20));
  assert.equal(chat.aborted, abortedBefore + 1, `${engine}: the model call was aborted on the server`);
  assert.ok(Date.now() - t0 < 1500, `${engine}: within a second or so of stop: ${Date.now() - t0} ms`);

  // An interrupted answer: status 'error', saying so, the partial text kept; regenerate gives a whole one.
  await open('interrupted');
  chat.failAfter = 12;
  await send('hi');
  r = await pageReached(page, (r) => r.status === 'error', LIMIT_MS);
  chat.failAfter = null;
  assert.match(r.error, /managed-eventsource\/ai: the answer was interrupted/);
  assert.ok(words(r.text) < WORDS, `${engine}: never shown as finished`);
  await page.evaluate('(window.app.regenerate(), 1)');
  r = await pageReached(page, (r) => r.status === 'ready' && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: the regenerated answer`);

  // A 401: an error at once, never retried.
  await open('unauthorized');
  chat.unauthorized = true;
  await send('hi');
  r = await pageReached(page, (r) => r.status === 'error', LIMIT_MS);
  chat.unauthorized = false;
  assert.match(r.error, /401/);
  assert.equal(requestsOf(id('unauthorized')).length, 1, `${engine}: a 401 is not retried`);

  // The server refuses connections for a while when a message is sent: the ladder brings the answer, once.
  await open('down');
  chat.refuse = 3;
  await send('hi');
  r = await pageReached(page, (r) => r.status === 'ready' && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: the answer after the outage`);
});
