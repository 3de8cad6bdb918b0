// The fetch transport's event-stream parser (src/web/parse.js), held to the cases src/parse.rs is held to
// (tests/parse.rs): line ends, split CRLF, data joining, fields, ids, retry, the BOM, UTF-8 split and
// invalid, partial events, size; then random streams of the pieces that matter against the specification's
// steps read the plain way, and any chunking against the whole. The fetch suite (tests/browser/fetch.mjs)
// runs the same parser over the network in three engines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamParser } from '../../src/web/parse.js';

const enc = new TextEncoder();
const bytes = (x) => (typeof x === 'string' ? enc.encode(x) : Uint8Array.from(x));

/** What a parser resuming after `lastId` reads from `chunks`: events as [type, data, id], retries as
 * ['retry', ms, '']. */
function run(chunks, lastId = '') {
  const p = new EventStreamParser(lastId);
  const seen = [];
  const sink = { event: (t, d, id) => seen.push([t, d, id]), retry: (ms) => seen.push(['retry', String(ms), '']), stopped: () => false };
  for (const c of chunks) p.feed(bytes(c), sink);
  return seen;
}
const whole = (s) => run([s]);
const ev = (t, d, id = '') => [t, d, id];

test('line ends: CR, LF and CRLF each end one line; a CRLF split across chunks is one line end', () => {
  const two = [ev('message', 'a'), ev('message', 'b')];
  for (const s of ['data: a\n\ndata: b\n\n', 'data: a\r\rdata: b\r\r', 'data: a\r\n\r\ndata: b\r\n\r\n', 'data: a\r\n\ndata: b\r\r\n']) assert.deepEqual(whole(s), two, JSON.stringify(s));
  assert.deepEqual(run(['data: a\r', '\ndata: b\r', '\n\r', '\n']), [ev('message', 'a\nb')]);
  assert.deepEqual(run(['data: a\r', '\r', 'data: b\n\n']), two);
});

test('data lines join with LF, one trailing LF goes; an empty data field is data; no data dispatches nothing', () => {
  assert.deepEqual(whole('data: one\ndata: two\ndata\ndata:  three\n\n'), [ev('message', 'one\ntwo\n\n three')]);
  assert.deepEqual(whole('data\n\n'), [ev('message', '')]);
  assert.deepEqual(whole('data:\n\n'), [ev('message', '')]);
  assert.deepEqual(whole('event: x\n\ndata: y\n\n'), [ev('message', 'y')]);
});

test('fields: one space dropped, comments and unknown fields ignored, names case-sensitive', () => {
  assert.deepEqual(whole('event: tick\ndata: 1\n\n'), [ev('tick', '1')]);
  assert.deepEqual(whole('data:x\n\n'), [ev('message', 'x')]);
  assert.deepEqual(whole('data:  x \n\n'), [ev('message', ' x ')]);
  assert.deepEqual(whole(': hello\nDATA: no\nfoo: bar\ndata: yes\n\n'), [ev('message', 'yes')]);
  assert.deepEqual(whole('data: a: b\n\n'), [ev('message', 'a: b')]);
});

test('ids persist, an empty one resets, one holding NUL is ignored; a resumed id carries until the stream sets one', () => {
  assert.deepEqual(whole('id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\0x\ndata: d\n\n'), [ev('message', 'a', '1'), ev('message', 'b', '1'), ev('message', 'c', ''), ev('message', 'd', '')]);
  assert.deepEqual(run(['data: a\n\nid: 9\ndata: b\n\n'], '42'), [ev('message', 'a', '42'), ev('message', 'b', '9')]);
  // An id with no data: no event, and the next event carries it.
  assert.deepEqual(whole('id: 42\n\ndata: after\n\n'), [ev('message', 'after', '42')]);
});

test('retry: ASCII digits only, in order with the events', () => {
  assert.deepEqual(whole('retry: 2500\nretry: 1.5\nretry: -1\nretry: 12a\nretry:\nretry:  7\nretry: 0\n'), [ev('retry', '2500'), ev('retry', '0')]);
  assert.deepEqual(whole('data: a\n\nretry: 10\ndata: b\n\n'), [ev('message', 'a'), ev('retry', '10'), ev('message', 'b')]);
  assert.equal(Number(whole('retry: 99999999999999999999999\n')[0][1]) > 2 ** 32, true);
});

test('a BOM is dropped once and only at the start, also split across chunks', () => {
  assert.deepEqual(whole('\uFEFFdata: a\n\n'), [ev('message', 'a')]);
  assert.deepEqual(run([[0xef], [0xbb], [0xbf, ...enc.encode('data: a\n\n')]]), [ev('message', 'a')]);
  assert.deepEqual(whole('\uFEFF\uFEFFdata: a\n\n'), []);
  assert.deepEqual(whole('data: \uFEFF\n\n'), [ev('message', '\uFEFF')]);
});

