// The build's edits of wasm-bindgen's output, each on a fixture in the shapes wasm-bindgen 0.2.130 writes:
// what each step changes, and that a step finding nothing to edit fails with a message naming it (so a
// wasm-bindgen upgrade breaks the build loudly, not the package quietly).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import binaryen from 'binaryen';
import { transformSync } from 'esbuild';
import { CUTS, diet, importsOf, pruneImports } from '../../scripts/glue.mjs';
import { minifyNames, names } from '../../scripts/wasm-names.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const glue = readFileSync(join(here, 'fixtures', 'glue-0.2.130.js'), 'utf8');
const SNIPPET = './snippets/managed-eventsource-0123456789abcdef/src/web/api.js';
const parses = (js) => transformSync(js, { format: 'esm', loader: 'js' });

/** A module with the imports and exports the fixture's glue names. */
function module() {
  const m = new binaryen.Module();
  m.addFunctionImport('now', './managed_eventsource_bg.js', '__wbg_now_0123456789abcdef', binaryen.none, binaryen.f64);
  m.addFunctionImport('undef', './managed_eventsource_bg.js', '__wbg___wbindgen_is_undefined_be5b34249ff1fc15', binaryen.f64, binaryen.i32);
  m.addFunctionImport('attach', SNIPPET, 'attach', binaryen.none, binaryen.none);
  m.setMemory(1, 1, 'memory');
  m.addFunction('shell', binaryen.none, binaryen.f64, [], m.block(null, [m.call('attach', [], binaryen.none), m.call('now', [], binaryen.f64)], binaryen.f64));
  m.addFunction('free', binaryen.createType([binaryen.f64]), binaryen.none, [], m.drop(m.call('undef', [m.local.get(0, binaryen.f64)], binaryen.i32)));
  m.addFunction('start', binaryen.none, binaryen.none, [], m.nop());
  m.addFunctionExport('shell', 'shell');
  m.addFunctionExport('free', 'free');
  m.addFunctionExport('start', '__wbindgen_start');
  const wasm = m.emitBinary();
  m.dispose();
  return wasm;
}

test('the diet cuts the async loader, the deprecated arguments and the decoder renewal, and the glue still parses', () => {
  const out = diet(glue);
  for (const gone of ['__wbg_load', '__wbg_init_once', '__wbg_init_promise', 'MAX_SAFARI_DECODE_BYTES', 'console.warn', '__wbg_init as default']) {
    assert.ok(!out.includes(gone), `${gone} is still there`);
  }
  assert.match(out, /export \{ initSync \};/);
  assert.match(out, /\(\{ module \} = module\);/);
  assert.match(out, /const decodeText = \(bytes\) => cachedTextDecoder\.decode\(bytes\);/);
  assert.ok(out.includes('function initSync(module)') && out.includes('new WebAssembly.Instance(module, imports)'), 'initSync kept');
  parses(out);
});

test('each cut of the diet that finds nothing fails, naming itself', () => {
  // The string cuts apply only to a glue that passes strings into wasm; this one passes none.
  assert.equal(glue.includes('function passStringToWasm0'), false);
  for (const cut of CUTS.filter((c) => !c.when)) {
    const broken = glue.replace(cut.re, '\n// (a newer wasm-bindgen wrote this differently)\n');
    assert.notEqual(broken, glue, `the fixture has what '${cut.name}' cuts`);
    assert.throws(() => diet(broken), (e) => e.message.includes(`cut '${cut.name}'`) && e.message.includes("wasm-bindgen's glue has changed"), cut.name);
  }
  // With the string path, the string cuts must find what they cut too.
  assert.throws(() => diet(glue + '\nfunction passStringToWasm0(arg, malloc, realloc) {}\n'), /cut 'encoder without realloc'/);
});

test('import pruning drops the functions for imports the module no longer has, and nothing else', () => {
  // As the build runs it: after the names are shortened (and wasm-opt has dropped imports).
  const wasm = module();
  assert.deepEqual([...importsOf(wasm)].sort(), ['./managed_eventsource_bg.js.__wbg___wbindgen_is_undefined_be5b34249ff1fc15', './managed_eventsource_bg.js.__wbg_now_0123456789abcdef', `${SNIPPET}.attach`].sort());
  const named = minifyNames(wasm, diet(glue));
  const before = (named.glue.match(/\n {8}\w+: function/g) ?? []).length;
  const { glue: out, dropped } = pruneImports(named.glue, named.wasm);
  assert.equal(dropped, 1, 'the throw import, which the module does not import');
  assert.equal((out.match(/\n {8}\w+: function/g) ?? []).length, before - 1);
  assert.ok(!out.includes('throw new Error(getStringFromWasm0'), 'the throw import is gone');
  assert.ok(out.includes('performance.now()') && out.includes('arg0 === undefined'), 'the imports the module has are kept');
  parses(out);
  assert.throws(() => pruneImports(named.glue.replace('const import0 = {', 'const imports0 = {'), named.wasm), /import pruning.*wasm-bindgen's glue has changed/);
});

test('name shortening renames imports and exports in the wasm and the glue together', async () => {
  const wasm = module();
  const { wasm: short, glue: out, saved } = minifyNames(wasm, diet(glue));
  assert.ok(saved > 80, `saved ${saved} bytes`);
  const { imports, exports } = names(short);
  assert.ok(imports.every(([m, f]) => m.length <= 2 && f.length <= 2), JSON.stringify(imports));
  assert.ok(exports.every((e) => e.length <= 2 || e === 'memory'), JSON.stringify(exports));
  for (const name of ['__wbg_now_0123456789abcdef', '__wbg___wbindgen_is_undefined_be5b34249ff1fc15']) {
    assert.ok(!out.includes(name), `${name}, which the module imports, is renamed in the glue`);
  }
  assert.ok(!/wasm\.(shell|free|__wbindgen_start)\b/.test(out), 'the glue calls the exports by their new names');
  parses(out);
  // The renamed module still links against the glue's import object: instantiate it with objects shaped
  // as the rewritten glue builds them.
  const objects = {};
  for (const [m, f] of imports) (objects[m] ??= {})[f] = () => 0;
  new WebAssembly.Instance(new WebAssembly.Module(short), objects);
});

test('name shortening fails, naming itself, when the glue does not define an import the wasm has', () => {
  const wasm = module();
  const without = diet(glue).replace('__wbg_now_0123456789abcdef: function', 'nowAgain: function');
  assert.throws(() => minifyNames(wasm, without), /build: name shortening.*__wbg_now_0123456789abcdef/);
  const unknownExport = diet(glue).replace('wasm.free(handle)', 'wasm.release(handle)');
  assert.throws(() => minifyNames(wasm, unknownExport), /build: name shortening.*release/);
});
