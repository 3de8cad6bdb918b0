// The framework bindings under server-side rendering, in Node as shipped (pkg/<name>.js): rendering opens
// nothing (Node has no EventSource here, so a client made would throw) and shows status 'connecting', what
// the browser's first render shows before its connection is made; a null URL shows 'closed'.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = (name) => pathToFileURL(join(root, 'pkg', `${name}.js`)).href;
const out = join(root, 'target', 'bindings-ssr');
/** The bindings are tested as shipped: without a build there is nothing to test (npm test builds first). */
const skip = !existsSync(join(root, 'pkg', 'react.js')) && 'pkg/ is not built (node scripts/build.mjs)';

test('React: renderToString shows connecting, or closed for a null URL, and opens nothing', { skip }, async () => {
  const { createElement } = await import('react');
  const { renderToString } = await import('react-dom/server');
  const { useManagedEventSource } = await import(pkg('react'));
  const Feed = ({ src }) => createElement('p', null, useManagedEventSource(src).status);
  assert.equal(renderToString(createElement(Feed, { src: '/feed' })), '<p>connecting</p>');
  assert.equal(renderToString(createElement(Feed, { src: null })), '<p>closed</p>');
});

test('Vue: renderToString shows connecting, or closed for a null URL, and opens nothing', { skip }, async () => {
  const { createSSRApp, h } = await import('vue');
  const { renderToString } = await import('vue/server-renderer');
  const { useManagedEventSource } = await import(pkg('vue'));
  const render = (src) =>
    renderToString(
      createSSRApp({
        setup() {
          const { status } = useManagedEventSource(src);
          return () => h('p', status.value);
        },
      }),
    );
  assert.equal(await render('/feed'), '<p>connecting</p>');
  assert.equal(await render(null), '<p>closed</p>');
});

/** A Svelte component compiled for the server by `svelte` ('svelte' 5 or 'svelte4'), bundled for Node. */
async function serverComponent(svelte) {
  mkdirSync(out, { recursive: true });
  const file = join(out, `${svelte}.mjs`);
  const source = `<script>
  import { managedEventSource } from 'managed-eventsource/svelte';
  export let src;
  const feed = managedEventSource(src);
</script>
<p>{$feed.status}</p>`;
  await build({
    stdin: { contents: 'export { default } from "./Feed.svelte";', resolveDir: out, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: file,
    logLevel: 'warning',
    alias: { 'managed-eventsource/svelte': join(root, 'pkg', 'svelte.js'), ...(svelte === 'svelte4' && { svelte: 'svelte4' }) },
    plugins: [
      {
        name: 'svelte',
        setup(b) {
          b.onResolve({ filter: /^\.\/Feed\.svelte$/ }, () => ({ path: 'Feed.svelte', namespace: 'feed' }));
          b.onLoad({ filter: /.*/, namespace: 'feed' }, async () => {
            const { compile } = await import(`${svelte}/compiler`);
            const options = svelte === 'svelte4' ? { generate: 'ssr' } : { generate: 'server' };
            return { contents: compile(source, options).js.code, loader: 'js', resolveDir: root };
          });
        },
      },
    ],
  });
  return (await import(`${pathToFileURL(file).href}?${Date.now()}`)).default;
}

test('Svelte 5: the store under render() from svelte/server shows connecting, or closed, and opens nothing', { skip }, async () => {
  const Feed = await serverComponent('svelte');
  const { render } = await import('svelte/server');
  assert.match(render(Feed, { props: { src: '/feed' } }).body, /<p>connecting<\/p>/);
  assert.match(render(Feed, { props: { src: null } }).body, /<p>closed<\/p>/);
});

test("Svelte 4: the store under a component's render() shows connecting, or closed, and opens nothing", { skip }, async () => {
  const Feed = await serverComponent('svelte4');
  assert.match(Feed.render({ src: '/feed' }).html, /<p>connecting<\/p>/);
  assert.match(Feed.render({ src: null }).html, /<p>closed<\/p>/);
});

test("Solid: on the server (solid-js's server build), the primitive opens nothing", { skip }, async () => {
  const { createRoot } = await import('solid-js');
  const { createManagedEventSource } = await import(pkg('solid'));
  const status = createRoot((dispose) => {
    const feed = createManagedEventSource('/feed');
    dispose();
    return feed.status();
  });
  assert.equal(status, 'closed');
});
