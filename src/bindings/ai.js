// managed-eventsource/ai: ManagedChatTransport, a ChatTransport for the AI SDK's useChat (`ai` 7 and
// @ai-sdk/react, /vue, /svelte, /angular) over the fetch transport. The AI SDK is not imported: the
// transport hands useChat the UI message stream's chunks (each event's data, as JSON) and is typed against
// `ai`, an optional peer.
//
// What must stay true:
// - One answer, one client (the fetch entry's ManagedEventSource, so one shell a page): an answer cut
//   mid-stream is resumed from its last event id on the ladder, and each chunk reaches useChat once, in
//   order; `[DONE]` ends it as finished (status 'closed'), as does a 204 to a resume.
// - An answer whose events carry no id cannot be resumed: a cut then errors the stream, rather than post
//   the messages again and generate a second answer into the first.
// - An answer that ends 'failed' errors the stream with the client's last error, worded as interrupted once
//   it had opened; useChat then shows it (status 'error'), and the partial message stays.
// - Stop (useChat's stop(), the abort signal) is not a disconnect: the client closes, and the server is
//   asked to cancel the producer (POST stopApi with the stream's id). No client, reader or timer is left
//   after stop, after the end, or after close().
// - With `storage` (sessionStorage by default), the stream's id is kept per chat while it runs, so
//   reconnectToStream (useChat's resume, after a reload or on mount) asks for that stream again from its
//   start (resumeStreamIsReplay), and a server with resumable streams on Redis answers from any node.

import { ManagedEventSource } from 'managed-eventsource/fetch';

const PREFIX = 'managed-eventsource/ai: ';
const DONE = '[DONE]';
/** How long a stop made before the answer's first event waits for it (the stream's id) to ask the cancel. */
const STOP_WAIT_MS = 10_000;
/** How many times a stop is asked of a server that does not take it (see #stop). */
const STOP_ATTEMPTS = 6;

const resolve = async (value) => (typeof value === 'function' ? value() : value);

