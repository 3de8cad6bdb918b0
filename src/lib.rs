//! # managed-eventsource
//!
//! A browser Server-Sent Events client that reconnects through a jittered exponential backoff ladder
//! instead of the browser's fixed interval, so that a population of clients dropped by one outage comes
//! back as a ramp rather than a wave.
//!
//! The crate is a pure core, built and tested natively, and a thin browser shell compiled for `wasm32`:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`boundary`] | the numbers the browser shell's two halves share, from which `src/web/boundary.js` is generated |
//! | `check` | (wasm32, feature `check` only) the option check: the small module a first constructor runs instead of the shell |
//! | [`ladder`] | the backoff ladder: strategies, caps, attempts; randomness passed in |
//! | [`machine`] | the reconnect state machine, sans-IO: inputs in, commands out |
//! | [`options`] | the options model, its defaults and its validation |
//! | [`parse`] | the event-stream parser for the fetch transport, sans-IO: bytes in, events out |
//! | [`resume`] | how long the last event id is in a reconnect URL (the JavaScript half writes the URL) |
//! | [`socket`] | WebSocket policy: which closes reconnect, the queue of messages sent while disconnected |
//! | [`storm`] | a population simulator that runs the same ladder for many clients |
//! | `web` | (wasm32 only) the browser shell under `ManagedEventSource` and `createManagedStream` |
//!
//! The JavaScript API is described in the README and docs/reference.md; its TypeScript types are in `pkg/`.
#![deny(missing_docs)]
// The shipped wasm build is no_std: a panic traps instead of pulling in std's formatting panic machinery,
// and lol_alloc replaces dlmalloc. Nothing in the crate is meant to panic; this only removes dead weight.
#![cfg_attr(all(feature = "small", target_arch = "wasm32"), no_std)]

extern crate alloc;

#[cfg(all(feature = "small", target_arch = "wasm32"))]
mod small {
    use core::alloc::{GlobalAlloc, Layout};
    use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};

    /// lol_alloc, trapping where it would return null (memory cannot grow): then the code after every
    /// allocation can see that it never got null, and the standard library's out-of-memory report (a
    /// formatted message nobody reads, with the tables that format it) is never reached.
    struct Allocator(AssumeSingleThreaded<FreeListAllocator>);

    // SAFETY: every method hands lol_alloc's result on unchanged, but for a null, where it traps.
    unsafe impl GlobalAlloc for Allocator {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = self.0.alloc(layout);
            if p.is_null() {
                core::arch::wasm32::unreachable()
            }
            p
        }

        unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
            self.0.dealloc(p, layout)
        }

        unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
            let q = self.0.realloc(p, layout, size);
            if q.is_null() {
                core::arch::wasm32::unreachable()
            }
            q
        }
    }

    // SAFETY: wasm32-unknown-unknown without the atomics feature runs on one thread.
    #[global_allocator]
    static ALLOCATOR: Allocator =
        Allocator(unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) });

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}

pub mod boundary;
pub mod ladder;
pub mod machine;
pub mod options;
pub mod parse;
pub mod resume;
pub mod storm;

#[cfg(all(target_arch = "wasm32", not(feature = "check")))]
pub mod web;

#[cfg(all(target_arch = "wasm32", feature = "check"))]
pub mod check;

#[cfg(all(target_arch = "wasm32", not(feature = "small")))]
pub mod browser;
