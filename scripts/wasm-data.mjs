// Clears text in a wasm module's data that nothing reads: what nothing refers to any more, and the source
// file names of panics.
//
// rustc lays out the module's read-only data before wasm-opt runs, and keeps there the messages of panics
// and failed allocations, the source paths that go with them, and the digit table that formats their
// numbers. The shipped build traps on a panic without reading its message (src/lib.rs), so once wasm-opt
// has removed the code that built those messages, nothing refers to the text; but wasm-opt never removes
// bytes from a data segment. This finds the text that no address in the module points into and zeroes it
// (LZMA then stores the zeros in a few bytes). Addresses are the constants in the code (`i32.const`, and a
// load's or store's `offset=`, which wasm-opt folds addresses into) and the 4-byte words in the data (the
// pointers in static tables) that lie in data an address reaches. The unit is a blob, the bytes between two zero bytes: its bytes before the
// first address that points into it cannot be reached (a string, or a format template with its length
// bytes, is reached from its start), and a blob no address points into cannot be reached at all. Only what
// reads as text is cleared. Conservative: a dead string after a live one in the same blob is kept. What it
// could get wrong is text inside a larger object reached from before the blob (an object with zero bytes
// in it, then words); the test suite runs on the module as cleared.

import binaryen from 'binaryen';
import { leb } from './wasm-names.mjs';

const MIN = 8;
const WINDOW = 16;

/** Reads a signed LEB128 (an i32.const) at `at`; returns [value, next offset]. */
function sleb(bytes, at) {
  let value = 0, shift = 0, b;
  do {
    b = bytes[at++];
    value |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (shift < 32 && b & 0x40) value |= -1 << shift;
  return [value >>> 0, at];
}

/** The active data segments of memory 0 whose offset is a constant: [{ address, start, end }] in `bytes`. */
function segments(bytes) {
  const found = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    let size;
    [size, at] = leb(bytes, at + 1);
    const end = at + size;
    if (id === 11) {
      let count, p = at;
      [count, p] = leb(bytes, p);
      for (let i = 0; i < count; i++) {
        let flags;
        [flags, p] = leb(bytes, p);
        if (flags === 1) throw new Error('wasm-data: a passive data segment; not handled');
        if (flags === 2) [, p] = leb(bytes, p); // memory index
        if (bytes[p] !== 0x41) throw new Error('wasm-data: a data segment whose offset is not an i32.const');
        let address, len;
        [address, p] = sleb(bytes, p + 1);
        if (bytes[p] !== 0x0b) throw new Error('wasm-data: a data segment offset that is not a lone constant');
        [len, p] = leb(bytes, p + 1);
        found.push({ address, start: p, end: p + len });
        p += len;
      }
    }
    at = end;
  }
  return found;
}

/** The first of the ascending `sorted` at or after `x`, if any. */
function firstAtOrAfter(sorted, x) {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

/**
 * Returns `wasm` with its unreferenced text zeroed, and the strings it cleared. `wasm` is a Uint8Array of
 * a module after wasm-opt.
 */
export function clearDeadText(wasm) {
  const bytes = Uint8Array.from(wasm);
  const segs = segments(bytes);
  const refs = new Set();
  const module = binaryen.readBinary(bytes);
  const wat = module.emitText();
  module.dispose();
  for (const m of wat.matchAll(/i32\.const (-?\d+)|offset=(\d+)/g)) refs.add(Number(m[1] ?? m[2]) >>> 0);
  // A word in the data is an address only if the data around it can be reached: an address points at
  // most WINDOW bytes before it (the start of the struct that holds it, such as a panic's Location with
  // its file name). Until nothing changes, as reaching a struct can reach another.
  const view = new DataView(bytes.buffer);
  const words = [];
  for (const s of segs) for (let i = s.start; i + 4 <= s.end; i++) words.push([s.address + (i - s.start), view.getUint32(i, true)]);
  let sorted, changed = true;
  while (changed) {
    sorted = [...refs].sort((a, b) => a - b);
    changed = false;
    for (const [at, value] of words) {
      if (refs.has(value)) continue;
      const r = firstAtOrAfter(sorted, at - WINDOW);
      if (r !== undefined && r <= at) {
        refs.add(value);
        changed = true;
      }
    }
  }
  const cleared = [];
  for (const seg of segs) {
    let i = seg.start;
    while (i < seg.end) {
      if (bytes[i] === 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < seg.end && bytes[j] !== 0) j++;
      // A blob: bytes between zeros. Its bytes before the first address that points into it are dead.
      const from = seg.address + (i - seg.start), to = seg.address + (j - seg.start);
      const ref = firstAtOrAfter(sorted, from);
      let dead = ref === undefined || ref >= to ? j - i : ref - from;
      // Up to the last byte of text: what follows the words (a pointer, say) stays as it was.
      while (dead > 0 && !/[\x20-\x7e\n]/.test(String.fromCharCode(bytes[i + dead - 1]))) dead--;
      const piece = Buffer.from(bytes.subarray(i, i + dead)).toString('latin1');
      if (dead >= MIN && text(piece)) {
        cleared.push(piece);
        bytes.fill(0, i, i + dead);
      }
      i = j;
    }
  }
  // Source file names, wherever they are: only a panic's Location carries one, and the shipped build's
  // panic handler reads nothing of a panic (src/lib.rs), so whether or not something still points at them,
  // nothing reads them.
  for (const seg of segs) {
    const text = Buffer.from(bytes.subarray(seg.start, seg.end)).toString('latin1');
    for (const m of text.matchAll(SOURCE_FILE)) {
      cleared.push(m[0]);
      bytes.fill(0, seg.start + m.index, seg.start + m.index + m[0].length);
    }
  }
  return { wasm: bytes, cleared };
}

/** The name of a Rust source file as rustc records it: in the standard library, in a crate from the
 * registry, or in this crate. */
const SOURCE_FILE = /\/rustc\/[0-9a-f]{40}\/library\/[\w/.-]+?\.rs|\/[\w/.-]*?\/\.cargo\/registry\/[\w/.-]+?\.rs|\bsrc\/[\w/]+?\.rs/g;

/** core's table of the decimal digit pairs 00 to 99. */
const DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join('');

/**
 * Whether bytes read as text: mostly printable ASCII, with words in it, or the digit pairs (never a table of
 * numbers that happens to have no zero byte).
 */
function text(piece) {
  const printable = piece.replace(/[^\x20-\x7e\n]/g, '').length;
  return printable >= piece.length * 0.9 && (/[A-Za-z]{3}/.test(piece) || piece.includes(DIGITS));
}
