// Resumable streams started by a request (an LLM completion over POST): the producer runs once, to its end,
// whoever is listening; every chunk is kept with an id `<stream id>:<n>`, so a client that drops (our fetch
// transport sends `Last-Event-ID` and the same POST again) is sent what it missed and then the rest. A
// request whose last id names a stream that is over and fully sent is answered 204: nothing more, which
// ends a managed-eventsource client (and a native EventSource) as `closed`. One whose id names no stream
// held here (never started here, let go after keepMs, or not an id this module issues) is answered 410:
// what it missed cannot be sent, which ends a managed-eventsource client as `failed`, never as finished.
//
// What must stay true:
// - A stream's first event (`event: stream`, id `<stream id>:0`, data the stream id) goes out before any
//   chunk, so a client has an id to resume from as soon as it has anything.
// - Streams live in this process's memory, for `keepMs` after they end: behind a proxy, resumes must reach
//   the node that started the stream (sticky routing).
// - A chunk's frame is built once and shared by every client of the stream.

import { ENCODER, HEADERS, batchedBody, batchedResponse, describe, endBehind, eventName, finite, range, responseGone, wait } from './common.js';
import { frameOf } from './frames.js';

const PREFIX = 'managed-eventsource/server';
const RESUME_ID = /^([0-9a-f]{16}):(0|[1-9]\d{0,8})$/;

