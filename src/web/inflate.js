// A small synchronous inflate (RFC 1951, deflate-raw), after Mark Adler's puff.c: how the package carries its
// wasm inside the JavaScript. Base64 of a deflated module costs a page about what the module itself costs
// once the server gzips it (the bits are already entropy-coded), where base64 of the raw module costs a
// third more; and a synchronous decode means no top-level await and no file for a bundler to copy.

/** Inflates `src` (deflate-raw) into a new array of `size` bytes. */
export function inflate(src, size) {
  const out = new Uint8Array(size);
  let pos = 0, bit = 0, n = 0;
  const bits = (k) => {
    let v = 0;
    for (let i = 0; i < k; i++) {
      v |= ((src[pos] >> bit) & 1) << i;
      if (++bit === 8) (bit = 0), pos++;
    }
    return v;
  };
  // A canonical Huffman code from code lengths: how many codes of each length, and the symbols in order.
  const code = (lengths) => {
    const count = new Uint16Array(16), offs = new Uint16Array(16), sym = new Uint16Array(lengths.length);
    for (const l of lengths) count[l]++;
    for (let i = 1; i < 16; i++) offs[i] = offs[i - 1] + (i > 1 ? count[i - 1] : 0);
    lengths.forEach((l, s) => l && (sym[offs[l]++] = s));
    return [count, sym];
  };
  const decode = ([count, sym]) => {
    let c = 0, first = 0, index = 0;
    for (let len = 1; len < 16; len++) {
      c |= bits(1);
      const k = count[len];
      if (c < first + k) return sym[index + c - first];
      index += k;
      first = (first + k) << 1;
      c <<= 1;
    }
    throw new Error('managed-eventsource: corrupt wasm');
  };
  // Base lengths and distances with their extra bits.
  const lbase = [], lext = [], dbase = [], dext = [];
  for (let i = 0, b = 3; i < 29; i++) (lext[i] = i < 8 || i > 27 ? 0 : (i >> 2) - 1), (lbase[i] = i > 27 ? 258 : b), (b += 1 << lext[i]);
  for (let i = 0, b = 1; i < 30; i++) (dext[i] = i < 4 ? 0 : (i >> 1) - 1), (dbase[i] = b), (b += 1 << dext[i]);
  let last;
  do {
    last = bits(1);
    const type = bits(2);
    if (type === 0) {
      if (bit) (bit = 0), pos++;
      const len = src[pos] | (src[pos + 1] << 8);
      out.set(src.subarray(pos + 4, pos + 4 + len), n);
      pos += 4 + len;
      n += len;
      continue;
    }
    let lit, dist;
    if (type === 1) {
      const l = [];
      for (let i = 0; i < 288; i++) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
      lit = code(l);
      dist = code(Array(30).fill(5));
    } else {
      const nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
      const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
      const cl = Array(19).fill(0);
      for (let i = 0; i < ncode; i++) cl[order[i]] = bits(3);
      const lencode = code(cl);
      const lengths = [];
      while (lengths.length < nlen + ndist) {
        const s = decode(lencode);
        if (s < 16) lengths.push(s);
        else {
          const [v, k] = s === 16 ? [lengths[lengths.length - 1], 3 + bits(2)] : [0, s === 17 ? 3 + bits(3) : 11 + bits(7)];
          for (let i = 0; i < k; i++) lengths.push(v);
        }
      }
      lit = code(lengths.slice(0, nlen));
      dist = code(lengths.slice(nlen));
    }
    for (let s; (s = decode(lit)) !== 256; ) {
      if (s < 256) out[n++] = s;
      else {
        s -= 257;
        const len = lbase[s] + bits(lext[s]);
        const d = decode(dist);
        const back = dbase[d] + bits(dext[d]);
        for (let i = 0; i < len; i++, n++) out[n] = out[n - back];
      }
    }
  } while (!last);
  return out;
}
