// Every member and option of the package, as a TypeScript user writes them. tests/page/package.test.mjs
// compiles this against the packed package with tsc --strict --noEmit, skipLibCheck false, default lib.
import { ManagedEventSource, createManagedStream, prepare } from 'managed-eventsource';
import type { GiveUpInfo, Jitter, Options, RetryInfo, Status, StreamHandlers } from 'managed-eventsource';

const jitter: Jitter = 'decorrelated';
const options: Options = {
  withCredentials: true,
  reconnect: 'backoff',
  jitter,
  baseMs: 500,
  maxMs: 30_000,
  factor: 2,
  maxAttempts: 10,
  lastEventIdParam: 'lastEventId',
  reconnectOnVisible: true,
  reconnectOnOnline: false,
  retryHintEvent: 'retry-hint',
  maxHintMs: 60_000,
  probe: true,
  stallTimeoutMs: 45_000,
  heartbeatEvent: 'ping',
  until: (ev) => ev.data === 'done',
  minUptimeMs: 10_000,
  connectTimeoutMs: 15_000,
  share: 'prices',
};
const probeElsewhere: Options = { probe: '/api/stream/status' };
const es = new ManagedEventSource('/api/stream', options);
const fromUrl = new ManagedEventSource(new URL('https://example.com/feed'), { reconnect: 'browser' });
const fromFn = new ManagedEventSource(() => `/feed?token=${Math.random()}`, { reconnect: false });
const state: 0 | 1 | 2 = es.readyState;
const open: boolean = es.readyState === ManagedEventSource.OPEN || es.readyState === es.CONNECTING || state === es.CLOSED;
const status: Status = es.status;
const text: string = es.url + es.lastEventId;
const n: number = es.attempt;
const cred: boolean = es.withCredentials;
const holds: boolean = es.leader;
es.onopen = (ev: Event) => void ev.type;
es.onmessage = function (ev) {
  const data: string = ev.data;
  const self: ManagedEventSource = this;
  void data, self, ev.lastEventId;
};
es.onerror = (ev) => void ev.target;
es.onstatus = (s: Status) => void s;
es.onretry = (info: RetryInfo) => void (info.attempt + info.delayMs);
es.ongiveup = (info: GiveUpInfo) => void info.attempts;
es.onunauthorized = ({ status }) => void (status === 401);
es.onmessage = null;
es.addEventListener('open', (ev: Event) => void ev);
es.addEventListener('error', (ev: Event) => void ev);
es.addEventListener('message', (ev: MessageEvent<string>) => void ev.data.length);
es.addEventListener('update', (ev) => void ev.data.length, { once: true, signal: new AbortController().signal });
es.addEventListener('update', { handleEvent: (ev: MessageEvent<string>) => void ev.origin });
es.removeEventListener('update', null);
const dispatched: boolean = es.dispatchEvent(new Event('ping'));
es.reconnectNow();
es.close();
fromUrl.close();
fromFn.close();
const handlers: StreamHandlers = {
  onOpen: ({ attempt }) => void attempt,
  onMessage: (ev) => void ev.data,
  events: { update: (ev) => void ev.lastEventId },
  onRetryScheduled: ({ attempt, wait }) => void (attempt + wait),
  onGiveUp: (attempts: number) => void attempts,
  onStatus: (s) => void s,
  onUnauthorized: ({ status }) => void status,
};
const stop: () => void = createManagedStream('/api/stream', handlers, { baseMs: 1000 });
stop();
void open, status, text, n, cred, dispatched, probeElsewhere, holds;

