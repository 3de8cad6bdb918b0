// The fetch-based peers, bundled for a benchmark's page by esbuild (eventsource imports eventsource-parser by
// name, which a browser cannot resolve): @microsoft/fetch-event-source 2.0.1 as `fetchEventSource`, and
// eventsource 4.0.0 as `EventSource`.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let bundled;

/** The peers as one ES module's text, bundled once a process. */
export function fetchPeers() {
  bundled ??= buildSync({
    stdin: { contents: "export { fetchEventSource } from '@microsoft/fetch-event-source';\nexport { EventSource } from 'eventsource';\n", resolveDir: root },
    bundle: true,
    format: 'esm',
    write: false,
    logLevel: 'warning',
  }).outputFiles[0].text;
  return bundled;
}
