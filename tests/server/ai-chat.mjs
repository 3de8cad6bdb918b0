// A chat server as an app on the AI SDK writes one (issue 53), for the node and page tests: `streamText` over
// the SDK's own mock model (MockLanguageModelV4 from `ai/test`), its UI message stream served through
// managed-eventsource/server's createResumableStreams (memory, or a Redis store shared by several nodes):
//   POST /api/chat              start an answer (or resume one: Last-Event-ID)
//   GET  /api/chat/:id/stream   the resume route useChat calls (Last-Event-ID from ManagedChatTransport's storage)
//   POST /api/chat/:id/stop     cancel the producer, { streamId }
//   POST /api/agui              TanStack AI's wire (AG-UI events), resumable, for its ChatClient
//   POST /api/native            the SDK's own recipe (toUIMessageStreamResponse), not resumable: a baseline
// The model answers `words` tokens `w1 w2 ...`, one every `paceMs`, and honours the abort signal. The test
// drives faults through the returned control: cut every answer's connection, refuse or 401 requests, stop.
import http from 'node:http';
import { streamText, convertToModelMessages } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } };

/** The mock model: `words` text deltas, one every `paceMs` (the test may change it), stopping at the abort. */
export function pacedModel(control) {
  return new MockLanguageModelV4({
    doStream: async ({ abortSignal }) => {
      let i = 0;
      const stream = new ReadableStream({
        start(c) {
          c.enqueue({ type: 'stream-start', warnings: [] });
          c.enqueue({ type: 'text-start', id: 't' });
        },
        async pull(c) {
          if (i >= control.words) {
            c.enqueue({ type: 'text-end', id: 't' });
            c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { ...usage, outputTokens: { ...usage.outputTokens, total: i, text: i } } });
            return c.close();
          }
          await new Promise((resolve) => setTimeout(resolve, control.paceMs));
          if (abortSignal?.aborted) {
            control.aborted++;
            return c.error(abortSignal.reason);
          }
          i++;
          control.produced++;
          c.enqueue({ type: 'text-delta', id: 't', delta: `w${i} ` });
        },
      });
      return { stream };
    },
  });
}

/** `chunks`, throwing (as a model provider that goes away) after `n` of them. */
async function* failing(chunks, n) {
  for await (const chunk of chunks) {
    if (n-- === 0) throw new Error('the model provider went away (on purpose)');
    yield chunk;
  }
}

/**
 * Starts the chat server on 127.0.0.1 with `streams` (a createResumableStreams). Resolves to its control:
 * `url`, `requests` ({ method, path, lastEventId, body }), `cut()` (drops every answer's connection now),
 * `refuse` (a count of requests to refuse by closing the socket), `downUntil` (refuse every request until that time, ms), `unauthorized` (answer 401 while set),
 * `failAfter` (answers started while it is a number throw after that many chunks), `statuses` (the next
 * requests' answers, one status each, before anything else),
 * `words`, `paceMs`, `produced`, `aborted`, `close()`.
 */
