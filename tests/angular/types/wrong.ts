// Wrong usages, each of which TypeScript must reject (tests/page/angular.test.mjs checks that each line
// marked is an error of its own when the directives are taken out).
import { Injector } from '@angular/core';
import { sseResource } from 'managed-eventsource/angular';

declare const injector: Injector;

// @ts-expect-error a URL is a string, a URL or a function
sseResource(42, { injector });
// @ts-expect-error seed 003's modes: no 'never'
sseResource('/a', { injector, reconnect: 'never' });
// @ts-expect-error reconnect: true is not a mode here (the object, 'backoff', 'browser' or false)
sseResource('/a', { injector, reconnect: true });
// @ts-expect-error initialDelayMs is a number
sseResource('/a', { injector, reconnect: { initialDelayMs: '100' } });
// @ts-expect-error parse returns the value's type
sseResource<number>('/a', { injector, parse: (data) => data });
// @ts-expect-error injector is an Angular Injector
sseResource('/a', { injector: {} });
// @ts-expect-error the value signal is read-only
sseResource('/a', { injector }).value.set(1);
// @ts-expect-error status is one of the package's statuses
const s: 'error' = sseResource('/a', { injector }).status();
// @ts-expect-error onMessage hears a MessageEvent<string>
sseResource('/a', { injector, onMessage: (ev: MessageEvent<number>) => ev.data.toFixed() });
// @ts-expect-error a misspelt option
sseResource('/a', { injector, baseMS: 100 });
void s;
// @ts-expect-error the fetch transport needs managed-eventsource/fetch's class as client (the main entry's throws)
sseResource('/a', { injector, transport: 'fetch', headers: { Authorization: 'Bearer t' } });
