// Types of the classic-script flavour (managed-eventsource.global.js), which defines one global.
import type * as api from './index.js';

declare global {
  const managedEventSource: typeof api & {
    /** Resolves at once to the API; kept for pages written against earlier versions. */
    readonly ready: Promise<typeof api>;
  };
}
export {};
