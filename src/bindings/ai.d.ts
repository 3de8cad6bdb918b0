// Types of managed-eventsource/ai (src/bindings/ai.js): a ChatTransport for the AI SDK's useChat.
import type { ChatTransport, HttpChatTransportInitOptions, UIMessage } from 'ai';
import type { FetchOptions } from 'managed-eventsource/fetch';
import type { Status } from 'managed-eventsource';

/** The client options an answer's stream takes (the ladder, timeouts, trace); the request's own are the transport's. */
export type ChatClientOptions = Omit<FetchOptions, 'transport' | 'method' | 'headers' | 'body' | 'fetch' | 'until' | 'withCredentials' | 'share'>;

export type ManagedChatTransportOptions<UI_MESSAGE extends UIMessage> = HttpChatTransportInitOptions<UI_MESSAGE> &
  ChatClientOptions & {
    /** Where stop() asks the server to cancel the producer: POST with `{ id, streamId }` (JSON) and the
     * request's headers. A URL, a function of the chat id, or false for none. Default `${api}/${chatId}/stop`. */
    stopApi?: string | ((chatId: string) => string) | false;
    /** Where each chat's running stream id is kept, so reconnectToStream (useChat's `resume`, after a reload)
     * asks for it again. Default sessionStorage where there is one; null keeps nothing. */
    storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
    /** The storage key's prefix, `${storageKey}:${chatId}`. Default 'managed-eventsource/ai'. */
    storageKey?: string;
    /** Each answer's client status, as every managed-eventsource client reports it. */
    onStatus?: (status: Status, info: { chatId: string }) => void;
  };

/**
 * The AI SDK's ChatTransport over managed-eventsource's fetch transport: useChat({ transport: new
 * ManagedChatTransport({ api: '/api/chat' }) }). A cut answer resumes from its last chunk on the ladder,
 * each chunk once; an interrupted one errors the stream (status 'error' in useChat) with a message saying
 * so; stop() asks the server to cancel the producer.
 */
export declare class ManagedChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  constructor(options?: ManagedChatTransportOptions<UI_MESSAGE>);
  readonly resumeStreamIsReplay: true;
  sendMessages: ChatTransport<UI_MESSAGE>['sendMessages'];
  reconnectToStream: ChatTransport<UI_MESSAGE>['reconnectToStream'];
  /** Closes every answer streaming now. */
  close(): void;
}

/**
 * A `fetch` for an event stream that survives drops, for fetch-based SSE readers: TanStack AI's
 * `fetchServerSentEvents(url, { fetchClient: managedFetch() })`. Its Response's body is one continuous stream
 * of the server's message events (`id:` and `data:` lines), resumed under it with Last-Event-ID on the ladder;
 * `[DONE]` or a 204 ends it. Takes the client options (the ladder's, timeouts; maxAttempts 8 by default).
 */
export declare function managedFetch(clientOptions?: ChatClientOptions): (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