test('UTF-8 split at every byte, and invalid bytes become U+FFFD, one per maximal subpart', () => {
  const text = enc.encode('data: é漢😀\n\n');
  for (let cut = 0; cut <= text.length; cut++) assert.deepEqual(run([text.slice(0, cut), text.slice(cut)]), [ev('message', 'é漢😀')], `cut at ${cut}`);
  const bad = [...enc.encode('data: a'), 0xff, ...enc.encode('b'), 0xe6, 0x97, ...enc.encode('c'), 0xf0, 0x9f, 0x98, 10, 10];
  const expect = [ev('message', 'a\uFFFDb\uFFFDc\uFFFD')];
  assert.deepEqual(run([bad]), expect);
  assert.deepEqual(run(bad.map((b) => [b])), expect, 'byte by byte');
});

test('a partial event at the end is discarded; a stopped sink ends the chunk at the event that stopped it', () => {
  assert.deepEqual(whole('data: a\n\ndata: b\n'), [ev('message', 'a')]);
  assert.deepEqual(whole('data: a\n\ndata: b'), [ev('message', 'a')]);
  const p = new EventStreamParser('');
  const seen = [];
  p.feed(enc.encode('data: 1\n\ndata: 2\n\ndata: 3\n\n'), { event: (t, d) => seen.push(d), retry() {}, stopped: () => seen.length === 2 });
  assert.deepEqual(seen, ['1', '2']);
});

test('a 5 MiB event in 64 KiB chunks, and 100,000 events in 4 KiB chunks', () => {
  const big = enc.encode(`data: ${'x'.repeat(5 << 20)}\n\n`);
  const chunks = [];
  for (let i = 0; i < big.length; i += 65536) chunks.push(big.subarray(i, i + 65536));
  const one = run(chunks);
  assert.equal(one.length, 1);
  assert.equal(one[0][1].length, 5 << 20);
  let many = '';
  for (let i = 1; i <= 100_000; i++) many += `id: ${i}\ndata: ${i}\n\n`;
  const m = enc.encode(many), parts = [];
  for (let i = 0; i < m.length; i += 4096) parts.push(m.subarray(i, i + 4096));
  const seen = run(parts);
  assert.equal(seen.length, 100_000);
  assert.ok(seen.every((e, i) => e[1] === String(i + 1) && e[2] === e[1]));
});

/** The specification's steps the plain way, on the whole stream at once (as tests/parse.rs's reference). */
function reference(u8) {
  let text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(u8);
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const lines = [];
  let line = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\r') {
      if (text[i + 1] === '\n') i++;
      lines.push(line);
      line = '';
    } else if (c === '\n') {
      lines.push(line);
      line = '';
    } else line += c;
  }
  let data = null, type = '', id = '';
  const out = [];
  for (const l of lines) {
    if (l === '') {
      if (data !== null) out.push([type || 'message', data.endsWith('\n') ? data.slice(0, -1) : data, id]);
      data = null;
      type = '';
      continue;
    }
    if (l.startsWith(':')) continue;
    const at = l.indexOf(':');
    const field = at < 0 ? l : l.slice(0, at);
    let value = at < 0 ? '' : l.slice(at + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data = (data ?? '') + value + '\n';
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) out.push(['retry', String(Number(value)), '']);
  }
  return out;
}

/** A seeded stream of the pieces that matter (tests/parse.rs's `stream`). */
function randomStream(next) {
  const pieces = ['data', 'event', 'id', 'retry', ':', ': ', '\n', '\r', '\r\n', '\n\n', '\uFEFF', '\0', [0xff], [0xe6, 0x97], 'é😀'];
  const out = [];
  const n = Math.floor(next() * 60);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(next() * (pieces.length + 2));
    if (k === pieces.length) out.push(...enc.encode(String(Math.floor(next() * 1000))));
    else if (k === pieces.length + 1) out.push(...enc.encode('abc d'.slice(0, 1 + Math.floor(next() * 4))));
    else out.push(...bytes(pieces[k]));
  }
  return Uint8Array.from(out);
}

test('1,000 random streams: the parser agrees with the plain reading, in one chunk, in random chunks and byte by byte', () => {
  let seed = 0x51;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  for (let round = 0; round < 1000; round++) {
    const s = randomStream(next);
    const want = reference(s);
    assert.deepEqual(run([s]), want, `stream ${JSON.stringify([...s])}`);
    const cuts = Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * (s.length + 1))).sort((a, b) => a - b);
    const chunks = [];
    let from = 0;
    for (const c of cuts) {
      chunks.push(s.slice(from, c));
      from = c;
    }
    chunks.push(s.slice(from));
    assert.deepEqual(run(chunks), want, `chunked at ${cuts}: ${JSON.stringify([...s])}`);
    assert.deepEqual(run([...s].map((b) => [b])), want, `byte by byte: ${JSON.stringify([...s])}`);
  }
});
