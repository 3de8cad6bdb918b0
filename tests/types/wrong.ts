// Wrong usages: each line must be rejected by the types (tsc fails on an unused @ts-expect-error).
import { ManagedEventSource, createManagedStream, prepare } from 'managed-eventsource';

const es = new ManagedEventSource('/feed');
// @ts-expect-error: no such jitter
new ManagedEventSource('/feed', { jitter: 'wild' });
// @ts-expect-error: baseMs is a number
new ManagedEventSource('/feed', { baseMs: '100' });
// @ts-expect-error: reconnect takes 'backoff', 'browser' or a boolean
new ManagedEventSource('/feed', { reconnect: 'never' });
// @ts-expect-error: a URL, a string or a function
new ManagedEventSource(42);
// @ts-expect-error: the URL function returns a URL
new ManagedEventSource(() => 42);
// @ts-expect-error: readyState is read-only
es.readyState = 1;
// @ts-expect-error: status is one of five names
const s: 'live' = es.status;
// @ts-expect-error: open events are not MessageEvents
es.addEventListener('open', (ev: MessageEvent) => ev.data);
// @ts-expect-error: onretry receives { attempt, delayMs }
es.onretry = (info: { wait: number }) => info.wait;
// @ts-expect-error: no such member
es.reconnect();
// @ts-expect-error: handlers must be functions
createManagedStream('/feed', { onOpen: 5 });
// @ts-expect-error: no such handler
createManagedStream('/feed', { onOpn: () => {} });
// @ts-expect-error: onGiveUp receives a number
createManagedStream('/feed', { onGiveUp: (info: { attempts: number }) => info });
// @ts-expect-error: probe is a boolean or a URL
new ManagedEventSource('/feed', { probe: 5 });
// @ts-expect-error: until is a predicate
new ManagedEventSource('/feed', { until: 'done' });
// @ts-expect-error: CONNECTING is a constant
ManagedEventSource.CONNECTING = 1;
void s;

import { createGate as gateOf } from 'managed-eventsource/server';
// @ts-expect-error ratePerSec is required
gateOf({ burst: 10 });
// @ts-expect-error pace is a boolean
gateOf({ ratePerSec: 1, pace: 'yes' });

import { ManagedEventSource as FetchSource } from 'managed-eventsource/fetch';
// @ts-expect-error: transport is 'eventsource' or 'fetch'
new FetchSource('/feed', { transport: 'websocket' });
// @ts-expect-error: headers are an object or a function
new FetchSource('/feed', { transport: 'fetch', headers: 5 });
// @ts-expect-error: fetch is a function
new FetchSource('/feed', { transport: 'fetch', fetch: 'fetch' });
// @ts-expect-error: the main entry has no fetch options
new ManagedEventSource('/feed', { headers: { A: '1' } });
// @ts-expect-error: prepare takes no argument
prepare('/feed');
// @ts-expect-error: signal is an AbortSignal
new ManagedEventSource('/feed', { signal: new AbortController() });
// @ts-expect-error: overflow is 'error' or 'drop-oldest'
es.events('message', { overflow: 'drop-newest' });
// @ts-expect-error: max is a number
es.events('message', { max: '100' });
// @ts-expect-error: dropped is read-only
es.events().dropped = 1;
// @ts-expect-error: trace takes a function
new ManagedEventSource('/feed', { trace: true });
// @ts-expect-error: a wait record has no status
new ManagedEventSource('/feed', { trace: (r) => r.type === 'wait' && r.status });