/** Headers as a plain object: a Headers, an array of pairs, or an object. */
function plain(headers) {
  if (headers == null) return {};
  if (typeof Headers === 'function' && headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return { ...headers };
}

/** `headers` with `name` set to `value` unless it has that header already, in any case. */
function withDefault(headers, name, value) {
  const lower = name.toLowerCase();
  return Object.keys(headers).some((k) => k.toLowerCase() === lower) ? headers : { [name]: value, ...headers };
}

/** `api` with `/{chat id}/{what}` added to its path, before any query or fragment (as the SDK's own). */
function pathOf(api, chatId, what) {
  if (chatId === '.' || chatId === '..') throw new TypeError(PREFIX + 'a chat id must not be "." or "..": it would leave the path of ' + api);
  const cut = api.search(/[?#]/);
  const [path, rest] = cut < 0 ? [api, ''] : [api.slice(0, cut), api.slice(cut)];
  return `${path.replace(/\/+$/, '')}/${encodeURIComponent(chatId)}/${what}${rest}`;
}

/** The first 300 characters of a refusal's body (the server's reason), waiting at most a second for it. */
async function reasonOf(response) {
  let timer;
  try {
    const late = new Promise((resolve) => {
      timer = setTimeout(resolve, 1000, '');
      timer.unref?.();
    });
    return ((await Promise.race([response.clone().text(), late])) ?? '').trim().slice(0, 300);
  } catch {
    return '';
  } finally {
    clearTimeout(timer);
  }
}

/** A resumable stream's id, as createResumableStreams makes them. */
const STREAM_ID = /^[0-9a-f]{16}$/;

/** Whether a refusal is one that asking again will not change (the request itself: a 400, a 413, a 422):
 * any 4xx but 408, 425 and 429, which are the ladder's, as every 5xx is. */
const refusedAsSuch = (status) => status >= 400 && status < 500 && ![408, 425, 429].includes(status);

/** Why a client's `error` event says it failed, without the client's prefix. */
const whyOf = (ev) => ev?.message?.replace(/^managed-eventsource: /, '') ?? 'the connection failed';

/** `fetch` with the request's `credentials` given to every call ('omit' included, which the fetch
 * transport does not name), or as it is when the request has none. */
const withCredentialsOf = (fetch, credentials) => (credentials === undefined ? fetch : (url, init) => fetch(url, { ...init, credentials }));

/** The client options that would change what an answer is, which the transport sets itself. */
const REFUSED = ['share', 'signal', 'until', 'lastEventIdKey', 'lastEventIdStorage', 'transport', 'method', 'withCredentials'];

/** What the AI SDK names an abort: an AbortError, which useChat takes for a stop, not a failure. */
const abortError = (signal) => (signal?.reason instanceof Error ? signal.reason : new DOMException('the answer was stopped', 'AbortError'));

/** The options of DefaultChatTransport (and ours) that are not the client's. */
const OWN = new Set(['api', 'credentials', 'headers', 'body', 'fetch', 'prepareSendMessagesRequest', 'prepareReconnectToStreamRequest', 'stopApi', 'storage', 'storageKey', 'onStatus']);

export class ManagedChatTransport {
  /** useChat replays a resumed answer from its start (reconnectToStream asks for the stream from `:0`). */
  resumeStreamIsReplay = true;
  #options;
  #client;
  /** The answers streaming now: each one's close(). */
  #live = new Set();

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError(PREFIX + 'ManagedChatTransport takes an options object, not ' + (options === null ? 'null' : typeof options));
    const o = { api: '/api/chat', storageKey: 'managed-eventsource/ai', ...options };
    if (typeof o.api !== 'string') throw new TypeError(PREFIX + 'option api must be a string (a URL), not ' + typeof o.api);
    for (const name of ['fetch', 'prepareSendMessagesRequest', 'prepareReconnectToStreamRequest', 'onStatus']) {
      if (o[name] != null && typeof o[name] !== 'function') throw new TypeError(PREFIX + 'option ' + name + ' must be a function, not ' + typeof o[name]);
    }
    if (o.stopApi != null && o.stopApi !== false && typeof o.stopApi !== 'function' && typeof o.stopApi !== 'string') throw new TypeError(PREFIX + 'option stopApi must be a URL string, a function of the chat id, or false');
    if (o.storage === undefined) o.storage = typeof sessionStorage === 'object' ? sessionStorage : null;
    if (o.storage !== null && (typeof o.storage?.getItem !== 'function' || typeof o.storage?.setItem !== 'function' || typeof o.storage?.removeItem !== 'function')) throw new TypeError(PREFIX + 'option storage must be a Storage (getItem, setItem, removeItem) or null');
    for (const name of REFUSED) if (o[name] !== undefined) throw new TypeError(PREFIX + 'option ' + name + ' is the transport\'s own: each answer is one POST, ended by its [DONE], its stop or its failure');
    this.#options = o;
    // Everything else is the client's (the ladder, timeouts, trace): checked by ManagedEventSource itself. An
    // answer that cannot start gives up after 8 attempts unless told otherwise (useChat shows the error).
    this.#client = { maxAttempts: 8, ...Object.fromEntries(Object.entries(options).filter(([name]) => !OWN.has(name))) };
  }

  async sendMessages({ abortSignal, ...options }) {
    const o = this.#options;
    const [body, headers, credentials] = await Promise.all([resolve(o.body), resolve(o.headers), resolve(o.credentials)]);
    const base = { ...plain(headers), ...plain(options.headers) };
    const prepared = await o.prepareSendMessagesRequest?.({
      api: o.api,
      id: options.chatId,
      messages: options.messages,
      body: { ...body, ...options.body },
      headers: base,
      credentials,
      requestMetadata: options.metadata,
      trigger: options.trigger,
      messageId: options.messageId,
    });
    const request = {
      api: prepared?.api ?? o.api,
      method: 'POST',
      headers: withDefault(prepared?.headers !== undefined ? plain(prepared.headers) : base, 'Content-Type', 'application/json'),
      body: JSON.stringify(prepared?.body !== undefined ? prepared.body : { ...body, ...options.body, id: options.chatId, messages: options.messages, trigger: options.trigger, messageId: options.messageId }),
      credentials: prepared?.credentials ?? credentials,
    };
    return this.#answer(options.chatId, request, abortSignal, null);
  }

  async reconnectToStream({ abortSignal, ...options }) {
    const o = this.#options;
    const [body, headers, credentials] = await Promise.all([resolve(o.body), resolve(o.headers), resolve(o.credentials)]);
    const base = { ...plain(headers), ...plain(options.headers) };
    const prepared = await o.prepareReconnectToStreamRequest?.({ api: o.api, id: options.chatId, body: { ...body, ...options.body }, headers: base, credentials, requestMetadata: options.metadata });
    const kept = this.#kept(options.chatId);
    const request = {
      api: prepared?.api ?? pathOf(o.api, options.chatId, 'stream'),
      method: 'GET',
      headers: prepared?.headers !== undefined ? plain(prepared.headers) : base,
      body: undefined,
      credentials: prepared?.credentials ?? credentials,
    };
    // The kept stream from its start: its first event (`:0`) names it, every chunk after it is replayed.
    if (kept) request.headers['Last-Event-ID'] = `${kept}:0`;
    return this.#answer(options.chatId, request, abortSignal, kept);
  }

  /** Closes every answer streaming now (their streams end as stopped, AbortError), keeping what storage
   * holds (a page that goes resumes after its reload); the transport can still be used. */
  close() {
    for (const close of [...this.#live]) close();
  }

  #key = (chatId) => `${this.#options.storageKey}:${chatId}`;

  /** The stream id kept for `chatId`, or null. */
  #kept(chatId) {
    try {
      const id = this.#options.storage?.getItem(this.#key(chatId));
      return typeof id === 'string' && STREAM_ID.test(id) ? id : null;
    } catch {
      return null; // a storage that refuses (private mode, a quota) keeps nothing
    }
  }

  #keep(chatId, streamId) {
    try {
      if (streamId === null) this.#options.storage?.removeItem(this.#key(chatId));
      else this.#options.storage?.setItem(this.#key(chatId), streamId);
    } catch {}
  }

  /**
   * Asks the server to stop stream `streamId` of chat `chatId` (stopApi), without waiting for it. A stop the
   * network or the server could not take (no answer, a 5xx, a 429) is asked again on a jittered ladder
   * (0.5 s doubling, 6 attempts), at once when the browser is back online. Never throws: what building its
   * URL throws is reported.
   */
  #stop(chatId, streamId, request) {
    const o = this.#options;
    if (o.stopApi === false || streamId === null) return;
    let url;
    try {
      url = typeof o.stopApi === 'function' ? o.stopApi(chatId) : o.stopApi ?? pathOf(o.api, chatId, 'stop');
    } catch (error) {
      return void (globalThis.reportError ?? console.error)(error);
    }
    const headers = withDefault(Object.fromEntries(Object.entries(request.headers).filter(([k]) => !/^(last-event-id|content-type)$/i.test(k))), 'Content-Type', 'application/json');
    const init = { method: 'POST', headers, body: JSON.stringify({ id: chatId, streamId }), credentials: request.credentials, keepalive: true };
    (async () => {
      for (let attempt = 1; attempt <= STOP_ATTEMPTS; attempt++) {
        try {
          const r = await (o.fetch ?? globalThis.fetch)(url, init);
          r.body?.cancel?.().catch(() => {});
          if (r.status < 500 && r.status !== 429) return;
        } catch {}
        if (attempt === STOP_ATTEMPTS) return;
        await new Promise((wake) => {
          const timer = setTimeout(done, Math.random() * 500 * 2 ** (attempt - 1));
          function done() {
            clearTimeout(timer);
            globalThis.removeEventListener?.('online', done);
            wake();
          }
          globalThis.addEventListener?.('online', done);
        });
      }
    })();
  }

  /**
   * One answer: a client for `request`, and the ReadableStream of chunks it resolves to once open (null
   * for a 204 to a resume before any chunk: nothing to resume). `streamId` is the stream resumed, if known.
   */
  #answer(chatId, request, abortSignal, streamId) {
    return new Promise((resolveAnswer, rejectAnswer) => {
      if (abortSignal?.aborted) return rejectAnswer(abortError(abortSignal));
      const o = this.#options;
      const resuming = request.method === 'GET';
      let opened = false;
      let over = false;
      let lastError = null;
      /** A stop before the stream's id came: the client stays until the id comes (its first event, at once
       * from our server), to ask for the cancel, and no longer than STOP_WAIT_MS. */
      let stopWhenNamed = null;
      let retried = false; // an attempt of this answer failed (so the one in flight, if any, is a retry)
      let controller;
      const chunks = new ReadableStream({
        start: (c) => void (controller = c),
        cancel: () => end(),
      });
      // Each refusal's reason (its body) is read before the client hears of it, for the error's message.
      let reason = '';
      const fetchOf = async (url, init) => {
        const r = await (o.fetch ?? globalThis.fetch)(url, init);
        reason = r != null && !r.ok && r.status !== 204 && typeof r.clone === 'function' ? await reasonOf(r) : '';
        return r;
      };
      const source = new ManagedEventSource(request.api, {
        ...this.#client,
        transport: 'fetch',
        method: request.method,
        headers: request.headers,
        body: request.body,
        withCredentials: request.credentials === 'include',
        fetch: withCredentialsOf(fetchOf, request.credentials),
        until: (ev) => ev.data === DONE,
      });
      /** Ends this answer once: the client closed (unless a stop waits for its id), the storage entry gone
       * unless kept, the abort listener removed. */
      const end = (keepStream = false) => {
        if (over) return false;
        over = true;
        this.#live.delete(closeNow);
        abortSignal?.removeEventListener('abort', onAbort);
        if (!stopWhenNamed) source.close();
        if (!keepStream) this.#keep(chatId, null);
        return true;
      };
      const fail = (error, keepStream = false) => {
        if (!end(keepStream)) return;
        if (opened) controller.error(error);
        else rejectAnswer(error);
      };
      const failure = (what, ev) => {
        const said = reason && ev?.status ? ` (${reason})` : '';
        const status = ev?.status ?? 410;
        return Object.assign(new Error(PREFIX + what + (ev === null ? '' : ': ' + whyOf(ev)) + said), { status, statusCode: status });
      };
      const closeNow = () => fail(abortError(abortSignal), true);
      const onAbort = () => {
        if (streamId !== null) this.#stop(chatId, streamId, request);
        else if (opened || (source.status === 'connecting' && !retried)) {
          // Its request reached the server (it opened), or may have (the first attempt, in flight): its first
          // event names the stream, to cancel. A retry is never made for it (see onerror).
          stopWhenNamed = setTimeout(() => ((stopWhenNamed = null), source.close()), STOP_WAIT_MS);
          stopWhenNamed.unref?.(); // in Node, a process is not held for it
        }
        fail(abortError(abortSignal));
      };
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      this.#live.add(closeNow);
      source.addEventListener('stream', (ev) => {
        if (streamId !== null || !STREAM_ID.test(ev.data)) return;
        streamId = ev.data;
        if (stopWhenNamed) {
          clearTimeout(stopWhenNamed);
          stopWhenNamed = null;
          source.close();
          this.#stop(chatId, streamId, request);
        } else if (!over) this.#keep(chatId, streamId);
      });
      source.onopen = () => {
        if (opened || over) return;
        opened = true;
        resolveAnswer(chunks);
      };
      source.onmessage = (ev) => {
        if (over || ev.data === DONE) return;
        let chunk;
        try {
          chunk = JSON.parse(ev.data);
        } catch {
          return fail(new TypeError(PREFIX + 'an event of the answer is not a UI message chunk (JSON): ' + JSON.stringify(ev.data.slice(0, 80))));
        }
        controller.enqueue(chunk);
      };
      source.onerror = (ev) => {
        if (ev instanceof MessageEvent) return; // a server's own `error` event is not a failure
        retried = true;
        if (stopWhenNamed) {
          // Stopped, and this attempt failed before naming its stream: nothing started that it could cancel.
          clearTimeout(stopWhenNamed);
          stopWhenNamed = null;
          return source.close();
        }
        if (over) return;
        lastError = ev;
        const status = ev.status;
        // A refusal that asking again will not change ends it now, as DefaultChatTransport's would.
        if (refusedAsSuch(status)) {
          if (status === 410 && (opened || resuming)) fail(failure('the answer was interrupted (410: ' + (reason || 'the server can no longer resume it') + ')', null));
          else fail(failure(opened ? 'the answer was interrupted' : 'the answer could not be fetched', ev));
        } else if (opened && source.lastEventId === '' && streamId === null) {
          // Cut after it opened, with no id to resume from: posting again would start a second answer.
          fail(failure('the answer was interrupted, and its events carry no id to resume from (serve it with createResumableStreams)', ev));
        }
      };
      const report = (status) => {
        try {
          o.onStatus?.(status, { chatId });
        } catch (error) {
          (globalThis.reportError ?? console.error)(error);
        }
        if (over) return;
        if (status === 'closed') {
          // [DONE], or a 204. Before anything, a 204 to a resume is nothing to resume; to a new message, no
          // answer at all (an error, as DefaultChatTransport's empty body is).
          if (!opened && !resuming) return fail(Object.assign(new Error(PREFIX + 'the server answered 204 to the message: no answer came'), { status: 204 }));
          if (!end()) return;
          if (opened) controller.close();
          else resolveAnswer(null);
        } else if (status === 'failed') {
          // Its attempts ran out mid-answer: the server may still finish it, so its id stays kept, and
          // resumeStream() or a reload asks for it again.
          fail(failure(opened ? 'the answer was interrupted (resumeStream() or a reload may fetch it again)' : 'the answer could not be fetched', lastError), opened && streamId !== null);
        }
      };
      source.onstatus = report;
      report(source.status); // 'connecting', told before the handler was there
    });
  }
}

