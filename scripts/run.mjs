// Running a command for scripts/test.mjs and scripts/runner-hangs.mjs: its output shown and kept, and a
// wasm-bindgen test page that never starts cut short.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A wasm-bindgen test page that has not started its scripts 60 s after the runner asked the driver for it
 * never will: one of its requests was never read by the runner's server (docs/reliability.md), and the
 * page would wait for the runner's 300 s time-out. (A page that starts does so within seconds.) As `hang`
 * for `run`.
 */
export const PAGE_HANG = { start: 'Running headless tests in', end: ['Loading Wasm module', 'running ', 'no tests to run'], ms: 60000 };

/**
 * Runs a command with its output shown and kept; resolves to { code, out, hung }. With `hang` ({ start,
 * end, ms }): once the output last says `start` and not yet `end` after it for `ms`, the command's whole
 * process group is killed and `hung` is true.
 */
export function run(cmd, args, env = {}, hang = null) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: !!hang });
    let out = '', timer = null, hung = false, armed = false;
    const seen = (d, to) => {
      out += d;
      to.write(d);
      if (!hang) return;
      // Only the new output (and enough before it for a marker split across chunks) can change the state.
      const tail = out.slice(-(d.length + 64));
      const start = tail.lastIndexOf(hang.start), end = Math.max(...hang.end.map((e) => tail.lastIndexOf(e)));
      if (start !== end) armed = start > end;
      if (armed && !timer) {
        timer = setTimeout(() => {
          hung = true;
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {}
        }, hang.ms);
      } else if (!armed && timer) {
        clearTimeout(timer);
        timer = null;
      }
    };
    child.stdout.on('data', (d) => seen(d, process.stdout));
    child.stderr.on('data', (d) => seen(d, process.stderr));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, out, hung });
    });
  });
}
