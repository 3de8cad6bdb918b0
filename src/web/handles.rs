//! The table of live shells, and the handles the JavaScript half holds them by.
//!
//! A handle is a number that names a slot and the generation of the shell in it: `free` empties the slot
//! and a later shell in the same slot has the next generation, so a handle used after `free`, freed twice,
//! or made up names nothing, and the exports that take one do nothing with it. No handle is an address: the
//! table holds each shell in an `Rc`, and an export holds its own `Rc` while it runs, so even a `free`
//! from inside a call (which the JavaScript half never makes) cannot end a shell under it.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;

use super::shell::Shared;

/// The shell of one slot and generation, as JavaScript holds it: `generation * 2^20 + slot`, a whole
/// number below 2^53, so it crosses as an `f64` exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle {
    slot: u32,
    generation: u32,
}

/// Slots a handle can name (2^20): more live shells than this at once is a bug in the page, and traps.
const SLOT_BITS: u32 = 20;

impl From<Handle> for f64 {
    fn from(h: Handle) -> f64 {
        (((h.generation as u64) << SLOT_BITS) | h.slot as u64) as f64
    }
}

impl From<f64> for Handle {
    /// Any number: one that is not a handle `insert` gave names no slot's current generation.
    fn from(n: f64) -> Handle {
        // `as` saturates and reads NaN as 0; generation 0 is never given, so 0, NaN, negative and
        // fractional numbers name nothing.
        let whole = n as u64;
        let generation = if whole as f64 == n {
            (whole >> SLOT_BITS) as u32
        } else {
            0
        };
        Handle {
            slot: (whole & ((1 << SLOT_BITS) - 1)) as u32,
            generation,
        }
    }
}

struct Slot {
    /// The generation of the shell in it, or of the last one (from 1).
    generation: u32,
    shell: Option<Rc<Shared>>,
}

struct Table {
    slots: Vec<Slot>,
    /// Empty slots, to reuse.
    free: Vec<u32>,
}

/// The table, for the one thread wasm32-unknown-unknown runs on.
struct Cell(RefCell<Table>);

// SAFETY: without the `atomics` target feature a wasm32 module runs on one thread, so the table is never
// reached from two threads.
#[cfg(not(target_feature = "atomics"))]
unsafe impl Sync for Cell {}

static TABLE: Cell = Cell(RefCell::new(Table {
    slots: Vec::new(),
    free: Vec::new(),
}));

/// The table, borrowed for the length of `f`, which never calls out of the module (so never back in).
fn with<T>(f: impl FnOnce(&mut Table) -> T) -> T {
    match TABLE.0.try_borrow_mut() {
        Ok(mut table) => f(&mut table),
        Err(_) => super::shell::trap(),
    }
}

/// Puts a new shell in the table and returns its handle.
pub(crate) fn insert(shell: Shared) -> Handle {
    let shell = Some(Rc::new(shell));
    with(|t| match t.free.pop() {
        Some(slot) => {
            let Some(s) = t.slots.get_mut(slot as usize) else {
                super::shell::trap()
            };
            // Generations wrap after 4 billion shells in one slot, skipping 0, which names nothing.
            s.generation = s.generation.checked_add(1).unwrap_or(1);
            s.shell = shell;
            Handle {
                slot,
                generation: s.generation,
            }
        }
        None => {
            let slot = t.slots.len() as u32;
            if slot >= 1 << SLOT_BITS {
                super::shell::trap();
            }
            t.slots.push(Slot {
                generation: 1,
                shell,
            });
            Handle {
                slot,
                generation: 1,
            }
        }
    })
}

/// The shell `h` names, if it is live.
pub(crate) fn get(h: Handle) -> Option<Rc<Shared>> {
    with(|t| match t.slots.get(h.slot as usize) {
        Some(s) if s.generation == h.generation => s.shell.clone(),
        _ => None,
    })
}

/// Takes the shell `h` names out of the table; the caller drops it (outside the table's borrow, as
/// dropping a shell calls into JavaScript).
pub(crate) fn remove(h: Handle) -> Option<Rc<Shared>> {
    with(|t| {
        let s = t.slots.get_mut(h.slot as usize)?;
        if s.generation != h.generation {
            return None;
        }
        let shell = s.shell.take()?;
        t.free.push(h.slot);
        Some(shell)
    })
}

/// How many shells are live (for the tests' leak checks).
#[allow(dead_code)]
pub(crate) fn live() -> usize {
    with(|t| t.slots.len() - t.free.len())
}
