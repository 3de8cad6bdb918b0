//! The option check (wasm32, feature `check`): a module of its own, of 2.3 kB, that a first
//! constructor given an option whose value JavaScript's types do not settle compiles and runs instead of the
//! shell's, so that the options it was given throw there, at once, while the shell's module compiles off
//! the main thread (see `later` in `src/web/api.js`). It reads
//! the options with [`boundary::options`] and checks them with [`Options::validate`], the shell's own
//! code, and says only whether they pass: a constructor whose options fail builds the shell at once, and
//! the shell throws the error, worded as always.
//!
//! The JavaScript half copies the values (see [`boundary`]) into this module's memory: each number at its
//! position of [`numbers`], each string as its length there (-1 for none) and its first [`CHECK_UNITS`](boundary::CHECK_UNITS) UTF-16
//! code units at the same position of [`units`]. A longer string is no name the rules compare with.
//!
//! [`Options::validate`]: crate::options::Options::validate

use core::cell::UnsafeCell;

use crate::boundary::{self, Slot, CHECK_UNITS as UNITS, COUNT};
use crate::options::Text;

/// Memory the JavaScript half writes and [`check`] reads, on one thread.
struct Shared<T>(UnsafeCell<T>);

// SAFETY: wasm32-unknown-unknown without the atomics feature runs on one thread.
unsafe impl<T> Sync for Shared<T> {}

static NUMBERS: Shared<[f64; COUNT]> = Shared(UnsafeCell::new([0.0; COUNT]));
static CODE_UNITS: Shared<[u16; COUNT * UNITS]> = Shared(UnsafeCell::new([0; COUNT * UNITS]));

/// Where the JavaScript half writes the numbers: [`COUNT`] `f64`s.
#[no_mangle]
pub extern "C" fn numbers() -> *mut f64 {
    NUMBERS.0.get().cast()
}

/// Where it writes the strings' code units: [`CHECK_UNITS`](boundary::CHECK_UNITS) `u16`s for each of the [`COUNT`] positions.
#[no_mangle]
pub extern "C" fn units() -> *mut u16 {
    CODE_UNITS.0.get().cast()
}

/// A string the JavaScript half copied: its length, and its first code units at position `at`.
struct Copied {
    len: f64,
    at: usize,
}

impl Text for Copied {
    fn is_empty(&self) -> bool {
        self.len == 0.0
    }

    fn is(&self, name: &str) -> bool {
        // SAFETY: one thread; nothing writes the memory while the check runs.
        let all: &[u16; COUNT * UNITS] = unsafe { &*CODE_UNITS.0.get() };
        let Some(units) = all.get(self.at * UNITS..(self.at + 1) * UNITS) else {
            return false;
        };
        // The rules compare with ASCII names only, whose bytes are their code units.
        debug_assert!(name.is_ascii());
        self.len == name.len() as f64 && name.bytes().zip(units).all(|(a, b)| a as u16 == *b)
    }
}

struct Memory;

impl boundary::Values for Memory {
    type Text = Copied;

    fn at(&self, at: usize) -> f64 {
        // SAFETY: one thread; nothing writes the memory while the check runs.
        let all: &[f64; COUNT] = unsafe { &*NUMBERS.0.get() };
        all.get(at).copied().unwrap_or(f64::NAN)
    }

    fn text_at(&self, at: usize) -> Option<Copied> {
        let len = self.at(at);
        (len >= 0.0).then_some(Copied { len, at })
    }

    fn given(&self) -> u32 {
        self.at(Slot::Given.at()) as u32
    }
}

/// 1 when the options of an `EventSource` stream in memory pass every rule the shell checks, else 0.
#[no_mangle]
pub extern "C" fn check() -> u32 {
    boundary::options(&Memory, false).validate().is_ok() as u32
}
