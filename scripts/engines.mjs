// The three browser engines, started on a page with no driver and no DevTools connection, each in a fresh
// profile: for the benchmarks (a driver changes what an EventSource costs; see TOOLCHAIN.md), which have
// the page post its figures back to their own server on 127.0.0.1.
//
//   Chromium  chromium --headless=new --no-sandbox --user-data-dir=DIR URL
//   Firefox   firefox -headless -no-remote -profile DIR URL (timer precision not reduced, so that
//             performance.now() is not rounded to whole milliseconds)
//   WebKit    MiniBrowser URL, under an Xvfb display this file starts (MiniBrowser has no headless mode),
//             with its data and cache under DIR
//
// What this file may not do: talk to the page. It starts and stops processes; the page does the rest.

import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const which = (name) => {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
};

/** Where WebKitGTK's MiniBrowser is (Debian's webkit2gtk-driver brings it). */
export const MINIBROWSER = ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/libexec/webkit2gtk-4.1/MiniBrowser'].find(existsSync) ?? null;

/** The engines found on this machine: { name, binary }. */
export function engines() {
  const chrome = ['chromium', 'chromium-browser', 'google-chrome'].map(which).find(Boolean);
  const firefox = ['firefox', 'firefox-esr'].map(which).find(Boolean);
  return [
    chrome && { name: 'Chromium', binary: chrome },
    firefox && { name: 'Firefox', binary: firefox },
    MINIBROWSER && which('Xvfb') && { name: 'WebKit', binary: MINIBROWSER },
  ].filter(Boolean);
}

/**
 * Makes a benchmark's page cross-origin isolated (COOP same-origin and COEP require-corp on every response;
 * the pages load nothing from another origin): there WebKit's `performance.now()` counts in 20 µs steps,
 * not whole milliseconds, and Chromium's in 5 µs, not 100 µs (Firefox's, its precision unreduced, in 20 µs
 * either way). A page posts `crossOriginIsolated` with its figures, and the benchmark refuses figures
 * without it.
 */
export function isolate(res) {
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
}

let display = null;

/** An X display for MiniBrowser: the one in DISPLAY, or an Xvfb started once and stopped at exit. */
export async function xDisplay() {
  if (process.env.DISPLAY) return process.env.DISPLAY;
  if (display) return display.name;
  for (let n = 90; n < 120; n++) {
    if (existsSync(`/tmp/.X${n}-lock`)) continue;
    const proc = spawn('Xvfb', [`:${n}`, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
    const ok = await new Promise((resolve) => {
      const t = setTimeout(() => resolve(true), 500);
      proc.once('exit', () => (clearTimeout(t), resolve(false)));
    });
    if (!ok) continue;
    display = { name: `:${n}`, proc };
    proc.unref(); // the display must not keep the process alive; it goes when the process exits
    process.once('exit', () => display?.proc.kill());
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.once(signal, () => {
        display?.proc.kill();
        process.exit(130);
      });
    }
    return display.name;
  }
  throw new Error('engines: could not start Xvfb on any display from :90 to :119');
}

/**
 * Starts `engine` on `url` in a fresh profile. Returns { exited, stop() }: stop kills it, waits for it to
 * exit and removes the profile. With BENCH_LOG set the browser's output goes to ours (for a page that never
 * reports: with Chromium add BENCH_CHROMIUM_FLAGS=--enable-logging=stderr).
 */
export async function open(engine, url) {
  const profile = mkdtempSync(join(tmpdir(), `bench-${engine.name.toLowerCase()}-`));
  let args, env = process.env;
  if (engine.name === 'Chromium') {
    args = [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions',
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding', `--user-data-dir=${profile}`,
      // For experiments only (e.g. --js-flags=...): nothing in the project sets it.
      ...(process.env.BENCH_CHROMIUM_FLAGS?.split(' ').filter(Boolean) ?? []),
      url,
    ];
  } else if (engine.name === 'Firefox') {
    writeFileSync(
      join(profile, 'user.js'),
      [
        'user_pref("privacy.reduceTimerPrecision", false);',
        'user_pref("browser.shell.checkDefaultBrowser", false);',
        'user_pref("datareporting.policy.dataSubmissionEnabled", false);',
        'user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);',
        'user_pref("browser.aboutwelcome.enabled", false);',
        'user_pref("app.update.enabled", false);',
        'user_pref("network.captive-portal-service.enabled", false);',
        'user_pref("network.connectivity-service.enabled", false);',
        'user_pref("dom.min_background_timeout_value", 4);',
        // For experiments only ('"name", value;...'): nothing in the project sets it.
        ...(process.env.BENCH_FIREFOX_PREFS?.split(';').filter(Boolean).map((x) => `user_pref(${x});`) ?? []),
      ].join('\n') + '\n',
    );
    args = ['-headless', '-no-remote', '-profile', profile, url];
  } else {
    env = { ...process.env, DISPLAY: await xDisplay(), XDG_DATA_HOME: join(profile, 'data'), XDG_CACHE_HOME: join(profile, 'cache'), XDG_CONFIG_HOME: join(profile, 'config') };
    args = [url];
  }
  const proc = spawn(engine.binary, args, { stdio: process.env.BENCH_LOG ? 'inherit' : 'ignore', env, detached: true });
  const exited = new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
  return {
    exited,
    async stop() {
      try {
        process.kill(-proc.pid, 'SIGKILL'); // the whole group: Firefox and WebKit start helper processes
      } catch {}
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}
