// The framework bindings' types against each framework's own: React's (@types/react), Vue's, Svelte 5's and
// Solid's. tests/page/package.test.mjs compiles this against the packed package with tsc --strict, skipLibCheck
// false; every @ts-expect-error below must meet an error.
import type { Status } from 'managed-eventsource';
import { ManagedEventSource as FetchSource } from 'managed-eventsource/fetch';
import { useManagedEventSource } from 'managed-eventsource/react';
import type { BindingOptions, StreamState } from 'managed-eventsource/react';
import { useManagedEventSource as useVueStream } from 'managed-eventsource/vue';
import { managedEventSource } from 'managed-eventsource/svelte';
import { createManagedEventSource } from 'managed-eventsource/solid';
import { useCallback, useMemo } from 'react';
import { computed, ref, type Ref } from 'vue';
import { derived, readable, type Readable } from 'svelte/store';
import { createSignal, type Accessor } from 'solid-js';
import { ManagedChatTransport, managedFetch } from 'managed-eventsource/ai';
import type { ChatTransport, UIMessage } from 'ai';

const fetchOptions: BindingOptions = { client: FetchSource, transport: 'fetch', headers: async () => ({ Authorization: 'Bearer x' }), events: ['update'], onMessage: (ev) => void ev.data.length, share: 'feed', baseMs: 500 };

// React: the hook's result is the state and the controls.
export function useReactFeed(url: string | null): string {
  const feed = useManagedEventSource(url, fetchOptions);
  const status: Status = feed.status;
  const data: string | undefined = feed.lastEvent?.data;
  const failed: boolean = feed.error !== null && feed.attempt > 0;
  const state: StreamState = feed;
  const tokened = useCallback(() => `/feed?token=${Math.random()}`, []);
  useManagedEventSource(tokened, { maxAttempts: 5 });
  useManagedEventSource(() => `/rooms/${status}?token=${Math.random()}`, { key: status, maxAttempts: 5 });
  // @ts-expect-error a key is a string or a number
  useManagedEventSource(tokened, { key: { room: 1 } });
  useManagedEventSource(new URL('https://example.com/feed'));
  useManagedEventSource(undefined);
  const fromMemo = useMemo(() => ({ baseMs: 200 }), []);
  useManagedEventSource('/feed', fromMemo).reconnectNow();
  // @ts-expect-error a number is no URL
  useManagedEventSource(5);
  // @ts-expect-error baseMs is a number
  useManagedEventSource('/feed', { baseMs: '5' });
  // @ts-expect-error events is a list of names
  useManagedEventSource('/feed', { events: 'update' });
  // @ts-expect-error client is a class that makes a ManagedEventSource
  useManagedEventSource('/feed', { client: Date });
  // @ts-expect-error the fetch transport needs managed-eventsource/fetch's class as client (the main entry's throws)
  useManagedEventSource('/feed', { transport: 'fetch' });
  // @ts-expect-error headers too
  useManagedEventSource('/feed', { headers: { Authorization: 'Bearer x' } });
  useManagedEventSource('/feed', { transport: 'eventsource', withCredentials: true });
  feed.close();
  return `${status} ${data} ${failed} ${state.status}`;
}

// Vue: refs, the URL a ref, a getter, a computed or a value.
const address = ref<string | null>('/feed');
const vue = useVueStream(address, { events: ['update'] });
const vueStatus: Status = vue.status.value;
const vueAttempt: Readonly<Ref<number>> = vue.attempt;
const vueEvent: MessageEvent<string> | null = vue.lastEvent.value;
useVueStream(() => `/feed/${address.value}`);
useVueStream(computed(() => (address.value ? `/feed/${address.value}` : null)));
useVueStream('/feed').close();
const tokenUrl = () => `/feed?token=${Math.random()}`;
useVueStream(() => tokenUrl);
// @ts-expect-error the fetch transport needs managed-eventsource/fetch's class as client
useVueStream('/feed', { transport: 'fetch' });
// @ts-expect-error the state refs are read-only
vue.status.value = 'open';
// @ts-expect-error a ref of a number is no URL
useVueStream(ref(5));

// Svelte 5: the store is Svelte's own Readable; a URL may be a store too.
const store = managedEventSource('/feed', { lastEventIdParam: 'lastEventId' });
const asReadable: Readable<StreamState> = store;
const statusStore: Readable<Status> = derived(store, ($s) => $s.status);
managedEventSource(readable<string | null>('/feed'));
managedEventSource(() => `/feed?token=${Math.random()}`).reconnectNow();
// @ts-expect-error a store of numbers is no URL store
managedEventSource(readable(5));

// Solid: accessors, the URL an accessor or a value.
const [path] = createSignal<string | null>('/feed');
const solid = createManagedEventSource(path, { reconnect: 'browser' });
const solidStatus: Accessor<Status> = solid.status;
const solidEvent: MessageEvent<string> | null = solid.lastEvent();
createManagedEventSource('/feed').close();
// @ts-expect-error an accessor of a number is no URL
createManagedEventSource(() => 5);

// The AI SDK: a ChatTransport for useChat, with DefaultChatTransport's options and the ladder's.
const chatTransport: ChatTransport<UIMessage> = new ManagedChatTransport({
  api: '/api/chat',
  headers: async () => ({ Authorization: 'Bearer x' }),
  prepareSendMessagesRequest: ({ messages, id }) => ({ body: { id, last: messages.at(-1) } }),
  maxAttempts: 8,
  baseMs: 500,
  storage: null,
  onStatus: (status: Status, { chatId }) => void [status, chatId],
});
// @ts-expect-error stopApi is a URL, a function of the chat id, or false
new ManagedChatTransport({ stopApi: 5 });
// A fetch for TanStack AI's fetchServerSentEvents (its fetchClient), or any fetch-based SSE reader.
const resumingFetch = managedFetch({ maxAttempts: 3, baseMs: 250 });
const answered: Promise<number> = resumingFetch('/api/chat', { method: 'POST', body: '{}' }).then((r) => r.status);

void [vueStatus, vueAttempt, vueEvent, asReadable, statusStore, solidStatus, solidEvent, chatTransport, answered];
