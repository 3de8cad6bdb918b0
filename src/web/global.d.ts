// Types of the classic-script flavour (managed-eventsource.global.js), which defines one global.
import type * as api from './index.js';

declare global {
  const managedEventSource: typeof api & {
    /** Resolves at once to this same API: nothing needs to wait for it (prepare() compiles the
     * WebAssembly ahead of a page's first client). */
    readonly ready: Promise<typeof api>;
  };
}
export {};
