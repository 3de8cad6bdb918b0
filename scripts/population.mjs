// `npm run population`: real clients beside the simulator's prediction (seed 000's advice: stop the
// service, wait, start it, and watch the arrival curve).
//
// The development server (www/server.mjs) runs in a child process on 127.0.0.1. In this process, N clients
// connect to it: the package built for Node (pkg/index.js, with the `eventsource` package as the global
// EventSource), or for the fixed-retry baseline the `eventsource` package itself, which retries every 3 s
// as browsers do. Once all are connected the server stops listening for the outage (connections are
// refused) and starts again; it counts arrivals per 100 ms, the clients count their attempts. Then the
// simulator (examples/simulate.rs, the library's own ladder) runs the same scenario, and both are
// printed side by side with the ratio measured ÷ simulated.
//
//   node scripts/population.mjs            2,000 clients, 10 s outage, every configuration (about 8 minutes)
//   node scripts/population.mjs --quick    300 clients, 5 s outage, three configurations (under a minute);
//                                          exits 1 if a measured peak differs from the simulated one by more
//                                          than the tolerance below. `npm test` runs this.
//   node scripts/population.mjs --fleet    two nodes sharing a Redis log behind a proxy, one restarted
//                                          (scripts/fleet.mjs; with --quick, 300 clients)
//   node scripts/population.mjs --write    also writes docs/population.svg and the docs/storm.md section between
//                                          <!-- population:begin --> and <!-- population:end -->

