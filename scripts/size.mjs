// `npm run size`: what the npm package costs a page, gzip -9, with the JavaScript peers measured in the
// same run (their published bundles from node_modules) as the baseline.

import { readFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const gz = (path) => gzipSync(readFileSync(path), { level: 9 }).length;
const raw = (path) => readFileSync(path).length;
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;

const files = ['managed_eventsource_bg.wasm', 'managed_eventsource.js', 'index.js'];
let total = 0;
console.log(`${'pkg/ file'.padEnd(34)} ${'bytes'.padStart(8)} ${'gzip -9'.padStart(8)}`);
for (const f of files) {
  const p = join(root, 'pkg', f);
  const g = gz(p);
  total += g;
  console.log(`${f.padEnd(34)} ${String(raw(p)).padStart(8)} ${String(g).padStart(8)}`);
}
console.log(`${'total (what a page loads)'.padEnd(34)} ${''.padStart(8)} ${String(total).padStart(8)}  = ${kb(total)} (target 10 kB: ${total <= 10240 ? 'met' : `missed by ${kb(total - 10240)}`})`);

const peers = [
  ['reconnecting-eventsource', ['node_modules/reconnecting-eventsource/build/esm/reconnecting-eventsource.js']],
  ['@microsoft/fetch-event-source', ['node_modules/@microsoft/fetch-event-source/lib/esm/fetch.js', 'node_modules/@microsoft/fetch-event-source/lib/esm/parse.js']],
];
console.log('\nJavaScript peers, unminified as published, gzip -9 (baseline, same run):');
for (const [name, paths] of peers) {
  const ps = paths.map((p) => join(root, p));
  if (!ps.every(existsSync)) {
    console.log(`  ${name.padEnd(32)} not installed`);
    continue;
  }
  const g = ps.reduce((n, p) => n + gz(p), 0);
  console.log(`  ${name.padEnd(32)} ${String(g).padStart(8)}   managed-eventsource is ${(total / g).toFixed(1)}x`);
}
