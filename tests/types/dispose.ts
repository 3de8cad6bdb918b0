// `using` with the opt-in types, under a lib that knows Symbol.dispose.
import type {} from 'managed-eventsource/disposable';
import { ManagedEventSource } from 'managed-eventsource';

export function scoped(): void {
  using es = new ManagedEventSource('/feed');
  es.onmessage = (ev) => void ev.data;
}
