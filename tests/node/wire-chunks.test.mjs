// What the server module puts on the wire when many events come at once: the events one task delivers go out
// as one write, so one HTTP chunk. node:http frames every res.write as a chunk of its own (corked or not), and
// WebKit hands each chunk to the page as a read of its own: a burst of a thousand appends written one by one
// stalled WebKit's fetch reader under load for about 30 s (tests/page/burst.test.mjs's drop-oldest test took
// 26 s instead of 2, and failed CI at 90 s). Counted here on a raw TCP socket, HTTP chunk by HTTP chunk, for
// the log's serve() and response() and for a resumable stream's resume and live chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { breaksAfterFirstWrite, listen } from './fixtures/http-streams.mjs';
import { server } from './fixtures/redis-stores.mjs';

const { createEventLog, createMemoryStore, createResumableStreams } = server;
const BURST = 1000;

/**
 * Sends GET `path` (with `headers`) over a raw socket and decodes the chunked body as it comes: `chunks` are
 * the HTTP chunks' texts, in order. `until(chunks)` true (or 10 s) ends the read; the socket is closed.
 */
async function rawChunks(url, path, until, headers = {}) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((ok, fail) => socket.once('connect', ok).once('error', fail));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
  let buffer = Buffer.alloc(0);
  let headEnd = -1;
  const chunks = [];
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no end in 10 s: ${chunks.length} chunks`)), 10_000);
      const done = () => (clearTimeout(timer), resolve());
      socket.on('error', reject);
      socket.on('close', done);
      socket.on('data', (data) => {
        buffer = Buffer.concat([buffer, data]);
        if (headEnd < 0) {
          headEnd = buffer.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          assert.match(buffer.subarray(0, headEnd).toString(), /transfer-encoding: chunked/i);
          buffer = buffer.subarray(headEnd + 4);
        }
        for (;;) {
          const line = buffer.indexOf('\r\n');
          if (line < 0) break;
          const size = parseInt(buffer.subarray(0, line).toString(), 16);
          if (buffer.length < line + 2 + size + 2) break;
          if (size === 0) return done();
          chunks.push(buffer.subarray(line + 2, line + 2 + size).toString());
          buffer = buffer.subarray(line + 2 + size + 2);
        }
        if (until(chunks)) done();
      });
    });
  } finally {
    socket.destroy();
  }
  return chunks;
}

/** Events with an id in `text` (the log's heartbeat has none). */
const eventsIn = (text) => (text.match(/^id: /gm) ?? []).length;
const eventCount = (chunks) => chunks.reduce((n, c) => n + eventsIn(c), 0);

/** Appends BURST events in one task (pipelined, as a producer that does not await each one). */
const burst = (log, tag) => Promise.all(Array.from({ length: BURST }, (_, i) => log.append({ data: `${tag}${i}` })));

test(`serve(): ${BURST} appends made in one task reach a client as one HTTP chunk, not ${BURST}`, async () => {
  const log = createEventLog({ store: createMemoryStore() });
  let served;
  const opened = new Promise((r) => (served = r));
  const http = await listen((req, res) => void log.serve(req, res).then(served));
  try {
    const reading = rawChunks(http.url, '/', (chunks) => eventCount(chunks) >= 2 * BURST);
    await opened;
    await burst(log, 'a');
    await new Promise((r) => setTimeout(r, 20));
    await burst(log, 'b');
    const chunks = await reading;
    const carrying = chunks.filter((c) => eventsIn(c) > 0);
    assert.equal(eventCount(chunks), 2 * BURST, 'every event arrived');
    assert.ok(carrying.length <= 4, `${carrying.length} HTTP chunks carried the two bursts of ${BURST} events`);
    assert.match(chunks.join(''), /data: a0\n[^]*data: a999\n[^]*data: b0\n[^]*data: b999\n/, 'in order');
  } finally {
    await log.close();
    await http.close();
  }
});

test('serve(): a handler that ends the response right after its appends still sends their events first (what a task holds goes out before an end or a write by anyone)', async () => {
  const log = createEventLog({ store: createMemoryStore() });
  const http = await listen(async (req, res) => {
    await log.serve(req, res);
    await log.append({ data: 'one' });
    await burst(log, 'a');
    res.write(': the handler writes a comment\n\n');
    await log.append({ data: 'two' });
    res.end();
  });
  try {
    const text = (await rawChunks(http.url, '/', () => false)).join('');
    assert.match(text, /data: one\n[^]*data: a0\n[^]*data: a999\n\n: the handler writes a comment\n\n[^]*data: two\n\n$/);
    assert.equal(eventsIn(text), BURST + 2);
  } finally {
    await log.close();
    await http.close();
  }
});

test(`response(): ${BURST} appends made in one task are one chunk of the Response's body`, async () => {
  const log = createEventLog({ store: createMemoryStore() });
  try {
    const response = await log.response(new Request('http://127.0.0.1/'));
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const first = decoder.decode((await reader.read()).value); // the first line, written at once
    assert.match(first, /^event: heartbeat\n/, 'the heartbeat that opens the stream');
    await burst(log, 'a');
    const chunks = [];
    while (eventCount(chunks) < BURST) chunks.push(decoder.decode((await reader.read()).value));
    assert.ok(chunks.length <= 2, `${chunks.length} chunks carried a burst of ${BURST} events`);
    assert.equal(eventCount(chunks), BURST);
    await reader.cancel();
  } finally {
    await log.close();
  }
});