// managed-eventsource/server
import { createGate, reject, rejectResponse, retryField, heartbeat, broadcastRetry } from 'managed-eventsource/server';
import type { Admission, Gate, GateOptions } from 'managed-eventsource/server';
const gateOptions: GateOptions = { ratePerSec: 50, burst: 100, maxStreams: 10_000, pace: true, spreadMs: 500, minWaitMs: 5000, now: Date.now, random: Math.random };
const gate: Gate = createGate(gateOptions);
const admission: Admission = gate.admit();
if (admission.ok) admission.release();
else {
  const wait: number = admission.retryMs;
  const response: Response = rejectResponse(wait, { hintEvent: 'retry-hint' });
  void response;
}
gate.pause(Date.now() + 10_000);
const counts: number = gate.open + gate.tokens;
const lines: string = retryField(3000, 7000) + heartbeat() + heartbeat('ping');
const written: number = broadcastRetry([{ write: (s: string) => s.length }], 30_000, { spreadMs: 30_000 });
reject({ writeHead: () => undefined, end: () => undefined }, 1000);
void counts, lines, written;

// managed-eventsource/server's event log and resumable streams
import { createEventLog, createMemoryStore, createRedisStore, createResumableStreams, ladderDelay, compareIds } from 'managed-eventsource/server';
import type { EventLog, EventStore, LogConnection, RedisStore, StoreStatus } from 'managed-eventsource/server';
const memory: EventStore = createMemoryStore({ maxEvents: 10_000, maxAgeMs: 3_600_000 });
const log: EventLog = createEventLog({ store: memory, recent: 1000, snapshotMs: 1000, reloadEvent: 'reload', onstatus: (s: StoreStatus) => s });
const appended: Promise<string | null> = log.append({ data: 'hello', event: 'greeting' });
const conn: Promise<LogConnection> = log.connect('1796290297770-0');
conn.then((c) => c.start((text: string) => text.length).close());
const served: Promise<void> = log.serve({ headers: {}, url: '/events' }, {}, { gate, hintEvent: 'retry-hint' });
const web: Promise<Response> = log.response(new Request('https://example.com/events'), { gate });
const redisStore: Promise<EventStore> = createRedisStore({ url: 'redis://127.0.0.1:6379', key: 'events', reconnect: { baseMs: 500, maxMs: 10_000 }, maxPendingAppends: 1000, maxPendingBytes: 1 << 20 });
const backlog: Promise<number> = redisStore.then(() => createRedisStore()).then((s) => s.waiting.appends + s.waiting.bytes + s.maxPendingAppends);
const streams = createResumableStreams({ keepMs: 60_000 });
const answer: Response | Promise<Response> = streams.response(new Request('https://example.com/v1/chat', { method: 'POST' }), async function* ({ signal }) {
  if (!signal.aborted) yield 'token';
  yield { event: 'done', data: '[DONE]' };
});
const fleetStreams = redisStore.then((store) => createResumableStreams({ store: store as RedisStore, leaseMs: 10_000, idleTimeoutMs: 60_000, maxBytes: 1 << 20 }));
const cancelled: Promise<boolean> = fleetStreams.then((s) => s.cancel('0123456789abcdef'));
const order: number = compareIds('1-0', '2-0') + ladderDelay(3, { baseMs: 100 });
void appended, served, web, redisStore, backlog, answer, order, cancelled;

// The fetch entry: the fetch transport's options, per-attempt functions that may be async, and its events.
import { ManagedEventSource as FetchSource, createManagedStream as fetchStream, type FetchErrorEvent, type FetchOpenEvent } from 'managed-eventsource/fetch';
const token = async () => 'abc';
const fs = new FetchSource(async () => new URL('https://example.com/feed'), {
  transport: 'fetch',
  headers: async () => ({ Authorization: `Bearer ${await token()}` }),
  method: 'POST',
  body: () => JSON.stringify({ q: 1 }),
  fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, 'X-Trace': '1' } }),
  maxHintMs: 30000,
});
fs.onopen = (ev) => console.log((ev as FetchOpenEvent).status, (ev as FetchOpenEvent).headers.get('content-type'));
fs.onerror = (ev) => console.log((ev as FetchErrorEvent).status ?? 'network', (ev as FetchErrorEvent).message);
fs.onmessage = (ev) => console.log(ev.data.length, fs.lastEventId);
const stopFetch: () => void = fetchStream('/v1/chat', { onMessage: (ev) => ev.data }, { transport: 'fetch', headers: new Headers({ A: '1' }) });
stopFetch();

