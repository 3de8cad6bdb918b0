// The testing entry under Vitest with jsdom, as an app's own tests use it: the scripted server as the
// client's fetch, and the same script behind MSW's handlers (the client on the global fetch MSW intercepts).
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { ManagedEventSource } from 'managed-eventsource/fetch';
import { createVirtualClock, scriptServer } from 'managed-eventsource/testing';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

/** A drop after id 42, a 503 with Retry-After, then a 401. */
const outage = () =>
  scriptServer()
    .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
    .attempt((a) => a.status(503, { retryAfter: 5 }))
    .attempt((a) => a.status(401));

test('jsdom: reconnects after a 503, resumes after id 42, stops on a 401 (a page-relative URL)', async () => {
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

test('MSW: the same script served by an http.get handler, the client on the global fetch', async () => {
  const clock = createVirtualClock({ seed: 1 });
  const server = outage();
  msw.use(http.get('/api/feed', ({ request }) => server.respond(request)));
  const feed = new ManagedEventSource('/api/feed', { transport: 'fetch' });
  const got = [];
  feed.onmessage = (e) => got.push([e.data, e.lastEventId]);
  feed.onunauthorized = ({ status }) => got.push(['unauthorized', status]);
  await clock.runUntil(() => feed.status === 'failed');
  expect(got).toEqual([['a', '41'], ['b', '42'], ['unauthorized', 401]]);
  expect(server.requests.map((r) => r.lastEventId)).toEqual([null, '42', '42']);
  clock.uninstall();
});

test('the same seed draws the same waits in every run', async () => {
  const waits = async () => {
    const clock = createVirtualClock({ seed: 42 });
    const server = scriptServer();
    for (let i = 0; i < 13; i++) server.attempt((a) => a.fail());
    const feed = new ManagedEventSource('/api/feed', { transport: 'fetch', fetch: server.fetch, maxAttempts: 12 });
    const delays = [];
    feed.onretry = ({ delayMs }) => delays.push(delayMs);
    await clock.runUntil(() => feed.status === 'failed');
    clock.uninstall();
    return delays;
  };
  const first = await waits();
  expect(first).toHaveLength(12);
  expect(await waits()).toEqual(first);
});
