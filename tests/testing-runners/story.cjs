// The outage story both runners' tests play (outage.vitest.test.js, outage.jest.test.cjs), given the
// package's exports as the runner loaded them: a drop after id 42, a 503 with Retry-After: 5, then a 401.
/** The script of the story. */
exports.outage = (scriptServer) =>
  scriptServer()
    .attempt((a) => a.open().send({ id: '41', data: 'a' }).send({ id: '42', data: 'b' }).drop())
    .attempt((a) => a.status(503, { retryAfter: 5 }))
    .attempt((a) => a.status(401));

/** Plays it on a virtual clock against a page-relative URL; what the test asserts. */
exports.playOutage = async ({ ManagedEventSource, createVirtualClock, scriptServer }) => {
  const clock = createVirtualClock({ seed: 1 });
  try {
    const server = exports.outage(scriptServer);
    const feed = new ManagedEventSource('/api/feed', { transport: 'fetch', fetch: server.fetch });
    const statuses = [];
    feed.onstatus = (s) => statuses.push(s);
    const took = await clock.runUntil(() => feed.status === 'failed');
    return { statuses, took, requests: server.requests.map((r) => [r.url, r.lastEventId]), pending: clock.pending };
  } finally {
    clock.uninstall();
  }
};
