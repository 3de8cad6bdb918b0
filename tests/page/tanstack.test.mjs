// Issue 53: TanStack AI on managed-eventsource in Chromium, Firefox and WebKit: its ChatClient
// (@tanstack/ai-client, bundled by esbuild with the package's pkg/ai.js) with fetchServerSentEvents given
// managedFetch() as its fetchClient, against a resumable stream of AG-UI events (tests/server/ai-chat.mjs's
// /api/agui). Each answer's 50 tokens are compared whole: an answer cut twice, one through a server
// unreachable for 2 s mid-answer (TanStack's own adapter gives up there: tests/node/ai-tanstack.test.mjs), one
// sent while the server is down, and a 401.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { inEachEngine, pageReached } from './browser.mjs';
import { appLoaded, startChatPage } from '../server/ai-chat.mjs';

const LIMIT_MS = 20_000;
const WORDS = 50;
const expected = Array.from({ length: WORDS }, (_, i) => `w${i + 1} `).join('');

const APP = `
import { ChatClient, fetchServerSentEvents } from '@tanstack/ai-client';
import { managedFetch } from 'managed-eventsource/ai';

const r = (window.__r = { text: '', error: null, busy: false });
const fetchClient = managedFetch({ baseMs: 100, maxMs: 500 });
window.app = {
  async send(text) {
    const chat = new ChatClient({
      connection: fetchServerSentEvents('/api/agui', { fetchClient }),
      onMessagesChange: (messages) => {
        const last = messages.filter((m) => m.role === 'assistant').at(-1);
        r.text = last ? last.parts.filter((p) => p.type === 'text').map((p) => p.content).join('') : '';
      },
      onError: (error) => (r.error = String(error && error.message)),
    });
    Object.assign(r, { text: '', error: null, busy: true });
    try {
      await chat.sendMessage(text);
    } catch (error) {
      r.error = String(error && error.message);
    }
    r.busy = false;
  },
};
`;

let chat = null;
before(async () => {
  chat = await startChatPage(APP);
});
after(() => chat?.close());

const words = (text) => text.split(' ').filter(Boolean).length;

inEachEngine("TanStack AI's ChatClient with managedFetch: an answer cut twice, one through a 2 s outage, one sent while the server is down, a 401; every answer whole", async (engine, page) => {
  await page.goto(`${chat.url}/`);
  await appLoaded(page, LIMIT_MS, engine);
  const send = () => page.evaluate('(window.app.send("hi"), 1)');
  const posts = () => chat.requests.filter((q) => q.path === '/api/agui').length;

  let before = posts();
  await send();
  await pageReached(page, (r) => words(r.text) >= 10, LIMIT_MS);
  chat.cut();
  await pageReached(page, (r) => words(r.text) >= 30, LIMIT_MS);
  chat.cut();
  let r = await pageReached(page, (r) => !r.busy && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: cut twice`);
  assert.equal(r.error, null);
  assert.equal(posts() - before, 3, `${engine}: one answer, two resumes`);

  await send();
  await pageReached(page, (r) => words(r.text) >= 10, LIMIT_MS);
  chat.downUntil = Date.now() + 2000;
  chat.cut();
  r = await pageReached(page, (r) => !r.busy && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: through a 2 s outage`);
  assert.equal(r.error, null);

  chat.refuse = 3;
  await send();
  r = await pageReached(page, (r) => !r.busy && words(r.text) === WORDS, LIMIT_MS);
  assert.equal(r.text, expected, `${engine}: sent while the server was down`);

  chat.unauthorized = true;
  before = posts();
  await send();
  r = await pageReached(page, (r) => !r.busy, LIMIT_MS);
  chat.unauthorized = false;
  assert.match(String(r.error), /401/, `${engine}: the 401 is an error`);
  assert.equal(posts() - before, 1, `${engine}: a 401 is not retried`);
});
