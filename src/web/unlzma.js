// A small synchronous LZMA decoder: how the package carries its wasm inside the JavaScript. The build
// compresses the module with LZMA (scripts/build.mjs), which takes about 7% off what zopfli's deflate
// leaves, more than this decoder costs beyond an inflate; base64 of the compressed bytes then costs a page
// about what the bytes themselves cost once the server gzips it. A synchronous decode means no top-level
// await and no file for a bundler to copy.
//
// Written from the format's description (Igor Pavlov's LZMA SDK, lzma-specification.txt): a range decoder
// over adaptive bit probabilities, literals, and matches whose lengths and distances have probability trees
// of their own, with the last four distances kept for repeats. It reads the streams the build writes, whose
// literal and position context bits are 0 (lc = lp = pb = 0, see scripts/build.mjs): one set of literal
// probabilities, one position state.

/** Where each group of probabilities starts in one array (see `unlzma`). */
const IS_MATCH = 0, // [state][posState]: 12 * 16 (posState is always 0 here)
  IS_REP = 192, // [state]
  IS_REP_G0 = 204,
  IS_REP_G1 = 216,
  IS_REP_G2 = 228,
  IS_REP0_LONG = 240, // [state][posState]: 12 * 16
  POS_SLOT = 432, // [lenState][64]: 4 * 64
  SPEC_POS = 688, // the distances of slots 4 to 13: 115
  ALIGN = 803, // the low 4 bits of longer distances: 16
  LEN = 819, // match lengths: choice, choice 2, low [16][8], mid [16][8], high [256]: 514
  REP_LEN = 1333, // repeat lengths, the same
  LITERAL = 1847; // [0x300] (no context: lc = lp = 0)

/**
 * Decodes an LZMA stream: `src` is the .lzma format (a properties byte, which must say lc = lp = pb = 0, the
 * dictionary size, the size, then the range-coded data); `size` is how many bytes it decodes to. It does
 * not check the stream: the build decodes what it inlines with this function and compares.
 */
export function unlzma(src, size) {
  const probs = new Uint16Array(LITERAL + 0x300).fill(1024);
  const out = new Uint8Array(size);
  // The range decoder; the data start after the 13-byte header, with a first byte that is always 0.
  let pos = 14, range = 0xffffffff, code = 0;
  const next = () => (code = ((code << 8) | src[pos++]) >>> 0);
  for (let i = 0; i < 4; i++) next();
  // Keeps the range at 24 bits or more.
  const norm = () => {
    if (range < 0x1000000) {
      range = (range << 8) >>> 0;
      next();
    }
  };
  const bit = (i) => {
    const p = probs[i], bound = (range >>> 11) * p;
    let b;
    if (code < bound) {
      range = bound;
      probs[i] = p + ((2048 - p) >> 5);
      b = 0;
    } else {
      range -= bound;
      code -= bound;
      probs[i] = p - (p >> 5);
      b = 1;
    }
    norm();
    return b;
  };
  const tree = (base, n) => {
    let m = 1;
    for (let i = 0; i < n; i++) m = (m << 1) | bit(base + m);
    return m - (1 << n);
  };
  const reverse = (base, n) => {
    let m = 1, v = 0;
    for (let i = 0; i < n; i++) {
      const b = bit(base + m);
      m = (m << 1) | b;
      v |= b << i;
    }
    return v;
  };
  const direct = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) {
      range >>>= 1;
      const b = code >= range ? 1 : 0;
      if (b) code -= range;
      v = ((v << 1) | b) >>> 0;
      norm();
    }
    return v;
  };
  // A length, less 2: 0-7, 8-15, else 16-271 (for position state 0).
  const length = (base) =>
    bit(base) === 0 ? tree(base + 2, 3) : bit(base + 1) === 0 ? 8 + tree(base + 130, 3) : 16 + tree(base + 258, 8);

  let state = 0, rep0 = 0, rep1 = 0, rep2 = 0, rep3 = 0, n = 0;
  while (n < size) {
    if (bit(IS_MATCH + (state << 4)) === 0) {
      let sym = 1;
      if (state >= 7) {
        // After a match, the byte the match would have continued with guides the first bits.
        let match = out[n - rep0 - 1];
        while (sym < 0x100) {
          const mb = (match >> 7) & 1;
          match <<= 1;
          const b = bit(LITERAL + ((1 + mb) << 8) + sym);
          sym = (sym << 1) | b;
          if (mb !== b) break;
        }
      }
      while (sym < 0x100) sym = (sym << 1) | bit(LITERAL + sym);
      out[n++] = sym;
      state = state < 4 ? 0 : state < 10 ? state - 3 : state - 6;
      continue;
    }
    let len;
    if (bit(IS_REP + state)) {
      if (bit(IS_REP_G0 + state) === 0) {
        if (bit(IS_REP0_LONG + (state << 4)) === 0) {
          // One byte from the last distance.
          state = state < 7 ? 9 : 11;
          out[n] = out[n - rep0 - 1];
          n++;
          continue;
        }
      } else {
        let d;
        if (bit(IS_REP_G1 + state) === 0) d = rep1;
        else {
          if (bit(IS_REP_G2 + state) === 0) d = rep2;
          else (d = rep3), (rep3 = rep2);
          rep2 = rep1;
        }
        rep1 = rep0;
        rep0 = d;
      }
      len = length(REP_LEN);
      state = state < 7 ? 8 : 11;
    } else {
      rep3 = rep2;
      rep2 = rep1;
      rep1 = rep0;
      len = length(LEN);
      state = state < 7 ? 7 : 10;
      const slot = tree(POS_SLOT + (Math.min(len, 3) << 6), 6);
      if (slot < 4) rep0 = slot;
      else {
        const k = (slot >> 1) - 1;
        let d = (2 | (slot & 1)) * 2 ** k;
        if (slot < 14) d += reverse(SPEC_POS + d - slot - 1, k);
        else d += direct(k - 4) * 16 + reverse(ALIGN, 4);
        rep0 = d >>> 0;
      }
      // (The stream's end marker is never read: the loop stops at `size`.)
    }
    for (let end = Math.min(n + len + 2, size); n < end; n++) out[n] = out[n - rep0 - 1];
  }
  return out;
}
