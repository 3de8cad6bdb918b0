// The testing entry under Vitest with jsdom, as an app's own tests use it: the scripted server as the
// client's fetch, and the same script behind MSW's handlers (the client on the global fetch MSW intercepts).
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { ManagedEventSource } from 'managed-eventsource/fetch';
import { createVirtualClock, scriptServer } from 'managed-eventsource/testing';
import { outage, playOutage } from './story.cjs';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

test('jsdom: reconnects after a 503, resumes after id 42, stops on a 401 (a page-relative URL)', async () => {
  const r = await playOutage({ ManagedEventSource, createVirtualClock, scriptServer });
  expect(r.statuses).toEqual(['open', 'reconnecting', 'failed']);
  expect(r.requests).toEqual([null, '42', '42'].map((id) => [`${location.origin}/api/feed`, id]));
  expect(r.took).toBeGreaterThanOrEqual(5000);
  expect(r.pending).toBe(0);
});

test('MSW: the same script served by an http.get handler, the client on the global fetch', async () => {
  const clock = createVirtualClock({ seed: 1 });
  const server = outage(scriptServer);
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
