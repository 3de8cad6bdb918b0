// Shortens the names a wasm module imports and exports, and rewrites wasm-bindgen's glue to match.
//
// wasm-bindgen names its imports `__wbg_<name>_<16 hex digits>` and its module paths
// `./snippets/<crate>-<16 hex digits>/src/web/api.js`; the names appear twice (in the wasm and in the glue)
// and the hex digits do not compress. Measured on the first lean build: about 1 kB of a page's gzip.

/** Reads an unsigned LEB128 at `at`; returns [value, next offset]. */
export function leb(bytes, at) {
  let v = 0, shift = 0, b;
  do {
    b = bytes[at++];
    v += (b & 0x7f) * 2 ** shift;
    shift += 7;
  } while (b & 0x80);
  return [v, at];
}

function writeLeb(v) {
  const out = [];
  do {
    let b = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

const text = new TextDecoder();
const encode = (s) => {
  const b = new TextEncoder().encode(s);
  return [...writeLeb(b.length), ...b];
};

/** Short names: a, b, ..., z, A, ..., Z, aa, ab, ... */
function* shortNames() {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (let len = 1; ; len++) {
    const idx = Array(len).fill(0);
    for (;;) {
      yield idx.map((i) => letters[i]).join('');
      let k = len - 1;
      while (k >= 0 && ++idx[k] === letters.length) idx[k--] = 0;
      if (k < 0) break;
    }
  }
}

/** Rewrites the import (2) and export (7) sections with `rename(kind, name)`; other sections are copied. */
function rewrite(wasm, { module, field, exported }) {
  const out = [...wasm.subarray(0, 8)];
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at];
    const [size, start] = leb(wasm, at + 1);
    const end = start + size;
    if (id !== 2 && id !== 7) {
      out.push(...wasm.subarray(at, end));
      at = end;
      continue;
    }
    const body = [];
    let [count, p] = leb(wasm, start);
    body.push(...writeLeb(count));
    for (let i = 0; i < count; i++) {
      if (id === 2) {
        let [mlen, q] = leb(wasm, p);
        const m = text.decode(wasm.subarray(q, q + mlen));
        q += mlen;
        const [flen, r] = leb(wasm, q);
        const f = text.decode(wasm.subarray(r, r + flen));
        p = r + flen;
        body.push(...encode(module(m)), ...encode(field(m, f)));
        // The import's description: kind byte, then a type index (function), or a table/memory/global type.
        const kind = wasm[p];
        const descStart = p;
        p++;
        if (kind === 0) [, p] = leb(wasm, p);
        else if (kind === 1) {
          p++; // reftype
          const flags = wasm[p++];
          [, p] = leb(wasm, p);
          if (flags & 1) [, p] = leb(wasm, p);
        } else if (kind === 2) {
          const flags = wasm[p++];
          [, p] = leb(wasm, p);
          if (flags & 1) [, p] = leb(wasm, p);
        } else if (kind === 3) p += 2;
        else throw new Error(`build: name shortening (scripts/wasm-names.mjs): unknown import kind ${kind}`);
        body.push(...wasm.subarray(descStart, p));
      } else {
        const [nlen, q] = leb(wasm, p);
        const name = text.decode(wasm.subarray(q, q + nlen));
        p = q + nlen;
        body.push(...encode(exported(name)));
        const descStart = p;
        p++;
        [, p] = leb(wasm, p);
        body.push(...wasm.subarray(descStart, p));
      }
    }
    out.push(id, ...writeLeb(body.length), ...body);
    at = end;
  }
  return new Uint8Array(out);
}

/** Lists the module's imports as [module, field] and its export names. */
export function names(wasm) {
  const imports = [];
  const exports = [];
  rewrite(wasm, {
    module: (m) => m,
    field: (m, f) => (imports.push([m, f]), f),
    exported: (e) => (exports.push(e), e),
  });
  return { imports, exports };
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * Minifies `wasm`'s import and export names and rewrites `glue` (wasm-bindgen's `--target web` output) to
 * match. Every import gets a short name and every module path one letter; imports the wasm takes straight
 * from a snippet (`import * as importN from './snippets/...'`) become members of an object literal, so a
 * bundler sees plain references and keeps only what is used. Returns { wasm, glue, saved }.
 */
export function minifyNames(wasm, glue) {
  const { imports, exports } = names(wasm);
  const gen = shortNames();
  const modules = new Map();
  const fields = new Map(); // "module\0field" -> short name
  for (const [m, f] of imports) {
    if (!modules.has(m)) modules.set(m, gen.next().value);
    fields.set(`${m}\0${f}`, gen.next().value);
  }
  const exportGen = shortNames();
  const exported = new Map(exports.map((e) => [e, exportGen.next().value]));
  const out = rewrite(wasm, {
    module: (m) => modules.get(m),
    field: (m, f) => fields.get(`${m}\0${f}`),
    exported: (e) => exported.get(e),
  });

  // Imports the glue defines itself: `name: function` keys of the first import object.
  let g = glue;
  for (const [key, short] of fields) {
    const [m, f] = key.split('\0');
    if (m.startsWith('./snippets/')) continue;
    const re = new RegExp(`\\b${escape(f)}(?=:\\s*function)`, 'g');
    if (!re.test(g)) throw new Error(`build: name shortening (scripts/wasm-names.mjs): the glue defines no import named ${f}`);
    g = g.replace(re, short);
  }
  // The import object's entries: the glue's own object, then one namespace per snippet import.
  const namespaces = new Map(); // importN -> module path
  for (const m of g.matchAll(/^import \* as (import\d+) from "([^"]+)"$/gm)) namespaces.set(m[1], m[2]);
  const seen = new Set();
  g = g.replace(/^(\s*)"([^"]+)": (import\d+),\n/gm, (line, indent, m, value) => {
    const short = modules.get(m);
    if (!short) throw new Error(`build: name shortening (scripts/wasm-names.mjs): the glue names a module the wasm does not import: ${m}`);
    if (seen.has(short)) return '';
    seen.add(short);
    if (!namespaces.has(value)) return `${indent}${short}: ${value},\n`;
    const members = imports
      .filter(([mm]) => mm === m)
      .map(([, f]) => `${fields.get(`${m}\0${f}`)}: ${value}.${f}`)
      .join(', ');
    return `${indent}${short}: { ${members} },\n`;
  });
  for (const m of modules.keys()) {
    if (!seen.has(modules.get(m))) throw new Error(`build: name shortening (scripts/wasm-names.mjs): no import object entry for ${m}`);
  }
  g = g.replace(/\bwasm\.(\w+)/g, (whole, name) => {
    const short = exported.get(name);
    if (!short) throw new Error(`build: name shortening (scripts/wasm-names.mjs): the glue uses an export the wasm does not have: ${name}`);
    return `wasm.${short}`;
  });
  return { wasm: out, glue: g, saved: wasm.length - out.length };
}
