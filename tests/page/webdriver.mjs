// A minimal W3C WebDriver client for geckodriver: Playwright drives only its own patched Firefox, which
// cannot be downloaded here, so the stock Firefox ESR is driven through plain WebDriver over HTTP.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';

export function haveFirefox() {
  try {
    execFileSync('sh', ['-c', 'command -v geckodriver && command -v firefox'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

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

/** A headless Firefox session: goto, run (a script in the page) and waitFor (until the script is true). */
export async function firefox() {
  const port = await freePort();
  const driver = spawn('geckodriver', ['--host', '127.0.0.1', '--port', String(port)], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await call('GET', `${base}/status`);
      break;
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const session = await call('POST', `${base}/session`, {
    capabilities: { alwaysMatch: { browserName: 'firefox', 'moz:firefoxOptions': { args: ['-headless'] } } },
  });
  const at = `${base}/session/${session.sessionId}`;
  const run = (script, ...args) => call('POST', `${at}/execute/sync`, { script, args });
  return {
    version: session.capabilities.browserVersion,
    goto: (url) => call('POST', `${at}/url`, { url }),
    /** Opens a new window and returns its handle; `switchTo` makes it the one scripts run in. */
    newWindow: async () => (await call('POST', `${at}/window/new`, { type: 'window' })).handle,
    switchTo: (handle) => call('POST', `${at}/window`, { handle }),
    /** Closes the current window; returns the handles left. */
    closeWindow: () => call('DELETE', `${at}/window`),
    currentHandle: () => call('GET', `${at}/window`),
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
