// managed-eventsource/svelte's store against Svelte 4's own Readable: tests/page/package.test.mjs compiles
// this with 'svelte/*' mapped to Svelte 4's types (the svelte4 alias), as a Svelte 4 project sees them.
import type { Status } from 'managed-eventsource';
import { managedEventSource } from 'managed-eventsource/svelte';
import type { StreamState } from 'managed-eventsource/svelte';
import { derived, writable, type Readable } from 'svelte/store';

const address = writable<string | null>('/feed');
const store = managedEventSource(address, { baseMs: 500 });
const asReadable: Readable<StreamState> = store;
const statusStore: Readable<Status> = derived(store, ($s) => $s.status);
// @ts-expect-error a store of numbers is no URL store
managedEventSource(writable(5));
void [asReadable, statusStore];
