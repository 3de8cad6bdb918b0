// The README's OpenTelemetry recipe, run as it is written with OpenTelemetry's own API and SDK
// (tests/otel, installed by scripts/setup.mjs): the trace option's records of an outage, played on the
// testing entry's virtual clock, become one span per attempt and per wait, timed by the records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'tests', 'otel');
const skip = !existsSync(join(root, 'pkg', 'testing.js'))
  ? 'pkg/ is not built (`npm test` builds it before this step)'
  : !existsSync(join(dir, 'node_modules'))
    ? 'tests/otel is not installed (node scripts/setup.mjs installs it)'
    : false;

test("the README's OpenTelemetry recipe: a span per attempt and per wait, with the status, the cause and the wait's bound", { skip }, async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('<!-- tests/node/otel.test.mjs runs this block as it is -->');
  assert.ok(at >= 0, 'the README marks its OpenTelemetry recipe');
  const block = readme.slice(at).match(/```js\n([^]*?)```/)[1];
  // Beside tests/otel's node_modules, so that '@opentelemetry/api' resolves as in an app.
  const file = join(dir, `recipe-${process.pid}.mjs`);
  writeFileSync(file, block);
  const require = createRequire(join(dir, 'package.json'));
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const { trace } = require('@opentelemetry/api');
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  const { createVirtualClock, scriptServer } = await import(pathToFileURL(join(root, 'pkg', 'testing.js')));
  const { ManagedEventSource } = await import(pathToFileURL(join(root, 'pkg', 'fetch.js')));
  const clock = createVirtualClock({ seed: 1 });
  try {
    const { spansOf } = await import(pathToFileURL(file));
    const server = scriptServer()
      .attempt((a) => a.open().send({ id: '42', data: 'a' }).drop())
      .attempt((a) => a.status(503, { retryAfter: 5 }))
      .attempt((a) => a.status(401));
    const feed = new ManagedEventSource('https://api.example/feed', { transport: 'fetch', fetch: server.fetch, trace: spansOf('feed') });
    await clock.runUntil(() => feed.status === 'failed');
    feed.close();
    const ms = ([s, ns]) => s * 1e3 + ns / 1e6;
    const spans = exporter.getFinishedSpans().map((s) => ({
      name: s.name,
      ms: Math.round(ms(s.endTime) - ms(s.startTime)),
      error: s.status.code === 2,
      events: s.events.map((e) => e.name),
      ...s.attributes,
    }));
    const [first, second] = spans.filter((s) => s.name === 'feed wait').map((s) => s['sse.delay_ms']);
    assert.deepEqual(spans, [
      { name: 'feed attempt', ms: 0, error: true, events: ['open'], 'sse.attempt': 0, 'sse.trigger': 'start', 'url.full': 'https://api.example/feed', 'sse.last_event_id': '', 'sse.cause': 'error' },
      { name: 'feed wait', ms: first, error: false, events: [], 'sse.attempt': 1, 'sse.delay_ms': first, 'sse.ladder_ms': first, 'sse.bound': 'ladder' },
      { name: 'feed attempt', ms: 0, error: true, events: [], 'sse.attempt': 1, 'sse.trigger': 'timer', 'url.full': 'https://api.example/feed', 'sse.last_event_id': '42', 'http.response.status_code': 503, 'sse.cause': 'status' },
      { name: 'feed wait', ms: second, error: false, events: [], 'sse.attempt': 2, 'sse.delay_ms': second, 'sse.ladder_ms': second - 5000, 'sse.bound': 'retryAfter' },
      { name: 'feed attempt', ms: 0, error: true, events: [], 'sse.attempt': 2, 'sse.trigger': 'timer', 'url.full': 'https://api.example/feed', 'sse.last_event_id': '42', 'http.response.status_code': 401, 'sse.cause': 'status' },
    ]);
    assert.match(exporter.getFinishedSpans()[2].status.message, /503/, "the span's status says what the transport saw");
  } finally {
    clock.uninstall();
    trace.disable();
    rmSync(file, { force: true });
  }
});