// Compiling ahead of the first client.
const prepared: Promise<void> = prepare();
void prepared.then(() => new ManagedEventSource('/later').close());

// Issue 46: the signal option, and async iteration (for await, events(types, options)).
const controller = new AbortController();
const aborting = new ManagedEventSource('/feed', { signal: controller.signal });
const stopAborting: () => void = createManagedStream('/feed', { onMessage: () => {} }, { signal: AbortSignal.timeout(1000) });
async function iterate() {
  for await (const ev of aborting) {
    const data: string = ev.data;
    if (data === '[DONE]') break;
  }
  const updates = aborting.events(['update', 'delete'], { max: 100, overflow: 'drop-oldest' });
  for await (const ev of updates) console.log(ev.type, ev.data, updates.dropped);
  const opens = aborting.events('open');
  const first = await opens.next();
  if (!first.done) {
    const opened: Event = first.value;
    void opened;
  }
  await opens.return();
  const asIterable: AsyncIterable<MessageEvent<string>> = aborting;
  void asIterable;
}
void iterate, stopAborting;

// ManagedWebSocket: signal and iteration.
import { ManagedWebSocket } from 'managed-eventsource/websocket';
async function socketLoop() {
  const socket = new ManagedWebSocket('wss://example.com/live', { signal: controller.signal, queue: 'all' });
  for await (const message of socket) console.log(message.data);
  for await (const closed of socket.events('close')) console.log(closed.code);
}
void socketLoop;
// The subprotocols as the second argument, as WebSocket takes them.
const chat = new ManagedWebSocket('wss://example.com/graphql', ['graphql-transport-ws']);
const single = new ManagedWebSocket('wss://example.com/chat', 'chat');
void chat.protocol, single.protocol;

// The share entry: imported for its effect, or for the same class as the main entry's.
import 'managed-eventsource/share';
import { ManagedEventSource as SharedSource } from 'managed-eventsource/share';
const sharedFeed = new SharedSource('/feed', { share: 'prices' });
const sameClass: typeof ManagedEventSource = SharedSource;
void sharedFeed.leader, sameClass;

// The testing entry: a virtual clock and a scripted server, given to the fetch transport or as EventSource.
import { createVirtualClock, scriptServer } from 'managed-eventsource/testing';
import type { ScriptedRequest, VirtualClock } from 'managed-eventsource/testing';
async function outage(): Promise<ScriptedRequest[]> {
  const clock: VirtualClock = createVirtualClock({ seed: 1 });
  const server = scriptServer()
    .attempt((a) => a.open().comment('hi').send({ id: '42', event: 'tick', data: 'b' }).wait(1000).retry(500).drop())
    .attempt((a) => a.status(503, { retryAfter: 5 }))
    .attempt((a) => a.noContent());
  const scripted = new FetchSource('/feed', { transport: 'fetch', fetch: server.fetch });
  const took: number = await clock.runUntil(() => scripted.status === 'closed', { maxTimers: 100 });
  await clock.advance(took);
  globalThis.EventSource = server.EventSource;
  const respond: (request: Request) => Promise<Response> = server.respond;
  void respond, clock.pending, clock.now, server.left;
  clock.uninstall();
  return [...server.requests];
}
void outage;

// The trace option: its records narrow by type.
import type { TraceRecord } from 'managed-eventsource';
const traced = new ManagedEventSource('/feed', {
  trace(record: TraceRecord) {
    const self: ManagedEventSource = this;
    void self;
    if (record.type === 'wait') void (record.delayMs - record.ladderMs, record.bound === 'retryAfter');
    else if (record.type === 'attempt') void (record.lastEventId.length, record.trigger === 'timer', record.url?.length);
    else if (record.type === 'ended') void (record.cause === 'status' && record.status, record.message);
    void record.time;
  },
});
void traced;
const tracedSocket = new ManagedWebSocket('wss://example.com/live', { trace: (r) => void (r.type === 'giveup' && r.attempts) });
void tracedSocket;
