// Resumable streams started by a request (an LLM completion over POST): the producer runs once, to its end,
// whoever is listening; every chunk is kept with an id `<stream id>:<n>`, so a client that drops (our fetch
// transport sends `Last-Event-ID` and the same POST again) is sent what it missed and then the rest.
//
// A resume is answered by what became of the stream:
// - finished, and the client has all of it: 204 (a managed-eventsource client, and a native EventSource,
//   end `closed`);
// - interrupted (its producer threw, gave nothing for idleTimeoutMs, or its node stopped renewing its lease),
//   and the client has all that was sent: 410, with a line saying which (the client ends `failed`, never as
//   finished); a client that had not all of it is sent the rest first, its stream ends, and its next resume
//   is the 410;
// - not held (never started, let go after keepMs, a node that restarted with a memory-only store, an id not
//   of this module's): 410 too, saying so.
//
// What must stay true:
// - A stream's first event (`event: stream`, id `<stream id>:0`, data the stream id) goes out before any
//   chunk, so a client has an id to resume from as soon as it has anything.
// - A chunk's frame is built once and shared by every client of the stream on its node.
// - Without a store, streams live in this process's memory for `keepMs` after they end: behind a proxy,
//   resumes must reach the node that started the stream (sticky routing). With a store (Redis), every frame
//   is also stored there, in order, with no gap (a push names its index and the store refuses one out of
//   place), so any node serves a resume; the node producing a stream renews a lease on it while it runs.
// - cancel(id) stops the producer wherever it runs (its `signal` aborts); the stream then ends as finished
//   with what it has.

import { ENCODER, HEADERS, batchedBody, batchedResponse, describe, endBehind, eventName, finite, range, responseGone, wait } from './common.js';
import { frameOf } from './frames.js';

const PREFIX = 'managed-eventsource/server';
const RESUME_ID = /^([0-9a-f]{16}):(0|[1-9]\d{0,8})$/;
const RUNNING = 'running';
const DONE = 'done';
const FAILED = 'failed';
/** How long a node waits before it pushes again the frames the store did not take. */
const STORE_RETRY_MS = 1000;