test(`a resumable stream's resume is one HTTP chunk, and ${BURST} chunks produced in one task are one more`, async () => {
  const streams = createResumableStreams();
  let release;
  const held = new Promise((r) => (release = r));
  async function* produce() {
    for (let i = 0; i < BURST; i++) yield { data: `r${i}` };
    await held;
    for (let i = 0; i < BURST; i++) yield { data: `s${i}` };
  }
  const http = await listen((req, res) => streams.serve(req, res, produce));
  try {
    // The first request starts the producer and reads its first event (the stream's own, naming it) and the
    // first burst; a resume from that first event gets the burst again, as one chunk, then the second burst.
    const first = await rawChunks(http.url, '/', (chunks) => eventCount(chunks) >= BURST + 1);
    const firstId = first.join('').match(/^id: (.*)$/m)[1];
    const resuming = rawChunks(http.url, '/', (chunks) => eventCount(chunks) >= 2 * BURST, { 'Last-Event-ID': firstId });
    await new Promise((r) => setTimeout(r, 50));
    release();
    const resumed = await resuming;
    const carrying = resumed.filter((c) => eventsIn(c) > 0);
    assert.equal(eventCount(resumed), 2 * BURST, 'everything after the first event, once');
    assert.match(resumed.join(''), /data: r0\n[^]*data: r999\n[^]*data: s0\n[^]*data: s999\n/, 'in order');
    assert.ok(carrying.length <= 4, `${carrying.length} HTTP chunks carried a resume of ${BURST} events and ${BURST} live`);
  } finally {
    await http.close();
  }
});

test('serve(): a response whose batched write throws ends that connection alone and goes to onerror, not out of the task that sends', async () => {
  const errors = [];
  const log = createEventLog({ store: createMemoryStore(), onerror: (e) => errors.push(e) });
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.prependListener('uncaughtException', onUncaught);
  try {
    const { res } = breaksAfterFirstWrite();
    await log.serve({ headers: {}, url: '/', on() {}, once() {} }, res);
    assert.equal(log.connections, 1);
    await burst(log, 'a');
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(errors[0]?.message, 'this response cannot be written to any more');
    assert.equal(log.connections, 0, 'the connection was let go');
    assert.equal(res.ended, 1, 'its response was ended');
    await burst(log, 'b');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(errors.length, 1, 'nothing more was written to it');
    assert.deepEqual(uncaught, []);
  } finally {
    process.off('uncaughtException', onUncaught);
    await log.close();
  }
});

test('maxBufferedBytes counts what a task holds: a client that reads nothing is cut at the bound, not sent a whole burst (serve() and response())', async () => {
  const CAP = 64 * 1024;
  const big = 'x'.repeat(1000);
  const burstOf = (log, n) => Promise.all(Array.from({ length: n }, () => log.append({ data: big })));
  // node:http, a raw client that never reads.
  const log = createEventLog({ store: createMemoryStore({ maxEvents: 100_000 }), maxBufferedBytes: CAP });
  let response;
  let served;
  const opened = new Promise((r) => (served = r));
  const http = await listen((req, res) => ((response = res), void log.serve(req, res).then(served)));
  const socket = net.connect(Number(new URL(http.url).port), '127.0.0.1');
  try {
    await new Promise((ok) => socket.once('connect', ok));
    socket.pause();
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await opened;
    await burstOf(log, 20_000); // 20 MB in one task
    await new Promise((r) => setImmediate(r));
    assert.ok(response.writableEnded, 'the client was cut');
    assert.ok(response.writableLength < 4 * CAP, `${response.writableLength} bytes held for a client that reads nothing (bound ${CAP})`);
  } finally {
    socket.destroy();
    await log.close();
    await http.close();
  }
  // A Web Response's body, not read while the burst comes.
  const web = createEventLog({ store: createMemoryStore({ maxEvents: 100_000 }), maxBufferedBytes: CAP });
  try {
    const body = (await web.response(new Request('http://127.0.0.1/'))).body;
    await burstOf(web, 1000);
    await new Promise((r) => setImmediate(r));
    let bytes = 0;
    for await (const chunk of body) bytes += chunk.byteLength; // ends: the client was cut
    assert.ok(bytes < 2 * CAP, `${bytes} bytes queued for a body nobody read (bound ${CAP})`);
  } finally {
    await web.close();
  }
});
