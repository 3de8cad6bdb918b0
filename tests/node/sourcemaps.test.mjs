// The JavaScript half ships minified with its source maps beside it: each minified file of pkg/ names its
// map, the map names each source as it stands in the repository with its text inside, and a stack trace
// through the package, mapped as Node maps it (--enable-source-maps) or a browser's devtools do, names our
// files and functions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');
const NOT_BUILT = 'pkg/ is not built: node scripts/build.mjs --no-demo';

test('every minified file of the package names its source map, which ships beside it with every source inside', () => {
  assert.ok(existsSync(join(pkg, 'core.js')), NOT_BUILT);
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  assert.ok(manifest.files.includes('*.map'), 'the maps are in the package');
  // The server module ships readable, with no map.
  const minified = readdirSync(pkg).filter((f) => /\.c?js$/.test(f) && !f.startsWith('server.'));
  assert.ok(minified.length >= 15, minified.join());
  for (const file of minified) {
    const code = readFileSync(join(pkg, file), 'utf8');
    assert.match(code, new RegExp(`\\n//# sourceMappingURL=${file.replace('.', '\\.')}\\.map\\n$`), file);
    const map = JSON.parse(readFileSync(join(pkg, `${file}.map`), 'utf8'));
    assert.equal(map.sources.length, map.sourcesContent.length, file);
    for (const [i, source] of map.sources.entries()) {
      assert.match(source, /^managed-eventsource\//, `${file}: ${source}`);
      const inRepo = join(root, source.replace('managed-eventsource/', ''));
      // Each of our sources is the repository's file, word for word (the glue is wasm-bindgen's output; the
      // lines the build writes are named only).
      if (/\/src\//.test(source)) assert.equal(map.sourcesContent[i], readFileSync(inRepo, 'utf8'), `${file}: ${source}`);
      else if (!source.endsWith('/glue.js')) assert.equal(map.sourcesContent[i], null, `${file}: ${source}`);
    }
  }
  const core = JSON.parse(readFileSync(join(pkg, 'core.js.map'), 'utf8'));
  for (const room of ['api.js', 'client.js', 'events.js', 'loader.js']) assert.ok(core.sources.includes(`managed-eventsource/src/web/${room}`), room);
  const fetchMap = JSON.parse(readFileSync(join(pkg, 'fetch.js.map'), 'utf8'));
  assert.ok(fetchMap.sources.includes('managed-eventsource/src/web/parse.js'), 'the fetch entry maps its parser');
});

test("a stack trace through the minified package names our files and functions (Node's --enable-source-maps)", () => {
  assert.ok(existsSync(join(pkg, 'core.js')), NOT_BUILT);
  // No EventSource in Node: the constructor throws from the JavaScript half, through api.js and errors.js.
  const script = `
    const { ManagedEventSource } = await import(${JSON.stringify(join(pkg, 'index.js'))});
    try { new ManagedEventSource('http://127.0.0.1:1/x'); } catch (e) { console.log(e.stack); }`;
  for (const flag of ['--enable-source-maps', null]) {
    const r = spawnSync(process.execPath, [...(flag ? [flag] : []), '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /this runtime has no EventSource/);
    if (flag) {
      // The throw in errors.js, called from api.js's start (the call on the line before the message), each
      // at its line in the repository's file.
      const at = (file, text) => readFileSync(join(root, 'src', 'web', file), 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
      assert.match(r.stdout, new RegExp(`\\(.*managed-eventsource/src/web/errors\\.js:${at('errors.js', 'throw new TypeError(PREFIX')}:\\d+\\)`), r.stdout);
      assert.match(r.stdout, new RegExp(`at start \\(.*managed-eventsource/src/web/api\\.js:${at('api.js', 'this runtime has no EventSource') - 1}:\\d+\\)`), r.stdout);
    } else assert.doesNotMatch(r.stdout, /src\/web\//, 'without the maps, the trace is the minified file');
  }
});
