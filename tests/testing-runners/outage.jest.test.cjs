// The testing entry under Jest with jsdom (CommonJS), the scripted server as the client's fetch. (MSW 2.15
// cannot be required by Jest on Node 20: a dependency of it, rettime, ships only as an ES module; Jest
// requires it natively from Node 24.9. outage.vitest.test.js runs the MSW case.)
const { ManagedEventSource } = require('managed-eventsource/fetch');
const { createVirtualClock, scriptServer } = require('managed-eventsource/testing');

const { playOutage } = require('./story.cjs');

test('jsdom: reconnects after a 503, resumes after id 42, stops on a 401', async () => {
  const r = await playOutage({ ManagedEventSource, createVirtualClock, scriptServer });
  expect(r.statuses).toEqual(['open', 'reconnecting', 'failed']);
  expect(r.requests).toEqual([null, '42', '42'].map((id) => [`${location.origin}/api/feed`, id]));
  expect(r.took).toBeGreaterThanOrEqual(5000);
  expect(r.pending).toBe(0);
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
