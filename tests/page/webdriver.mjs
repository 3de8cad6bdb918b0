// A minimal W3C WebDriver client for geckodriver (Firefox) and WebKitWebDriver (WebKitGTK's MiniBrowser):
// Playwright drives only its own patched browsers, which cannot be downloaded here, so the stock Firefox
// ESR and WebKitGTK are driven through plain WebDriver over HTTP. MiniBrowser has no headless mode: it runs
// on an Xvfb display (scripts/engines.mjs starts one when there is no DISPLAY).
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { MINIBROWSER, xDisplay } from '../../scripts/engines.mjs';

const have = (cmd) => {
  try {
    execFileSync('sh', ['-c', cmd], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export const haveFirefox = () => have('command -v geckodriver && command -v firefox');
export const haveWebKit = () => !!MINIBROWSER && have('command -v WebKitWebDriver && command -v Xvfb');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function call(method, url, body) {
  const r = await fetch(url, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
  const json = await r.json();
  if (!r.ok) throw new Error(`WebDriver ${method} ${url}: ${json.value?.message ?? r.status}`);
  return json.value;
}

/** Starts a driver and a session with `capabilities`: goto, run (a script in the page), waitFor (until the
 * script is true), windows, and close. */
async function session(command, args, capabilities, env = process.env) {
  const port = await freePort();
  const driver = spawn(command, args(port), { stdio: 'ignore', env });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await call('GET', `${base}/status`);
      break;
    } catch (e) {
      if (i > 200) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const s = await call('POST', `${base}/session`, { capabilities: { alwaysMatch: capabilities } });
  const at = `${base}/session/${s.sessionId}`;
  const run = (script, ...args) => call('POST', `${at}/execute/sync`, { script, args });
  return {
    version: s.capabilities.browserVersion,
    goto: (url) => call('POST', `${at}/url`, { url }),
    /** Opens a new window and returns its handle; `switchTo` makes it the one scripts run in. */
    newWindow: async () => (await call('POST', `${at}/window/new`, { type: 'window' })).handle,
    switchTo: (handle) => call('POST', `${at}/window`, { handle }),
    /** Closes the current window; returns the handles left. */
    closeWindow: () => call('DELETE', `${at}/window`),
    currentHandle: () => call('GET', `${at}/window`),
    back: () => call('POST', `${at}/back`, {}),
    run,
    async waitFor(script, timeout = 15000) {
      const t0 = Date.now();
      while (Date.now() - t0 < timeout) {
        if (await run(script)) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out waiting for: ${script}`);
    },
    async close() {
      await call('DELETE', at).catch(() => {});
      driver.kill();
    },
  };
}

/** A headless Firefox session. */
export const firefox = () =>
  session('geckodriver', (port) => ['--host', '127.0.0.1', '--port', String(port)], {
    browserName: 'firefox',
    'moz:firefoxOptions': { args: ['-headless'] },
  });

/** A WebKitGTK MiniBrowser session, on an Xvfb display. */
export async function webkit() {
  const env = { ...process.env, DISPLAY: await xDisplay() };
  return session(
    'WebKitWebDriver',
    (port) => [`--port=${port}`],
    { browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] } },
    env,
  );
}
