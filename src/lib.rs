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
//! | [`ladder`] | the backoff ladder: strategies, caps, attempts; randomness passed in |
//! | [`machine`] | the reconnect state machine, sans-IO: inputs in, commands out |
//! | [`options`] | the options model, its defaults and its validation |
//! | [`resume`] | how long the last event id is in a reconnect URL (the JavaScript half writes the URL) |
//! | [`socket`] | WebSocket policy: which closes reconnect, the queue of messages sent while disconnected |
//! | [`storm`] | a population simulator that runs the same ladder for many clients |
//! | `web` | (wasm32 only) the browser shell under `ManagedEventSource` and `createManagedStream` |
//!
//! The JavaScript API is described in the README; its TypeScript types are generated into `pkg/`.
#![deny(missing_docs)]
// The shipped wasm build is no_std: a panic traps instead of pulling in std's formatting panic machinery,
// and lol_alloc replaces dlmalloc. Nothing in the crate is meant to panic; this only removes dead weight.
#![cfg_attr(all(feature = "small", target_arch = "wasm32"), no_std)]

extern crate alloc;

#[cfg(all(feature = "small", target_arch = "wasm32"))]
mod small {
    use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};

    // SAFETY: wasm32-unknown-unknown without the atomics feature runs on one thread.
    #[global_allocator]
    static ALLOCATOR: AssumeSingleThreaded<FreeListAllocator> =
        unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) };

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}

pub mod ladder;
pub mod machine;
pub mod options;
pub mod resume;
pub mod socket;
pub mod storm;

#[cfg(target_arch = "wasm32")]
pub mod web;
