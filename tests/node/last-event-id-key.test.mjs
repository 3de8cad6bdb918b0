// The lastEventIdKey option's checks and its first connection, in Node with the package's fetch entry (the
// page test, tests/page/reload.test.mjs, covers a real reload in the three engines): a bad key or storage is
// a TypeError naming it; the EventSource transport needs lastEventIdParam; an id kept in the storage is where
// the first request resumes from, and the end of the stream forgets it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';

const fetchEntry = new URL('../../pkg/fetch.js', import.meta.url);
const skip = existsSync(fetchEntry) ? false : 'pkg/fetch.js is not built (npm test builds it before this step)';

const storage = () => {
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, v), removeItem: (k) => m.delete(k), map: m };
};

test('lastEventIdKey: a bad key or storage is a TypeError naming it; the EventSource transport needs lastEventIdParam', { skip }, async () => {
  const { ManagedEventSource } = await import(fetchEntry);
  const url = 'http://127.0.0.1:9/feed';
  for (const [options, name] of [
    [{ transport: 'fetch', lastEventIdKey: '' }, /option lastEventIdKey must be a non-empty string/],
    [{ transport: 'fetch', lastEventIdKey: 5 }, /option lastEventIdKey must be a non-empty string/],
    [{ transport: 'fetch', lastEventIdKey: 'k' }, /option lastEventIdStorage must be a Storage/], // Node has no sessionStorage
    [{ transport: 'fetch', lastEventIdKey: 'k', lastEventIdStorage: {} }, /option lastEventIdStorage must be a Storage/],
    [{ lastEventIdKey: 'k', lastEventIdStorage: storage() }, /option lastEventIdKey needs lastEventIdParam on the EventSource transport/],
  ]) {
    // Node has no EventSource: a stand-in, so that the EventSource transport's own check is reached.
    globalThis.EventSource ??= class {};
    try {
      assert.throws(() => new ManagedEventSource(url, options), (e) => e instanceof TypeError && name.test(e.message), JSON.stringify(options));
    } finally {
      if (globalThis.EventSource.name === '') delete globalThis.EventSource;
    }
  }
});

test('lastEventIdKey: the first request resumes from the kept id (Last-Event-ID); the stream ending (204) forgets it', { skip }, async () => {
  const { ManagedEventSource } = await import(fetchEntry);
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers['last-event-id'] ?? null);
    if (seen.length === 1) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      return res.end('id: 43\ndata: after 42\n\n');
    }
    res.writeHead(204).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const kept = storage();
  kept.setItem('feed', '42');
  const source = new ManagedEventSource(`http://127.0.0.1:${server.address().port}/feed`, { transport: 'fetch', lastEventIdKey: 'feed', lastEventIdStorage: kept, baseMs: 10, maxMs: 20 });
  try {
    const got = [];
    source.onmessage = (e) => got.push(e.data);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out: ${JSON.stringify({ seen, status: source.status })}`)), 5000);
      source.onstatus = (s) => s === 'closed' && (clearTimeout(timer), resolve());
    });
    assert.deepEqual(seen, ['42', '43'], 'the first request resumed from the kept id, the next from the one received');
    assert.deepEqual(got, ['after 42']);
    await new Promise((r) => setTimeout(r, 0)); // forgotten after the task that closed it
    assert.equal(kept.map.size, 0, 'a finished stream is forgotten');
  } finally {
    source.close();
    server.close();
  }
});

test('lastEventIdKey: a client closed and made again with the same key in one task (React StrictMode) resumes from the kept id, which stays kept', { skip }, async () => {
  const { ManagedEventSource } = await import(fetchEntry);
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers['last-event-id'] ?? null);
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(': open\n\n');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const kept = storage();
  kept.setItem('feed', '17');
  const url = `http://127.0.0.1:${server.address().port}/feed`;
  const options = { transport: 'fetch', lastEventIdKey: 'feed', lastEventIdStorage: kept };
  new ManagedEventSource(url, options).close(); // StrictMode's first mount, cleaned up at once
  const second = new ManagedEventSource(url, options);
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out: ${JSON.stringify(seen)}`)), 5000);
      second.onopen = () => (clearTimeout(timer), resolve());
    });
    assert.equal(seen.at(-1), '17');
    assert.equal(kept.getItem('feed'), '17', 'still kept after the task');
    second.close();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(kept.getItem('feed'), null, 'a close with no client after it forgets it');
  } finally {
    second.close();
    server.closeAllConnections();
    server.close();
  }
});
