// Bundles the framework bindings' in-browser suites (tests/bindings/<suite>.*) with the real frameworks into
// target/bindings/<suite>.mjs, which tests/browser/<suite>.mjs loads, so that tests/page/suites.mjs runs
// them like every other suite, in each engine.
//
// Each bundle holds the framework (React and Vue in their development builds, so that StrictMode's double
// mount happens), the component code (Svelte files compiled by Svelte 5's or Svelte 4's own compiler) and the
// binding as built into pkg/ (pkg/<name>.js); the binding's import of the package ('./index.js') and the
// suite's imports of /pkg/ and /tests/browser/ stay URLs, so the page loads one copy of the package, shared
// by the suite and the binding, as a user's bundler would.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(root, 'target', 'bindings');

/** Each suite: its entry, the binding it tests, and how its components are compiled. */
export const SUITES = {
  react: { entry: 'react.jsx', binding: 'react', jsx: { jsx: 'automatic' } },
  vue: { entry: 'vue.mjs', binding: 'vue' },
  svelte: { entry: 'svelte.mjs', binding: 'svelte', svelte: 'svelte' },
  svelte4: { entry: 'svelte4.mjs', binding: 'svelte', svelte: 'svelte4' },
  solid: { entry: 'solid.jsx', binding: 'solid', jsx: { jsx: 'automatic', jsxImportSource: 'solid-js/h' } },
};

/** Compiles .svelte files with the compiler of `svelte` ('svelte' is 5, 'svelte4' is 4). */
function sveltePlugin(svelte) {
  return {
    name: 'svelte',
    setup(b) {
      b.onLoad({ filter: /\.svelte$/ }, async ({ path }) => {
        const { compile } = await import(`${svelte}/compiler`);
        const options = svelte === 'svelte4' ? { filename: path, css: 'injected' } : { filename: path, generate: 'client', dev: true };
        const { js } = compile(readFileSync(path, 'utf8'), options);
        return { contents: js.code, loader: 'js', resolveDir: dirname(path) };
      });
    },
  };
}

/** The package's own URLs stay URLs: the binding's './index.js' (and './fetch.js') become /pkg/ ones. */
const urls = {
  name: 'urls',
  setup(b) {
    b.onResolve({ filter: /^\/(pkg|tests\/browser)\// }, ({ path }) => ({ path, external: true }));
    b.onResolve({ filter: /^\.\/(index|fetch)\.js$/ }, ({ path, importer }) =>
      dirname(importer) === join(root, 'pkg') ? { path: `/pkg/${path.slice(2)}`, external: true } : undefined,
    );
  },
};

/** A page that loads one suite's bundle (?suite=NAME) without running it, for the tests that mount a
 * component in an iframe (scenarios.mjs: `share` across two frames, so it imports the share entry first);
 * the bundle's scenarios() calls leave each mount function in `window.mounts`. */
const FRAME = `<!doctype html>
<meta charset="utf-8">
<script type="module">
  // As an app that shares does: the share entry imported once, beside the binding.
  await import('/pkg/share.js');
  await import(\`/target/bindings/\${new URLSearchParams(location.search).get('suite')}.mjs\`);
  window.loaded = true;
</script>
`;

/** Builds the bundles of `names` (all by default); each file is replaced whole, so engines may build at once. */
export async function buildBindingSuites(names = Object.keys(SUITES)) {
  mkdirSync(out, { recursive: true });
  const frame = join(out, 'frame.html');
  writeFileSync(`${frame}.${process.pid}`, FRAME);
  renameSync(`${frame}.${process.pid}`, frame);
  for (const name of names) {
    const s = SUITES[name];
    const result = await build({
      entryPoints: [join(here, s.entry)],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      write: false,
      logLevel: 'warning',
      conditions: ['development', 'browser'],
      alias: { [`managed-eventsource/${s.binding}`]: join(root, 'pkg', `${s.binding}.js`), ...(s.svelte === 'svelte4' && { svelte: 'svelte4' }) },
      define: {
        'process.env.NODE_ENV': '"development"',
        __VUE_OPTIONS_API__: 'true',
        __VUE_PROD_DEVTOOLS__: 'false',
        __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
      },
      ...s.jsx,
      plugins: [urls, ...(s.svelte ? [sveltePlugin(s.svelte)] : [])],
    });
    const file = join(out, `${name}.mjs`);
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, result.outputFiles[0].contents);
    renameSync(tmp, file);
  }
}