function streamId() {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A rule of this module that a stream broke: its message is the client's to read. */
class StreamError extends Error {}

/** A listener for a client that went before it could listen. */
const NOBODY = { write() {}, end() {} };

/** An answer that is not a stream: its status and text. */
const refusal = (status, text) => ({ status, text });
const interrupted = (id, why) => refusal(410, `${PREFIX}: stream ${id} was interrupted (${why}): it will not finish, and a resume cannot complete it`);

/**
 * `serve(req, res, produce)` (node:http, Express) and `response(request, produce)` (Web): with no last id,
 * start `produce({ id, signal })` (an async or sync iterable of strings or `{ event, data }`, or a Promise of
 * one) as a new
 * stream and send it; with one, resume that stream after it (see above for the answers). Options: `keepMs`
 * (how long an ended stream stays resumable, default 5 minutes), `maxEvents` (chunks a stream holds,
 * default 100,000) and `maxBytes` (its frames' size, default 64 MiB): past either the stream is interrupted
 * and an `error` event says so; `idleTimeoutMs` (a producer that gives nothing for this long is interrupted
 * and its signal aborted; default 0, none), `lastEventIdParam` (default 'lastEventId'), `maxBufferedBytes`
 * (a client this far behind as the next chunk comes is sent no more: its stream ends and it resumes; default
 * 1 MiB), `onerror` (what a producer threw, which the client sees only as an `error` event saying the
 * stream failed on the server; what the store refused), `store` (a Redis store: every node serves every
 * stream) and `leaseMs` (how long a stream whose node stopped renewing stays running for the others; default
 * 10,000).
 */
export function createResumableStreams(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: createResumableStreams takes an options object, not ${describe(options)}`);
  const keepMs = wait('keepMs', options.keepMs ?? 300_000); // a timer holds at most 2^31 - 1 ms
  const maxEvents = range('maxEvents', options.maxEvents ?? 100_000, 1);
  const maxBytes = range('maxBytes', options.maxBytes ?? 64 << 20, 1);
  const idleTimeoutMs = wait('idleTimeoutMs', options.idleTimeoutMs ?? 0);
  const leaseMs = Math.round(finite('leaseMs', options.leaseMs ?? 10_000, 100, 2 ** 31 - 1));
  const lastEventIdParam = eventName('lastEventIdParam', options.lastEventIdParam ?? 'lastEventId');
  const maxBufferedBytes = finite('maxBufferedBytes', options.maxBufferedBytes ?? 1 << 20, 1);
  const onerrorOption = options.onerror ?? null;
  if (onerrorOption !== null && typeof onerrorOption !== 'function') throw new TypeError(`${PREFIX}: onerror must be a function, not ${describe(onerrorOption)}`);
  const store = options.store ?? null;
  if (store !== null && typeof store?.resumable !== 'function') throw new TypeError(`${PREFIX}: store must be a store from createRedisStore (or null: this process's memory), not ${describe(store)}`);
  /** Tells onerror; what it throws goes nowhere (it would be an unhandled rejection in the producer's loop). */
  const onerror = (error) => {
    try {
      onerrorOption?.(error);
    } catch {}
  };
  const shared = store?.resumable({ keepMs, leaseMs }) ?? null;
  /** The streams produced on this node: id -> { id, frames, bytes, state, reason, listeners, controller,
   * stopped, stored } (stored: the store's part, with a store). */
  const streams = new Map();

  // ---- producing -------------------------------------------------------------------------------------------

  function start(produce) {
    if (typeof produce !== 'function') throw new TypeError(`${PREFIX}: produce must be a function returning an iterable of chunks, not ${describe(produce)}`);
    const id = streamId();
    const stream = { id, frames: [], bytes: 0, state: RUNNING, reason: '', listeners: new Set(), controller: new AbortController(), stopped: null, stored: null };
    streams.set(id, stream);
    if (shared) stream.stored = storedPart(stream);
    push(stream, 'stream', id);
    run(stream, produce);
    return stream;
  }

  // A listener whose write throws (a response that went meanwhile) is dropped alone: the producer, and the
  // other listeners, go on.
  function push(stream, event, data) {
    pushFrame(stream, frameOf(`${stream.id}:${stream.frames.length}`, event, data));
  }

  function pushFrame(stream, text) {
    stream.frames.push(text);
    stream.bytes += text.length;
    for (const l of stream.listeners) {
      try {
        l.write(text);
      } catch (error) {
        stream.listeners.delete(l);
        onerror(error);
      }
    }
    stream.stored?.sync();
  }

  /** Stops the producer (`why`: 'cancelled' ends the stream as finished, 'idle' as interrupted). */
  function stop(stream, why) {
    if (stream.state !== RUNNING || stream.stopped) return;
    stream.stopped = why;
    stream.controller.abort(why === 'idle' ? new DOMException(`the producer gave nothing for ${idleTimeoutMs} ms (idleTimeoutMs)`, 'TimeoutError') : new DOMException('the stream was cancelled', 'AbortError'));
  }

  async function run(stream, produce) {
    const signal = stream.controller.signal;
    const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    let iterator = null;
    let idle = null;
    let failure = null;
    try {
      const source = await produce({ id: stream.id, signal }); // an iterable, or a Promise of one
      iterator = source?.[Symbol.asyncIterator]?.() ?? source?.[Symbol.iterator]?.() ?? null;
      if (!iterator) throw new StreamError(`produce must return an iterable of chunks, not ${describe(source)}`);
      for (;;) {
        if (idleTimeoutMs > 0) idle = setTimeout(stop, idleTimeoutMs, stream, 'idle');
        const step = await Promise.race([iterator.next(), aborted]);
        clearTimeout(idle);
        if (signal.aborted || step.done) break;
        const chunk = await step.value;
        if (signal.aborted) break;
        const { event, data } = typeof chunk === 'string' ? { event: undefined, data: chunk } : chunk ?? {};
        if (typeof data !== 'string') throw new StreamError(`a chunk's data must be a string, not ${describe(data)}`);
        if (event !== undefined) eventName('event', event);
        if (stream.frames.length > maxEvents) throw new StreamError(`the stream passed maxEvents (${maxEvents})`);
        const text = frameOf(`${stream.id}:${stream.frames.length}`, event, data);
        if (stream.bytes + text.length > maxBytes) throw new StreamError(`the stream passed maxBytes (${maxBytes})`);
        pushFrame(stream, text);
      }
    } catch (error) {
      failure = error;
    }
    clearTimeout(idle);
    if (signal.aborted) {
      // A producer stopped while it waited is told by its signal and by return(), which an async generator
      // runs only once it is done waiting: not awaited.
      Promise.resolve()
        .then(() => iterator?.return?.())
        .catch(() => {});
    }
    // A stopped producer's own error is the stop's (a cancel is a finish; idle is an interruption); what a
    // producer threw otherwise is the server's business (onerror), and every browser is told only that it
    // failed. The module's own rules (maxEvents, a chunk's shape) say what they are.
    if (stream.stopped) failure = stream.stopped === 'idle' ? new StreamError(signal.reason.message) : null;
    else if (failure) onerror(failure);
    if (failure) push(stream, 'error', failure instanceof StreamError ? failure.message : 'the stream failed on the server');
    finish(stream, failure ? FAILED : DONE, failure ? (failure instanceof StreamError ? failure.message : 'its producer threw') : '');
  }

  function finish(stream, state, reason) {
    stream.state = state;
    stream.reason = reason;
    for (const l of stream.listeners) {
      try {
        l.end();
      } catch (error) {
        onerror(error);
      }
    }
    stream.listeners.clear();
    stream.stored?.sync();
    const timer = setTimeout(() => streams.delete(stream.id), keepMs);
    timer.unref?.();
  }

  /**
   * The store's part of a stream produced here: its frames pushed in order (a push names its index; one the
   * store refuses, or that fails, is pushed again from where the store stands, after STORE_RETRY_MS), then
   * its end; its lease renewed while it runs; a cancel from any node heard.
   */
  function storedPart(stream) {
    let stored = 0; // frames the store has
    let ended = false; // the store has the stream's end
    let busy = false;
    let retry = null;
    let unsubscribe = null;
    shared
      .onCancel(stream.id, () => stop(stream, 'cancelled'))
      .then((off) => (stream.state === RUNNING ? (unsubscribe = off) : off()))
      .catch(onerror);
    // The renewal also finds a stream Redis no longer holds (it restarted without its data): its frames are
    // pushed again from the first, so the other nodes do not take it for one never started.
    const renewal = setInterval(() => {
      if (store.status === 'closed') return void clearInterval(renewal);
      shared.renew(stream.id).then((said) => {
        if (said === 'cancel') stop(stream, 'cancelled');
        else if (said === 'lost' && !ended) {
          stored = 0;
          part.sync();
        }
      }, () => {});
    }, Math.max(50, Math.floor(leaseMs / 3)));
    renewal.unref?.();
    const part = {
      async sync() {
        if (busy || retry || ended) return;
        busy = true;
        try {
          while (stored < stream.frames.length) {
            // Every frame not stored yet in one pipeline; each reply is the list's length after it.
            const from = stored;
            const replies = await Promise.all(stream.frames.slice(from).map((text, i) => shared.push(stream.id, from + i, text)));
            stored = replies.at(-1);
          }
          if (stream.state !== RUNNING) {
            await shared.finish(stream.id, stream.state, stream.reason);
            ended = true;
            clearInterval(renewal);
            unsubscribe?.();
          }
        } catch (error) {
          if (store.status === 'closed') {
            // Nothing will take it now (the node is shutting down): no retry, no renewal, no reference kept.
            ended = true;
            clearInterval(renewal);
            return;
          }
          onerror(error);
          retry = setTimeout(() => ((retry = null), part.sync()), STORE_RETRY_MS);
          retry.unref?.();
        } finally {
          busy = false;
        }
        if (!ended && !retry && (stored < stream.frames.length || stream.state !== RUNNING)) part.sync();
      },
    };
    return part;
  }

  // ---- resuming --------------------------------------------------------------------------------------------

  /** A feed of a stream held here, from frame `from`: `{ replay, ended, listen(listener) -> unlisten }`. */
  function localFeed(stream, from) {
    return {
      replay: stream.frames.slice(from).join(''),
      ended: stream.state !== RUNNING,
      listen(listener) {
        stream.listeners.add(listener);
        return () => stream.listeners.delete(listener);
      },
    };
  }

  /** What a resume of `id` after frame `from - 1` is answered from the store: a feed, null (204), or a
   * refusal. The stream's live frames are heard before it is read, so none falls between. */
  async function storedFeed(id, from) {
    const heard = [];
    let hear = (message) => heard.push(message);
    const unsubscribe = await shared.subscribe(id, (message) => hear(message));
    let r;
    try {
      r = await shared.read(id, from);
    } catch (error) {
      unsubscribe();
      throw error;
    }
    const done = () => {
      if (r.state === DONE) return null;
      return interrupted(id, r.state === FAILED ? r.reason || 'its producer failed' : 'the node producing it stopped renewing its lease');
    };
    if (r.state === null) {
      unsubscribe();
      return refusal(410, `${PREFIX}: stream ${id} is not held (never started, or let go after keepMs): what it missed cannot be sent`);
    }
    const lost = r.state === RUNNING && !r.alive;
    if (r.state !== RUNNING || lost) unsubscribe();
    if (r.frames.length === 0 && (r.state !== RUNNING || lost)) return done();
    let next = from + r.frames.length;
    return {
      replay: r.frames.join(''),
      ended: r.state !== RUNNING || lost,
      listen(listener) {
        let stopped = false;
        let checking = false;
        let again = false;
        const close = () => {
          if (stopped) return;
          stopped = true;
          clearInterval(watch);
          unsubscribe();
          listener.end();
        };
        const write = (texts) => {
          for (const text of texts) {
            if (stopped) return;
            next++;
            listener.write(text);
          }
        };
        // Reads the store from `next`: what pub/sub did not bring (a message lost while the subscriber
        // reconnected), and whether the stream ended or lost its node meanwhile.
        // A stream Redis no longer holds (state null: it restarted without its data) is waited for, a lease
        // long, for its node to push it again; a node that died meanwhile never does.
        let lastHeld = Date.now();
        const check = async () => {
          if (checking) return void (again = true);
          checking = true;
          try {
            do {
              again = false;
              const from = next;
              const s = await shared.read(id, from);
              if (stopped) return;
              // Live frames may have been written while the read was out: only those after them.
              write(s.frames.slice(next - from));
              if (s.state === null && Date.now() - lastHeld < leaseMs) continue;
              if (s.state !== null) lastHeld = Date.now();
              if (s.state !== RUNNING || !s.alive) return close();
            } while (again);
          } catch (error) {
            onerror(error);
          } finally {
            checking = false;
          }
        };
        hear = (message) => {
          if (stopped) return;
          if (message === 'end') return void check();
          const space = message.indexOf(' ');
          const n = Number(message.slice(0, space));
          if (n < next) return; // replayed already
          if (n > next) return void check(); // one was missed
          write([message.slice(space + 1)]);
        };
        const watch = setInterval(check, Math.max(50, Math.floor(leaseMs / 2)));
        watch.unref?.();
        for (const message of heard.splice(0)) hear(message);
        return () => {
          stopped = true;
          clearInterval(watch);
          unsubscribe();
        };
      },
    };
  }

  /** What a request with `lastEventId` (null: none) is answered: a feed, null (204), or a refusal; a Promise
   * of one where the store must be asked. */
  function plan(lastEventId, produce) {
    // No id and no producer: a resume route (GET {api}/{chat id}/stream) with nothing to resume.
    if (lastEventId === null || lastEventId === '') return produce == null ? null : localFeed(start(produce), 0);
    const m = typeof lastEventId === 'string' ? RESUME_ID.exec(lastEventId) : null;
    if (!m) return refusal(410, `${PREFIX}: the last event id is not a resumable stream's (<16 hex digits>:<n>)`);
    const from = Number(m[2]) + 1;
    const stream = streams.get(m[1]);
    if (stream) {
      if (from < stream.frames.length || stream.state === RUNNING) return localFeed(stream, Math.min(from, stream.frames.length));
      return stream.state === DONE ? null : interrupted(stream.id, stream.reason);
    }
    if (!shared) return refusal(410, `${PREFIX}: stream ${m[1]} is not held here (never started here, or let go after keepMs): what it missed cannot be sent`);
    return storedFeed(m[1], from).catch((error) => (onerror(error), refusal(503, `${PREFIX}: the store cannot be read now (${error?.message ?? error}); try again`)));
  }

  function lastEventIdOf(header, url) {
    if (typeof header === 'string' && header !== '') return header;
    const q = typeof url === 'string' ? url.indexOf('?') : -1;
    return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(lastEventIdParam);
  }

  /** Calls `answer` with what `planned` is, at once where it is not a Promise. */
  const then = (planned, answer) => (planned instanceof Promise ? planned.then(answer) : answer(planned));

  const refusalHeaders = (status) => ({ 'Cache-Control': 'no-store', ...(status === 503 ? { 'Retry-After': '2' } : {}), 'Content-Type': 'text/plain; charset=utf-8' });

  function serveFeed(res, feed) {
    if (feed === null) {
      res.writeHead(204, { 'Cache-Control': 'no-store' });
      return res.end();
    }
    if (feed.status) {
      res.writeHead(feed.status, refusalHeaders(feed.status));
      return res.end(feed.text);
    }
    res.writeHead(200, HEADERS);
    // What was sent so far in one write, and live chunks once a task (batched): one HTTP chunk each.
    if (feed.replay) res.write(feed.replay);
    if (feed.ended) return res.end();
    if (responseGone(res)) return; // the client went before serve() was called
    // A client more than maxBufferedBytes behind as the next chunk comes is sent no more: its stream
    // ends after what it was sent, whole, and it resumes from its last id.
    // Sent once a task (batchedResponse); a response whose write throws is dropped alone (as push()).
    const batch = batchedResponse(res, (error) => (unlisten(), onerror(error)));
    const unlisten = feed.listen({
      write(text) {
        if (res.writableLength + batch.held() > maxBufferedBytes) {
          unlisten();
          return endBehind(res);
        }
        batch.add(text);
      },
      end: () => res.end(),
    });
    res.on('close', unlisten);
  }

  function feedResponse(feed) {
    if (feed === null) return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store' } });
    if (feed.status) return new Response(feed.text, { status: feed.status, headers: refusalHeaders(feed.status) });
    let unlisten = () => {};
    const body = new ReadableStream(
      {
        start(controller) {
          if (feed.replay) controller.enqueue(ENCODER.encode(feed.replay)); // as serve()
          if (feed.ended) return controller.close();
          const enqueue = batchedBody(controller); // once a task, as serve()
          unlisten = feed.listen({
            write(text) {
              if (controller.desiredSize - enqueue.held() < 0) {
                unlisten(); // behind: as serve()
                return enqueue.close();
              }
              enqueue(text);
            },
            end: enqueue.close,
          });
        },
        cancel() {
          unlisten();
        },
      },
      { highWaterMark: maxBufferedBytes, size: (chunk) => chunk.byteLength },
    );
    return new Response(body, { status: 200, headers: HEADERS });
  }

  const failedResponse = (error) => new Response(String(error.message), { status: error instanceof TypeError ? 400 : 500 });

  return {
    /** Streams produced on this node (running, or ended and still resumable). */
    get size() {
      return streams.size;
    },
    /** Starts `produce` as a stream without a request; returns its id (to resume with `<id>:0`). */
    start: (produce) => start(produce).id,
    /** Stops stream `id`'s producer, on whichever node runs it (through the store): its signal aborts, and
     * the stream ends as finished with what it has. Resolves to whether a running stream was told. */
    async cancel(id) {
      if (typeof id !== 'string' || !/^[0-9a-f]{16}$/.test(id)) throw new TypeError(`${PREFIX}: cancel takes a stream id (16 hex digits), not ${describe(id)}`);
      const stream = streams.get(id);
      if (stream) {
        const running = stream.state === RUNNING && !stream.stopped;
        stop(stream, 'cancelled');
        return running;
      }
      return shared ? shared.cancel(id) : false;
    },

    serve(req, res, produce) {
      const fail = (error) => {
        if (!res.headersSent) {
          res.writeHead(error instanceof TypeError ? 400 : 500, { 'Content-Type': 'text/plain' });
          res.end(String(error.message));
        } else res.destroy();
      };
      try {
        const planned = then(plan(lastEventIdOf(req.headers?.['last-event-id'], req.url), produce), (feed) => {
          if (responseGone(res) && feed?.listen) return feed.ended || feed.listen(NOBODY)(); // gone while the store was asked
          serveFeed(res, feed);
        });
        if (planned instanceof Promise) planned.catch(fail);
      } catch (error) {
        fail(error);
      }
    },

    response(request, produce) {
      try {
        const planned = then(plan(lastEventIdOf(request.headers.get('last-event-id'), request.url), produce), feedResponse);
        return planned instanceof Promise ? planned.catch(failedResponse) : planned;
      } catch (error) {
        return failedResponse(error);
      }
    },
  };
}

/**
 * The AI SDK's UI message stream (`streamText(...).toUIMessageStream()`, or any ReadableStream or async
 * iterable of its chunk objects) as a producer's chunks: each chunk's JSON, then `[DONE]`, as
 * toUIMessageStreamResponse writes them, so useChat reads the stream unchanged.
 */
export async function* uiMessageChunks(stream) {
  if (stream == null || typeof stream[Symbol.asyncIterator] !== 'function') {
    if (typeof stream?.getReader !== 'function') throw new TypeError(`${PREFIX}: uiMessageChunks takes a ReadableStream or an async iterable of UI message chunks, not ${describe(stream)}`);
    const reader = stream.getReader();
    let ended = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if ((ended = done)) break;
        yield JSON.stringify(value);
      }
    } finally {
      // A producer stopped early (cancel, idleTimeoutMs) cancels the stream, and the model call under it.
      if (!ended) reader.cancel().catch(() => {});
    }
  } else for await (const chunk of stream) yield JSON.stringify(chunk);
  yield '[DONE]';
}
