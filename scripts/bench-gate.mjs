// npm run bench:gate: admit() decisions a second on one core, for managed-eventsource/server's gate as it
// ships (pkg/server.js), against a baseline measured in the same run: a loop that only reads the clock,
// which every decision must do. Target (issue 27): at least 1,000,000 decisions a second.
//
//   node scripts/bench-gate.mjs [--rounds 7] [--n 2000000]
import { existsSync } from 'node:fs';

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? d : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 7);
const N = arg('n', 2_000_000);
const shipped = new URL('../pkg/server.js', import.meta.url);
const { createGate } = await import(existsSync(shipped) ? shipped : new URL('../src/server/index.js', import.meta.url));

let sink = 0;
const cases = {
  'baseline: Date.now() alone': () => {
    for (let i = 0; i < N; i++) sink += Date.now() & 1;
  },
  'admitted and released': () => {
    const gate = createGate({ ratePerSec: 1e12, burst: 1e12 });
    for (let i = 0; i < N; i++) {
      const a = gate.admit();
      if (a.ok) a.release();
    }
  },
  'refused, paced (place in line)': () => {
    const gate = createGate({ ratePerSec: 1e-3, burst: 1, pace: true });
    for (let i = 0; i < N; i++) sink += gate.admit().retryMs & 1;
  },
  'refused, random wait (seed 001)': () => {
    const gate = createGate({ ratePerSec: 1e-3, burst: 1 });
    for (let i = 0; i < N; i++) sink += gate.admit().retryMs & 1;
  },
  'refused, maxStreams full': () => {
    const gate = createGate({ ratePerSec: 1e12, burst: 1e12, maxStreams: 1 });
    gate.admit();
    for (let i = 0; i < N; i++) sink += gate.admit().ok ? 1 : 0;
  },
};

const rates = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of Object.entries(cases).sort(() => Math.random() - 0.5)) {
    const t = process.hrtime.bigint();
    run();
    rates[name].push(N / (Number(process.hrtime.bigint() - t) / 1e9));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const base = median(rates['baseline: Date.now() alone']);
console.log(`managed-eventsource/server gate, Node ${process.version}, one core, ${N.toLocaleString('en-US')} decisions a round, median of ${ROUNDS} shuffled rounds\n`);
console.log('case                                 decisions/s   ns each   vs clock alone');
let worst = Infinity;
for (const [name, xs] of Object.entries(rates)) {
  const m = median(xs);
  if (!name.startsWith('baseline')) worst = Math.min(worst, m);
  console.log(`${name.padEnd(36)} ${Math.round(m).toLocaleString('en-US').padStart(12)}   ${(1e9 / m).toFixed(1).padStart(7)}   ${(base / m).toFixed(2).padStart(6)}x`);
}
console.log(`\nslowest case: ${Math.round(worst).toLocaleString('en-US')} decisions/s; target 1,000,000: ${worst >= 1e6 ? 'met' : 'MISSED'}`);
if (worst < 1e6) process.exitCode = 1;
