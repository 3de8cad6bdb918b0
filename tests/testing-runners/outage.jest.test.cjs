// The testing entry under Jest with jsdom (CommonJS), the scripted server as the client's fetch. (MSW 2.15
// cannot be required by Jest on Node 20: a dependency of it, rettime, ships only as an ES module; Jest
// requires it natively from Node 24.9. outage.vitest.test.js runs the MSW case.)
const { ManagedEventSource } = require('managed-eventsource/fetch');
const { createVirtualClock, scriptServer } = require('managed-eventsource/testing');

const outage = () =>
  scriptServer()
    .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
    .attempt((a) => a.status(503, { retryAfter: 5 }))
    .attempt((a) => a.status(401));

test('jsdom: reconnects after a 503, resumes after id 42, stops on a 401', async () => {
  const clock = createVirtualClock({ seed: 1 });
  const server = outage();
  const feed = new ManagedEventSource('/api/feed', { transport: 'fetch', fetch: server.fetch });
  const statuses = [];
  feed.onstatus = (s) => statuses.push(s);
  const took = await clock.runUntil(() => feed.status === 'failed');
  expect(statuses).toEqual(['open', 'reconnecting', 'failed']);
  expect(server.requests.map((r) => [r.url, r.lastEventId])).toEqual([
    [`${location.origin}/api/feed`, null],
    [`${location.origin}/api/feed`, '42'],
    [`${location.origin}/api/feed`, '42'],
  ]);
  expect(took).toBeGreaterThanOrEqual(5000);
  expect(clock.pending).toBe(0);
  clock.uninstall();
});

test('a client closed from inside its own callback leaves no timer and no request behind', async () => {
  const clock = createVirtualClock();
  const server = scriptServer().attempt((a) => a.open().send({ id: '1', data: 'x' }).stall());
  const feed = new ManagedEventSource('/api/feed', { transport: 'fetch', fetch: server.fetch });
  feed.onmessage = () => feed.close();
  await clock.settle();
  expect(feed.status).toBe('closed');
  expect(clock.pending).toBe(0);
  expect(server.requests[0].aborted).toBe(true);
  clock.uninstall();
});
