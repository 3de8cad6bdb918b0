// `using es = new ManagedEventSource(...)` closes the stream at the end of the block. The main types leave
// `[Symbol.dispose]` out, because with a `lib` older than ES2025 (or without `esnext.disposable`) TypeScript
// does not know `Symbol.dispose` and would reject the package's own types. With such a lib, import this:
//
//   import type {} from 'managed-eventsource/disposable';
import type {} from './index.js';
import type {} from './testing.js';

declare module './index.js' {
  interface ManagedEventSource {
    /** The same as close(). */
    [Symbol.dispose](): void;
  }
}

declare module './testing.js' {
  interface VirtualClock {
    /** The same as uninstall(). */
    [Symbol.dispose](): void;
  }
}