export async function startChatServer(streams, { words = 50, paceMs = 10, serveFile = () => false, uiMessageChunks } = {}) {
  const control = { words, paceMs, produced: 0, aborted: 0, requests: [], refuse: 0, unauthorized: false, failAfter: null, downUntil: 0, statuses: [], live: new Set() };
  const model = pacedModel(control);
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (serveFile(req, res, url) !== false) return;
    let body = '';
    for await (const part of req) body += part;
    control.requests.push({ method: req.method, path: url.pathname, search: url.search, headers: req.headers, lastEventId: req.headers['last-event-id'] ?? null, body });
    const status = control.statuses.shift();
    if (status) return res.writeHead(status, { 'Content-Type': 'text/plain' }).end(`answered ${status} on purpose`);
    if (control.refuse > 0 || Date.now() < control.downUntil) {
      control.refuse = Math.max(0, control.refuse - 1);
      return req.socket.destroy();
    }
    if (control.unauthorized) return res.writeHead(401, { 'Content-Type': 'text/plain' }).end('sign in');
    res.shouldKeepAlive = false; // a cut is a closed socket
    control.live.add(res);
    res.on('close', () => control.live.delete(res));
    if (req.method === 'POST' && url.pathname === '/api/chat') {
      const { messages } = body ? JSON.parse(body) : { messages: [] };
      const failAfter = control.failAfter;
      return streams.serve(req, res, async ({ signal }) => {
        const result = streamText({ model, messages: await convertToModelMessages(messages), abortSignal: signal });
        const chunks = uiMessageChunks(result.toUIMessageStream());
        return failAfter == null ? chunks : failing(chunks, failAfter);
      });
    }
    if (req.method === 'POST' && url.pathname === '/api/agui') {
      // TanStack AI's wire (AG-UI events as JSON, then [DONE]), the same paced answer, written by hand: its
      // server needs a provider adapter, and a client reads only these events.
      const { threadId, runId } = JSON.parse(body);
      return streams.serve(req, res, async function* ({ signal }) {
        const at = () => Date.now();
        yield JSON.stringify({ type: 'RUN_STARTED', threadId, runId, timestamp: at() });
        yield JSON.stringify({ type: 'TEXT_MESSAGE_START', messageId: `m-${runId}`, role: 'assistant', timestamp: at() });
        for (let i = 1; i <= control.words; i++) {
          await new Promise((resolve) => setTimeout(resolve, control.paceMs));
          if (signal.aborted) return void control.aborted++;
          control.produced++;
          yield JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${runId}`, delta: `w${i} `, timestamp: at() });
        }
        yield JSON.stringify({ type: 'TEXT_MESSAGE_END', messageId: `m-${runId}`, timestamp: at() });
        yield JSON.stringify({ type: 'RUN_FINISHED', threadId, runId, finishReason: 'stop', timestamp: at() });
        yield '[DONE]';
      });
    }
    if (req.method === 'POST' && url.pathname === '/api/native') {
      // The SDK's own server recipe, with no resumable streams (the baseline DefaultChatTransport reads).
      const { messages } = JSON.parse(body);
      const response = streamText({ model, messages: await convertToModelMessages(messages) }).toUIMessageStreamResponse();
      res.writeHead(response.status, Object.fromEntries(response.headers));
      try {
        for await (const bytes of response.body) if (!res.destroyed) res.write(bytes);
      } catch {}
      return res.end();
    }
    let m = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (req.method === 'GET' && m) return streams.serve(req, res, null);
    m = /^\/api\/chat\/([^/]+)\/stop$/.exec(url.pathname);
    if (req.method === 'POST' && m) {
      const told = await streams.cancel(JSON.parse(body).streamId).catch(() => false);
      control.stops = (control.stops ?? 0) + 1;
      return res.writeHead(told ? 204 : 404).end();
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  control.url = `http://127.0.0.1:${server.address().port}`;
  control.cut = () => {
    for (const res of control.live) res.destroy();
  };
  control.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return control;
}

/**
 * A page test's chat site: `app` (an ES module's source) bundled by esbuild with the package's pkg/ai.js as
 * managed-eventsource/ai, served at /app.js from a page at /, beside the chat server's routes, over
 * createResumableStreams from pkg/server.js. Resolves to the chat server's control.
 */
export async function startChatPage(app, { paceMs = 20 } = {}) {
  const root = new URL('../../', import.meta.url).pathname;
  const { build } = await import('esbuild');
  const out = await build({
    stdin: { contents: app, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    write: false,
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: { 'managed-eventsource/ai': `${root}pkg/ai.js` },
    logLevel: 'error',
  });
  const bundle = out.outputFiles[0].text;
  const { createResumableStreams, uiMessageChunks } = await import(`${root}pkg/server.js`);
  return startChatServer(createResumableStreams({ onerror: () => {} }), {
    uiMessageChunks,
    paceMs,
    serveFile(req, res, url) {
      if (url.pathname === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><meta charset="utf-8"><title>chat</title><script type="module" src="/app.js"></script>');
      if (url.pathname === '/app.js') return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
      return false;
    },
  });
}

/** Waits until the page's app has loaded (window.app), at most `limitMs`. */
export async function appLoaded(page, limitMs, what) {
  const t0 = Date.now();
  while (!(await page.evaluate('!!window.app'))) {
    if (Date.now() - t0 > limitMs) throw new Error(`${what}: the app did not load in ${limitMs} ms`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}
