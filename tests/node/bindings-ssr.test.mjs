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

test("Solid: renderToString (solid-js's server build) shows connecting, or closed for a null URL, and opens nothing", { skip }, async () => {
  const { renderToString } = await import('solid-js/web');
  const { createManagedEventSource } = await import(pkg('solid'));
  assert.equal(renderToString(() => createManagedEventSource('/feed').status()), 'connecting');
  assert.equal(renderToString(() => createManagedEventSource(null).status()), 'closed');
});

/** The Angular of tests/angular/ (a package of its own; installed by scripts/setup.mjs --browser). */
const angularModules = join(root, 'tests', 'angular', 'node_modules');
const noAngular = !existsSync(join(angularModules, '@angular', 'core')) && 'tests/angular is not installed (node scripts/setup.mjs --browser)';

/** pkg/angular.js and tests/angular's @angular/core, one copy of it, bundled for Node. */
async function angularBundle() {
  mkdirSync(out, { recursive: true });
  const file = join(out, 'angular.mjs');
  await build({
    stdin: { contents: `export * as core from '@angular/core'; export { sseResource } from ${JSON.stringify(join(root, 'pkg', 'angular.js'))};`, resolveDir: out, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: file,
    logLevel: 'warning',
    nodePaths: [angularModules],
  });
  return import(`${pathToFileURL(file).href}?${Date.now()}`);
}

test("Angular: sseResource on a server platform opens nothing; its status is connecting, or closed for a null URL, and nothing reaches the ErrorHandler", { skip: skip || noAngular }, async () => {
  const { core, sseResource } = await angularBundle();
  const { ApplicationRef, ErrorHandler, Injector, PLATFORM_ID, createEnvironmentInjector, provideZonelessChangeDetection } = core;
  const made = [];
  /** A client class that only records that it was made (the package's own would throw here: Node has no EventSource). */
  class Client extends EventTarget {
    status = 'connecting';
    attempt = 0;
    constructor(url) {
      super();
      made.push(String(url));
    }
    reconnectNow() {}
    close() {}
  }
  // What Angular's server platform gives an application: PLATFORM_ID 'server', and (with Domino globals,
  // which some applications install) possibly a document.
  for (const document of [undefined, {}]) {
    const errors = [];
    const injector = createEnvironmentInjector(
      [
        // A root-scoped injector, as an application's is, so that root effects run on its tick().
        { provide: core.ɵINJECTOR_SCOPE, useValue: 'root' },
        provideZonelessChangeDetection(),
        { provide: PLATFORM_ID, useValue: 'server' },
        { provide: ErrorHandler, useValue: { handleError: (e) => errors.push(e) } },
      ],
      Injector.create({ providers: [] }),
    );
    if (document) globalThis.document = document;
    try {
      const feed = sseResource('http://127.0.0.1:9/feed', { injector, client: Client });
      const none = sseResource(() => null, { injector, client: Client });
      injector.get(ApplicationRef).tick();
      assert.deepEqual(made, [], `clients made on the server (document ${document ? 'set' : 'absent'})`);
      assert.deepEqual(errors, []);
      assert.equal(feed.status(), 'connecting');
      assert.equal(none.status(), 'closed');
    } finally {
      delete globalThis.document;
      injector.destroy();
    }
  }
});
