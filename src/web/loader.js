// The wasm module's life in a page: compiled once (off the main thread when a client can wait for it),
// instantiated once, and the Rust exports every client's shell is made through. Its bindings are the page's
// one copy of the module. The JavaScript half's other module-level state is page-wide by design too:
// client.js's FinalizationRegistry of shells, share.js's once-a-page warning, events.js's dispatches under
// way, api.js's transports.
//
// Two providers install it: the package's entry (`install`: wasm-bindgen's glue and the module's bytes) and
// the test build (`provide`: exports of a module that wasm-bindgen's test runner instantiated already).
//
// It imports nothing but errors.js and options.js (for the option check).

import { PREFIX } from './errors.js';
import { valid } from './options.js';

/**
 * What the JavaScript half calls in Rust (src/web/mod.rs), one interface for both providers.
 * @typedef {object} Rust
 * @property {(record: object, values: unknown[]) => number} shell builds a shell (not started) and returns its handle; throws an option's error
 * @property {(handle: number) => void} start starts it; throws what opening the first source threw
 * @property {(handle: number, code: number, a?: number, b?: number, c?: number) => number} input
 * @property {(handle: number) => string | undefined} lastEventId
 * @property {(handle: number) => void} free
 */

const NOT_STARTED = 0, COMPILING = 1, COMPILED = 2, INSTANTIATED = 3;

/** Where the module is: NOT_STARTED, COMPILING (`compiling` pending), COMPILED (`compiled` set), INSTANTIATED. */
let state = NOT_STARTED;
/** @type {Rust | null} the exports, once INSTANTIATED */
export let rust = null;
let glue = null, hex = null, compiling = null, compiled = null, checker = null, preparing = null;

/**
 * The package's provider: `g` is wasm-bindgen's glue (`initSync` and the exports); `h()` gives the modules'
 * bytes as hex, `{ shell, check }` (a function, so that the strings, which the build puts last in the
 * bundle, are read only once a client needs them). For a runtime that compiles no WebAssembly at run time
 * (Cloudflare Workers), `module` is the shell's module compiled ahead (the `workerd` build), and `h()` gives
 * no bytes: the option check cannot run, so a first client instantiates the shell in its constructor.
 */
export function install(g, h, module) {
  glue = g;
  hex = h;
  if (module) (compiled = module), (state = COMPILED);
}

/** The test build's provider: the exports of a module that is instantiated already. */
export function provide(exports) {
  rust = exports;
  state = INSTANTIATED;
}

export const instantiated = () => state === INSTANTIATED;

/** The module's bytes: the engine decodes hex natively where it can, else a loop. */
function bytes(text) {
  if (typeof Uint8Array.fromHex === 'function') return Uint8Array.fromHex(text);
  const b = new Uint8Array(text.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(text.substr(2 * i, 2), 16);
  return b;
}

/**
 * A compile error, worded for the user where the runtime is why: the page's Content-Security-Policy, a
 * runtime that refuses to compile WebAssembly at run time (Cloudflare Workers' "code generation disallowed
 * by embedder"), or one with no WebAssembly at all (React Native's Hermes).
 */
const explain = (e) =>
  typeof WebAssembly !== 'object'
    ? new Error(PREFIX + "this runtime has no WebAssembly (React Native's Hermes has none), which managed-eventsource needs; use the platform's own EventSource or a JavaScript client there", { cause: e })
    : /content.security|CSP/i.test(String(e?.message))
      ? new Error(PREFIX + "this page's Content-Security-Policy does not let it compile WebAssembly; add 'wasm-unsafe-eval' to script-src", { cause: e })
      : /code generation disallowed/i.test(String(e?.message))
        ? new Error(PREFIX + 'this runtime refuses to compile WebAssembly at run time (as Cloudflare Workers do), which managed-eventsource does on its first client', { cause: e })
        : e;

/** Instantiates the module now, compiling it on this thread if it is not compiled yet. Throws why not. */
export function instantiate() {
  if (state === INSTANTIATED) return;
  try {
    glue.initSync({ module: compiled ?? new WebAssembly.Module(bytes(hex().shell)) });
  } catch (e) {
    throw explain(e);
  }
  compiled = null;
  state = INSTANTIATED;
  const { shell, start, input, lastEventId, free } = glue;
  rust = { shell, start, input, lastEventId, free };
}

/** Compiles the module off the main thread, once; a compile that fails may be tried again. */
function compile() {
  if (state === NOT_STARTED) {
    state = COMPILING;
    // In a promise's executor: a runtime with no WebAssembly rejects (explained) rather than throws.
    compiling = new Promise((resolve) => resolve(WebAssembly.compile(bytes(hex().shell)))).then(
      (m) => {
        if (state === COMPILING) (compiled = m), (state = COMPILED);
      },
      (e) => {
        if (state === COMPILING) state = NOT_STARTED;
        throw explain(e);
      },
    );
  }
  return compiling;
}

/**
 * Resolves once the module is instantiated: compiled off the main thread, starting in a task after the
 * caller's (an engine that compiles on threads of its own would otherwise have them compete with the rest
 * of the caller's task), then instantiated. Rejects with why it cannot be.
 */
export const whenInstantiated = () =>
  new Promise((resolve) => setTimeout(resolve)).then(() => (state === INSTANTIATED || state === COMPILED ? undefined : compile())).then(instantiate);

/** Compiles and instantiates the module off the main thread, so that a client made later does neither. */
export function prepare() {
  return (preparing ??= whenInstantiated().catch((e) => {
    preparing = null;
    throw e;
  }));
}

/**
 * Whether the option values `values` (see readOptions) pass every rule the shell checks, asked of the
 * option check's module (src/check.rs, 2.3 kB), so that a client can be made before the shell's module is
 * compiled. False where that module cannot be compiled either (the page's CSP): the caller then
 * instantiates the shell's, which throws why.
 */
export function optionsPass(values) {
  try {
    checker ??= new WebAssembly.Instance(new WebAssembly.Module(bytes(hex().check))).exports;
    return valid(checker, values);
  } catch {
    return false;
  }
}