function streamId() {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * `serve(req, res, produce)` (node:http, Express) and `response(request, produce)` (Web): with no last id,
 * start `produce()` (an async or sync iterable of strings or `{ event, data }`) as a new stream and send it;
 * with one, resume that stream after it; answer 204 when it is over and fully sent, 410 when no such stream is
 * held here. Options: `keepMs` (how long an ended stream stays
 * resumable, default 5 minutes), `maxEvents` (chunks a stream holds, default 100,000; past it the producer's
 * chunks are dropped and an `error` event says so), `lastEventIdParam` (default 'lastEventId'),
 * `maxBufferedBytes` (a client this far behind as the next chunk comes is sent no more: its stream ends and
 * it resumes; default 1 MiB), `onerror` (what a producer threw, which the client sees only as an `error`
 * event saying the stream failed on the server).
 */
/** A rule of this module that a stream broke: its message is the client's to read. */
class StreamError extends Error {}

export function createResumableStreams(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: createResumableStreams takes an options object, not ${describe(options)}`);
  const keepMs = wait('keepMs', options.keepMs ?? 300_000); // a timer holds at most 2^31 - 1 ms
  const maxEvents = range('maxEvents', options.maxEvents ?? 100_000, 1);
  const lastEventIdParam = eventName('lastEventIdParam', options.lastEventIdParam ?? 'lastEventId');
  const maxBufferedBytes = finite('maxBufferedBytes', options.maxBufferedBytes ?? 1 << 20, 1);
  const onerrorOption = options.onerror ?? null;
  if (onerrorOption !== null && typeof onerrorOption !== 'function') throw new TypeError(`${PREFIX}: onerror must be a function, not ${describe(onerrorOption)}`);
  /** Tells onerror; what it throws goes nowhere (it would be an unhandled rejection in the producer's loop). */
  const onerror = (error) => {
    try {
      onerrorOption?.(error);
    } catch {}
  };
  const streams = new Map(); // id -> { id, frames, done, listeners }

  function start(produce) {
    if (typeof produce !== 'function') throw new TypeError(`${PREFIX}: produce must be a function returning an iterable of chunks, not ${describe(produce)}`);
    const id = streamId();
    const stream = { id, frames: [frameOf(`${id}:0`, 'stream', id)], done: false, listeners: new Set() };
    streams.set(id, stream);
    // A listener whose write throws (a response that went meanwhile) is dropped alone: the producer, and the
    // other listeners, go on.
    const push = (text) => {
      stream.frames.push(text);
      for (const l of stream.listeners) {
        try {
          l.write(text);
        } catch (error) {
          stream.listeners.delete(l);
          onerror(error);
        }
      }
    };
    (async () => {
      try {
        for await (const chunk of produce()) {
          if (stream.frames.length > maxEvents) throw new StreamError(`the stream passed maxEvents (${maxEvents})`);
          const { event, data } = typeof chunk === 'string' ? { event: undefined, data: chunk } : chunk ?? {};
          if (typeof data !== 'string') throw new StreamError(`a chunk's data must be a string, not ${describe(data)}`);
          if (event !== undefined) eventName('event', event);
          push(frameOf(`${id}:${stream.frames.length}`, event, data));
        }
      } catch (error) {
        // What the producer threw is the server's business (onerror); every browser is told only that it
        // failed. The module's own rules (maxEvents, a chunk's shape) say what they are.
        onerror(error);
        push(frameOf(`${id}:${stream.frames.length}`, 'error', error instanceof StreamError ? error.message : 'the stream failed on the server'));
      } finally {
        stream.done = true;
        for (const l of stream.listeners) {
          try {
            l.end();
          } catch (error) {
            onerror(error);
          }
        }
        stream.listeners.clear();
        const timer = setTimeout(() => streams.delete(id), keepMs);
        timer.unref?.();
      }
    })();
    return stream;
  }

  /** `{ stream, from }` to send; `{ gone }` (the 410's text) when no such stream is held here; null when it
   * is over and the client has all of it. */
  function resume(lastEventId) {
    const m = typeof lastEventId === 'string' ? RESUME_ID.exec(lastEventId) : null;
    if (!m) return { gone: `${PREFIX}: the last event id is not a resumable stream's (<16 hex digits>:<n>)` };
    const stream = streams.get(m[1]);
    if (!stream) return { gone: `${PREFIX}: stream ${m[1]} is not held here (never started here, or let go after keepMs): what it missed cannot be sent` };
    const from = Number(m[2]) + 1;
    if (stream.done && from >= stream.frames.length) return null;
    return { stream, from: Math.min(from, stream.frames.length) };
  }

  function lastEventIdOf(header, url) {
    if (typeof header === 'string' && header !== '') return header;
    const q = typeof url === 'string' ? url.indexOf('?') : -1;
    return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(lastEventIdParam);
  }

  /** What a request asks for: a new stream, a resume, nothing more (null), or one it cannot have (`gone`). */
  function plan(lastEventId, produce) {
    if (lastEventId === null || lastEventId === '') return { stream: start(produce), from: 0 };
    return resume(lastEventId);
  }

  return {
    /** Streams held (running, or ended and still resumable). */
    get size() {
      return streams.size;
    },
    /** Starts `produce` as a stream without a request; returns its id (to resume with `<id>:0`). */
    start: (produce) => start(produce).id,

    serve(req, res, produce) {
      try {
        const p = plan(lastEventIdOf(req.headers?.['last-event-id'], req.url), produce);
        if (!p) {
          res.writeHead(204, { 'Cache-Control': 'no-store' });
          return res.end();
        }
        if (p.gone) {
          res.writeHead(410, { 'Cache-Control': 'no-store', 'Content-Type': 'text/plain; charset=utf-8' });
          return res.end(p.gone);
        }
        res.writeHead(200, HEADERS);
        // What was sent so far in one write, and live chunks once a task (batched): one HTTP chunk each.
        const replay = p.stream.frames.slice(p.from).join('');
        if (replay) res.write(replay);
        if (p.stream.done) return res.end();
        if (responseGone(res)) return; // the client went before serve() was called
        // A client more than maxBufferedBytes behind as the next chunk comes is sent no more: its stream
        // ends after what it was sent, whole, and it resumes from its last id.
        // Sent once a task (batchedResponse); a response whose write throws is dropped alone (as push()).
        const batch = batchedResponse(res, (error) => (p.stream.listeners.delete(listener), onerror(error)));
        const listener = {
          write(text) {
            if (res.writableLength + batch.held() > maxBufferedBytes) {
              p.stream.listeners.delete(listener);
              return endBehind(res);
            }
            batch.add(text);
          },
          end: () => res.end(),
        };
        p.stream.listeners.add(listener);
        res.on('close', () => p.stream.listeners.delete(listener));
      } catch (error) {
        if (!res.headersSent) {
          res.writeHead(error instanceof TypeError ? 400 : 500, { 'Content-Type': 'text/plain' });
          res.end(String(error.message));
        } else res.destroy();
      }
    },

    response(request, produce) {
      try {
        const p = plan(lastEventIdOf(request.headers.get('last-event-id'), request.url), produce);
        if (!p) return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store' } });
        if (p.gone) return new Response(p.gone, { status: 410, headers: { 'Cache-Control': 'no-store', 'Content-Type': 'text/plain; charset=utf-8' } });
        let listener;
        const body = new ReadableStream(
          {
            start(controller) {
              const replay = p.stream.frames.slice(p.from).join(''); // as serve()
              if (replay) controller.enqueue(ENCODER.encode(replay));
              if (p.stream.done) return controller.close();
              const enqueue = batchedBody(controller); // once a task, as serve()
              listener = {
                write(text) {
                  if (controller.desiredSize - enqueue.held() < 0) {
                    p.stream.listeners.delete(listener); // behind: as serve()
                    return enqueue.close();
                  }
                  enqueue(text);
                },
                end: enqueue.close,
              };
              p.stream.listeners.add(listener);
            },
            cancel() {
              p.stream.listeners.delete(listener);
            },
          },
          { highWaterMark: maxBufferedBytes, size: (chunk) => chunk.byteLength },
        );
        return new Response(body, { status: 200, headers: HEADERS });
      } catch (error) {
        return new Response(String(error.message), { status: error instanceof TypeError ? 400 : 500 });
      }
    },
  };
}
