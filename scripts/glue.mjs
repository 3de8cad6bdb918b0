// Edits of wasm-bindgen's glue (`--target web`) that the build makes, each checked: an edit that finds
// nothing to edit throws an error naming its step, so a wasm-bindgen that writes something else fails the
// build loudly rather than shipping a glue cut half-way. tests/glue.test.mjs holds each step to a fixture in
// the shapes wasm-bindgen 0.2.130 writes (Cargo.lock pins it).
//
// What this file may not do: change what the glue does for the package. Each cut removes code the package
// never runs (a bundler cannot see that it is unused, as the glue exports it or calls it behind a test).

/** An error naming the build step and what it looked for. */
const changed = (step, what) =>
  new Error(`build: ${step}: wasm-bindgen's glue has changed (no ${what}); update scripts/glue.mjs and tests/glue.test.mjs for it`);

/**
 * The cuts: a name, what to find, what to put instead, and whether it applies to this glue (a cut about
 * strings passed into wasm applies only where the glue has that path).
 */
export const CUTS = [
  // The glue always hands `passStringToWasm0` a `realloc`.
  { name: 'encoder without realloc', re: /\n {4}if \(realloc === undefined\) \{[\s\S]*?\n {4}\}\n/, by: '\n', when: (g) => g.includes('function passStringToWasm0') },
  // The wasm is inlined and compiled with initSync: the async loader never runs.
  { name: 'async loader', re: /\nasync function __wbg_load\([\s\S]*?\n\}\n/, by: '\n' },
  { name: 'async init', re: /\nlet __wbg_init_promise;[\s\S]*?\nasync function __wbg_init_once\([\s\S]*?\n\}\n/, by: '\n' },
  { name: 'default export', re: /export \{ initSync, __wbg_init as default \};/, by: 'export { initSync };' },
  // Every browser with class private fields (which the package's classes need) has encodeInto.
  { name: 'encodeInto stand-in', re: /\nif \(!\('encodeInto' in cachedTextEncoder\)\) \{[\s\S]*?\n\}\n/, by: '\n', when: (g) => g.includes('function passStringToWasm0') },
  // initSync is always called with `{ module }`.
  { name: 'deprecated initSync arguments', re: /\n {4}if \(module !== undefined\) \{[\s\S]*?console\.warn[\s\S]*?\n {4}\}\n/, by: '\n    ({ module } = module);\n' },
  // Wasm hands JavaScript a few short strings (an option error's words), never 2 GB of them (the fetch
  // transport's events are parsed in JavaScript, parse.js).
  {
    name: "Safari's decoder renewal",
    re: /\nconst MAX_SAFARI_DECODE_BYTES = \d+;\nlet numBytesDecoded = 0;\nfunction decodeText\(bytes\) \{[\s\S]*?\n\}\n/,
    by: '\nconst decodeText = (bytes) => cachedTextDecoder.decode(bytes);\n',
  },
];

/** Removes from the glue what the package never calls (see CUTS), but for the cuts named in `keep`. */
export function diet(glue, keep = []) {
  for (const { name, re, by, when } of CUTS) {
    if ((when && !when(glue)) || keep.includes(name)) continue;
    if (!re.test(glue)) throw changed(`glue diet, cut '${name}'`, `match for ${re}`);
    glue = glue.replace(re, by);
  }
  return glue;
}

/**
 * Drops from the glue the functions it hands the module for imports the module no longer has: wasm-opt
 * removes an import once the code that called it is gone (such as wasm-bindgen's `throw` for a panic path
 * the shipped build traps on instead), but the glue was written before. `imported` lists the module's
 * imports as `module.name` (by default, read from `wasm`).
 */
export function pruneImports(glue, wasm, imported = importsOf(wasm)) {
  const ns = glue.match(/\n {8}(\w+): import0,/)?.[1];
  const block = glue.match(/\n {4}const import0 = \{\n {8}__proto__: null,\n([\s\S]*?)\n {4}\};/);
  if (!ns || !block) throw changed('import pruning', 'import0 object in __wbg_get_imports');
  const entries = block[1].split(/\n(?= {8}\w+: )/);
  const names = entries.map((e) => e.match(/^ {8}(\w+):/)?.[1]);
  if (names.some((n) => !n)) throw changed('import pruning', 'one `name: function` entry per import');
  const kept = entries.filter((e, i) => imported.has(`${ns}.${names[i]}`));
  return { glue: glue.replace(block[1], kept.join('\n')), dropped: entries.length - kept.length };
}

/** The imports of a wasm module, as `module.name`. */
export const importsOf = (wasm) => new Set(WebAssembly.Module.imports(new WebAssembly.Module(wasm)).map((i) => `${i.module}.${i.name}`));