/**
 * A `fetch` for an event stream that survives drops: `managedFetch(clientOptions)` returns a function that
 * fetch-based SSE readers take as their fetch (TanStack AI's `fetchServerSentEvents(url, { fetchClient })`,
 * the AI SDK's `fetch` option). Its Response is open when the stream opens, and its body is one continuous
 * stream of the server's `message` events (their `id:` and `data:`), whatever the drops under it: the fetch
 * transport resumes each with Last-Event-ID on the ladder. Named events (a resumable stream's `stream`) are
 * not passed on, nor are heartbeats. `[DONE]` (passed on) or a 204 ends the body; a failure after it opened
 * errors it, saying the stream was interrupted.
 *
 * Before it opens: a status refused as such (a 4xx but 408, 425, 429), or a failure after the ladder's
 * attempts (8 unless `maxAttempts` says otherwise), resolves a Response with that status and why (502 with
 * no status); an abort rejects with an AbortError; a 204 resolves an empty 204.
 */
export function managedFetch(clientOptions = {}) {
  if (clientOptions === null || typeof clientOptions !== 'object') throw new TypeError(PREFIX + 'managedFetch takes the client options, an object');
  for (const name of REFUSED) if (clientOptions[name] !== undefined) throw new TypeError(PREFIX + 'option ' + name + ' is managedFetch\'s own: it comes from the request');
  const encoder = new TextEncoder();
  return (input, init = {}) =>
    new Promise((resolveResponse, rejectResponse) => {
      const signal = init.signal ?? (typeof Request === 'function' && input instanceof Request ? input.signal : undefined);
      if (signal?.aborted) return rejectResponse(abortError(signal));
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      let opened = false;
      let over = false;
      let lastError = null;
      let controller;
      const body = new ReadableStream({ start: (c) => void (controller = c), cancel: () => end() });
      const source = new ManagedEventSource(url, {
        maxAttempts: 8,
        ...clientOptions,
        transport: 'fetch',
        method: init.method ?? 'GET',
        headers: plain(init.headers),
        body: init.body,
        withCredentials: init.credentials === 'include',
        fetch: withCredentialsOf((u, i) => globalThis.fetch(u, i), init.credentials),
        until: (ev) => ev.data === DONE,
      });
      const end = () => {
        if (over) return false;
        over = true;
        signal?.removeEventListener('abort', onAbort);
        source.close();
        return true;
      };
      const fail = (status, why) => {
        if (!end()) return;
        if (opened) controller.error(new Error(PREFIX + 'the stream was interrupted: ' + why));
        else resolveResponse(new Response(PREFIX + why, { status: status ?? 502, headers: { 'Content-Type': 'text/plain; charset=utf-8' } }));
      };
      const onAbort = () => {
        if (!end()) return;
        if (opened) controller.error(abortError(signal));
        else rejectResponse(abortError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      source.onopen = () => {
        if (opened || over) return;
        opened = true;
        resolveResponse(new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }));
      };
      source.onmessage = (ev) => {
        if (over) return;
        const id = ev.lastEventId ? `id: ${ev.lastEventId}\n` : '';
        controller.enqueue(encoder.encode(`${id}data: ${ev.data.replace(/\n/g, '\ndata: ')}\n\n`));
      };
      source.onerror = (ev) => {
        if (over || ev instanceof MessageEvent) return; // a server's own `error` event is not a failure
        lastError = ev;
        const status = ev.status;
        if (refusedAsSuch(status)) fail(status, whyOf(ev));
      };
      source.onstatus = (status) => {
        if (over) return;
        if (status === 'closed') {
          if (!end()) return;
          if (opened) controller.close();
          else resolveResponse(new Response(null, { status: 204 }));
        } else if (status === 'failed') fail(lastError?.status, whyOf(lastError));
      };
    });
}
