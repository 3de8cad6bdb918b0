// What managed-eventsource/angular's types accept, under --strict with skipLibCheck false, against
// @angular/core's own types (TypeScript 6.0, as Angular 22 asks).
import { Component, Injector, computed, signal, type Signal } from '@angular/core';
import { ManagedEventSource } from 'managed-eventsource/fetch';
import { sseResource, type SseResource, type SseResourceOptions } from 'managed-eventsource/angular';
import type { Status } from 'managed-eventsource';

interface Quote {
  symbol: string;
  price: number;
}

@Component({ selector: 'quotes', template: `{{ quotes.status() }} {{ quotes.value()?.price }}` })
export class Quotes {
  readonly symbol = signal('ACME');
  // Seed 003's shape: a URL function that reads signals, and its modes.
  readonly quotes: SseResource<Quote> = sseResource<Quote>(() => `/api/quotes/${this.symbol()}`, {
    reconnect: { initialDelayMs: 100, maxDelayMs: 300, factor: 2, maxAttempts: 5, jitter: 'none' },
    lastEventIdParam: 'lastEventId',
    until: (ev) => ev.data === '[DONE]',
  });
  readonly browser = sseResource<Quote>(() => '/api/feed', { reconnect: 'browser' });
  readonly once = sseResource<Quote>('/api/once', { reconnect: false, maxAttempts: 3 });
  readonly price: Signal<number | undefined> = computed(() => this.quotes.value()?.price);
  readonly status: Signal<Status> = this.quotes.status;
  readonly attempt: Signal<number> = this.quotes.attempt;
  readonly error: Signal<unknown> = this.quotes.error;
  // A null URL: no connection.
  readonly idle = sseResource(() => (this.symbol() ? null : '/api/idle'));
}

export function options(injector: Injector): SseResource<string> {
  // The package's own options pass through, the fetch transport's too, with its class.
  const o: SseResourceOptions<string> = {
    injector,
    client: ManagedEventSource,
    transport: 'fetch',
    headers: async () => ({ Authorization: 'Bearer t' }),
    method: 'POST',
    body: () => JSON.stringify({ after: 1 }),
    share: 'feed',
    jitter: 'equal',
    baseMs: 500,
    maxMs: 10_000,
    event: 'update',
    parse: (data, ev) => `${ev.lastEventId}:${data}`,
    onMessage: (ev) => console.log(ev.data.length),
  };
  const feed = sseResource(new URL('https://example.test/feed'), o);
  feed.reconnectNow();
  feed.close();
  return feed;
}