import { fork, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { writeSection } from './sections.mjs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource as Base } from 'eventsource';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--fleet`: resume without loss across two nodes sharing a log (scripts/fleet.mjs), not the restart below.
if (process.argv.includes('--fleet')) {
  await import('./fleet.mjs');
  process.exit(process.exitCode ?? 0);
}
const quick = process.argv.includes('--quick');
const write = process.argv.includes('--write');
const N = quick ? 300 : 2000;
const OUTAGE = quick ? 5000 : 10000;
const MAX_MS = quick ? 8000 : 30000;
const RATE = N / 20; // a budget that fills in N / C = 20 s
/** `--only TEXT`: run the configurations whose label contains TEXT (for trying one; not with --write). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
/** Quick mode fails when measured and simulated peak arrivals a second differ by more than this factor. */
const TOLERANCE = 1.5;

const say = (msg) => console.log(`[population] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the configurations -----------------------------------------------------------------------------

const ladder = (jitter) => ({ jitter, baseMs: 1000, maxMs: MAX_MS });
const CONFIGS = [
  { label: 'browser: fixed 3 s', native: true, sim: { strategy: 'fixed', base_ms: 3000, max_ms: 3000 } },
  { label: 'none', options: ladder('none'), sim: { strategy: 'none' } },
  { label: 'equal', options: ladder('equal'), sim: { strategy: 'equal' }, full: true },
  { label: 'full', options: ladder('full'), sim: { strategy: 'full' } },
  { label: 'decorrelated', options: ladder('decorrelated'), sim: { strategy: 'decorrelated' }, full: true },
  {
    label: `full, bucket ${RATE}/s + random hints 5–25 s (seed 001)`,
    options: { ...ladder('full'), retryHintEvent: 'retry-hint' },
    budget: `rate=${RATE}&burst=${RATE * 2}`,
    sim: { strategy: 'full', admission: `bucket:${RATE}:${RATE * 2}`, hints: 'random:5000:20000' },
    full: true,
    filling: true,
  },
  {
    label: `full, bucket ${RATE}/s + paced hints, front up (issue 17)`,
    options: { ...ladder('full'), retryHintEvent: 'retry-hint' },
    budget: `rate=${RATE}&burst=${RATE * 2}&paced=1&front=1&spreadMs=500`,
    front: true,
    sim: { strategy: 'full', admission: `bucket:${RATE}:${RATE * 2}`, hints: 'paced:500', front: 'true' },
    full: true,
    filling: true,
  },
].filter((c) => (!quick || !c.full) && (!only || c.label.includes(only)));

// ---- clients ------------------------------------------------------------------------------------------

/** Connection attempts by every client, counted where they leave: the EventSource's fetch. */
let attempts = 0;
const counting = (url, init) => {
  attempts++;
  return fetch(url, init);
};
class CountedEventSource extends Base {
  constructor(url, init) {
    super(url, { ...init, fetch: counting });
  }
}
globalThis.EventSource = CountedEventSource;
const { ManagedEventSource } = await import(join(root, 'pkg', 'index.js'));

/** N clients of a configuration. */
function clients(config, url) {
  const list = [];
  for (let i = 0; i < N; i++) list.push(config.native ? new CountedEventSource(url) : new ManagedEventSource(url, config.options));
  return list;
}

// ---- the server ---------------------------------------------------------------------------------------

async function startServer() {
  const child = fork(join(root, 'www', 'server.mjs'), ['0'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/demo: (http:\/\/[\d.:]+)\//);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error(`the server exited: ${out}`)));
  });
  return { url, stop: () => child.kill() };
}

const get = async (url) => (await fetch(url, { cache: 'no-store' })).json();

// ---- one run -------------------------------------------------------------------------------------------

/** Simulator seeds per configuration: one population is one sample, so the figures compared are the
 * medians of this many simulated populations (the curves drawn are the first seed's). */
const SEEDS = 9;

function simulateOnce(config, seed) {
  const params = { clients: N, outage_ms: OUTAGE, base_ms: 1000, max_ms: MAX_MS, admission: 'unlimited', hints: 'none', front: 'false', seed, ...config.sim };
  const args = Object.entries(params).map(([k, v]) => `${k}=${v}`);
  const r = spawnSync('cargo', ['run', '--quiet', '--example', 'simulate', '--', ...args], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`simulate failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function simulate(config) {
  const runs = Array.from({ length: SEEDS }, (_, i) => simulateOnce(config, i + 1));
  return {
    ...runs[0],
    peak: median(runs.map((r) => peakAfter(r.arrivals, OUTAGE))),
    all_connected_ms: runs.some((r) => r.all_connected_ms == null) ? null : median(runs.map((r) => r.all_connected_ms)),
    attempts: median(runs.map((r) => r.attempts)),
    connected: runs[0].connected,
  };
}

/** Per second from the drop, from the server's 100 ms buckets of arrivals. */
function perSecond(arrivals) {
  const all = [];
  for (const kind of ['accepted', 'shed', 'refused']) {
    arrivals[kind].forEach((n, i) => {
      const s = Math.floor(i / 10);
      all[s] = (all[s] ?? 0) + n;
    });
  }
  return Array.from(all, (n) => n ?? 0);
}

async function run(config, server) {
  say(`${config.label}: ${N} clients connecting`);
  await get(`${server.url}/api/retry?fixed=1`);
  await get(`${server.url}/api/shed?on=0&minMs=5000&spreadMs=20000`);
  await get(`${server.url}/api/budget?rate=0`);
  const list = clients(config, `${server.url}/api/stream`);
  for (let t = 0; (await get(`${server.url}/api/arrivals`)).open < N; t++) {
    if (t > 600) throw new Error('clients did not connect');
    await sleep(100);
  }
  if (config.budget) await get(`${server.url}/api/budget?${config.budget}`);
  await sleep(500);
  await get(`${server.url}/api/arrivals?reset=1`);
  attempts = 0;
  const since = performance.now();
  const seconds = OUTAGE / 1000;
  // A restart: the listening socket closes (refused connections), or with a front, the front answers.
  await get(`${server.url}/api/${config.front ? 'outage' : 'stop'}?seconds=${seconds}`);
  // Connected means admitted: the server holds N streams again (a soft rejection opens and ends at once,
  // so the clients' own open events would count it). While it restarts, the server cannot answer.
  const limit = OUTAGE + 4 * MAX_MS + 60_000;
  let open = 0;
  let allConnectedMs = null;
  while (performance.now() - since < limit) {
    await sleep(100);
    if (performance.now() - since < OUTAGE) continue;
    try {
      open = (await get(`${server.url}/api/arrivals`)).open;
    } catch {
      continue;
    }
    if (open >= N) {
      allConnectedMs = performance.now() - since;
      break;
    }
  }
  const measured = { connected: open, allConnectedMs, attempts, perSecond: perSecond(await get(`${server.url}/api/arrivals`)) };
  for (const es of list) es.close();
  await sleep(300);
  const sim = simulate(config);
  return { config, measured, sim };
}

// ---- figures ------------------------------------------------------------------------------------------

const peakAfter = (perSecond, fromMs) => Math.max(0, ...perSecond.slice(Math.floor(fromMs / 1000)));
const fmt = (n) => (n == null ? '—' : Math.round(n).toLocaleString('en-US'));
const secs = (ms) => (ms == null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
const ratio = (a, b) => (a == null || b == null || b === 0 ? '—' : (a / b).toFixed(2));

function rows(results) {
  return results.map(({ config, measured, sim }) => {
    const mPeak = peakAfter(measured.perSecond, OUTAGE);
    const sPeak = sim.peak;
    const mAll = measured.allConnectedMs == null ? null : measured.allConnectedMs - OUTAGE;
    const sAll = sim.all_connected_ms == null ? null : sim.all_connected_ms - OUTAGE;
    return {
      label: config.label,
      mPeak,
      sPeak,
      peakRatio: mPeak / sPeak,
      mAll,
      sAll,
      mAttempts: measured.attempts,
      sAttempts: sim.attempts,
      mWasted: measured.attempts - N,
      sWasted: sim.attempts - sim.connected,
      filling: config.filling,
      cells: [
        config.label,
        fmt(mPeak),
        fmt(sPeak),
        ratio(mPeak, sPeak),
        secs(mAll),
        secs(sAll),
        ratio(mAll, sAll),
        fmt(measured.attempts),
        fmt(sim.attempts),
        ratio(measured.attempts, sim.attempts),
        fmt(measured.attempts - N),
        config.filling ? `${(mAll / 1000 / (N / RATE)).toFixed(2)}` : '',
      ],
    };
  });
}

const HEADER = ['clients', 'peak/s measured', 'simulated', 'ratio', 'all connected measured', 'simulated', 'ratio', 'attempts measured', 'simulated', 'ratio', 'wasted measured', 'measured ÷ N/C'];

function markdown(table) {
  let md = `| ${HEADER.join(' | ')} |\n| --- |${' ---: |'.repeat(HEADER.length - 1)}\n`;
  for (const r of table) md += `| ${r.cells.join(' | ')} |\n`;
  return md;
}

/** Arrivals a second after the drop, measured (solid) and simulated (dashed), on the same axes. */
function svg(results) {
  const [w, h, left, bottom, top] = [760, 380, 60, 40, 44];
  const colors = ['#57606a', '#d1242f', '#1a7f37', '#0969da', '#8250df', '#bf8700', '#116329'];
  const chosen = results.filter(({ config }) => !config.filling);
  const seconds = Math.ceil((OUTAGE + MAX_MS * 1.6) / 1000);
  const max = Math.max(1, ...chosen.flatMap(({ measured, sim }) => [...measured.perSecond.slice(0, seconds), ...sim.arrivals.slice(0, seconds)]));
  const x = (i) => left + (i / seconds) * (w - left - 20);
  const y = (v) => h - bottom - (Math.log10(1 + v) / Math.log10(1 + max)) * (h - bottom - top);
  const path = (values) => values.slice(0, seconds).map((v, i) => `${i ? 'L' : 'M'}${x(i + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  let out = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n`;
  out += `<text x="${left}" y="20" font-size="14" font-weight="bold">${N.toLocaleString('en-US')} real clients, ${OUTAGE / 1000} s outage: arrivals a second, measured (solid) and simulated (dashed)</text>\n`;
  for (const v of [1, 10, 100, 1000, 10000].filter((v) => v <= max)) {
    out += `<line x1="${left}" x2="${w - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>\n`;
  }
  for (let s = 0; s <= seconds; s += 5) out += `<text x="${x(s)}" y="${h - bottom + 16}" text-anchor="middle">${s}</text>\n`;
  out += `<text x="${(left + w) / 2}" y="${h - 6}" text-anchor="middle">seconds since the drop (the service returns at ${OUTAGE / 1000} s)</text>\n`;
  out += `<line x1="${x(OUTAGE / 1000)}" x2="${x(OUTAGE / 1000)}" y1="${top}" y2="${h - bottom}" stroke="#999" stroke-dasharray="2 3"/>\n`;
  chosen.forEach(({ config, measured, sim }, i) => {
    const c = colors[i % colors.length];
    out += `<path d="${path(measured.perSecond)}" fill="none" stroke="${c}" stroke-width="1.6"/>\n`;
    out += `<path d="${path(sim.arrivals)}" fill="none" stroke="${c}" stroke-width="1.2" stroke-dasharray="5 4"/>\n`;
    out += `<rect x="${w - 220}" y="${top + 4 + i * 16}" width="12" height="3" fill="${c}"/><text x="${w - 202}" y="${top + 9 + i * 16}">${config.label}</text>\n`;
  });
  return out + '</svg>\n';
}

// ---- main ---------------------------------------------------------------------------------------------

if (!existsSync(join(root, 'pkg', 'index.js'))) {
  console.error('population: pkg/index.js is missing; run npm run build first');
  process.exit(1);
}
say(`${N} clients, a ${OUTAGE / 1000} s restart, ladder base 1 s and cap ${MAX_MS / 1000} s; ${CONFIGS.length} configurations`);
const server = await startServer();
const results = [];
try {
  for (const config of CONFIGS) results.push(await run(config, server));
} finally {
  server.stop();
}
const table = rows(results);
const note = `${N.toLocaleString('en-US')} clients in one Node process against the development server on 127.0.0.1, which stops listening for ${OUTAGE / 1000} s (refused connections) and starts again; clients back off through the ladder (base 1 s, factor 2, cap ${MAX_MS / 1000} s), or with the fixed-retry baseline retry every 3 s as browsers do. Budget rows: a token bucket of ${RATE}/s (burst ${RATE * 2}), so N / C = ${N / RATE} s. Peaks are the most arrivals the server saw in one second after its return (while it is down it sees nothing, so the measured curves start at the return); "all connected" is counted from the return. The simulator ran the same parameters with the library's ladder; its figures are the medians of ${SEEDS} simulated populations (seeds 1 to ${SEEDS}), and the chart's dashed curves the first of them.`;
console.log(`\n${note}\n`);
const widths = HEADER.map((h, i) => Math.max(h.length, ...table.map((r) => String(r.cells[i]).length)));
const line = (cells) => cells.map((c, i) => (i ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ');
console.log(line(HEADER));
for (const r of table) console.log(line(r.cells));

let failed = false;
for (const r of table) {
  if (!(r.peakRatio <= TOLERANCE && r.peakRatio >= 1 / TOLERANCE)) {
    console.error(`[population] ${r.label}: measured peak ${r.mPeak}/s against simulated ${r.sPeak}/s is outside x${TOLERANCE}`);
    failed = true;
  }
  if (r.mAll == null) {
    console.error(`[population] ${r.label}: not every client reconnected`);
    failed = true;
  }
}
if (write && !quick && !only) {
  writeFileSync(join(root, 'docs', 'population.svg'), svg(results));
  writeSection('docs/storm.md', 'population', 'npm run population -- --write', `${note}\n\n${markdown(table)}\n![Arrivals a second after a restart, ${N} real clients against the simulator's prediction](population.svg)`);
  say('wrote docs/population.svg and the population section of docs/storm.md');
}
if (quick) say(failed ? 'FAILED: measured and simulated differ beyond the tolerance' : `ok: every measured peak within x${TOLERANCE} of the simulated one`);
process.exit(quick && failed ? 1 : 0);
