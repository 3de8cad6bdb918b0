// Vitest resolves the package from the workspace's build (pkg/), as an app resolves it from node_modules.
import { fileURLToPath } from 'node:url';

export default {
  resolve: { alias: [{ find: /^managed-eventsource(\/.*)?$/, replacement: fileURLToPath(new URL('../../pkg', import.meta.url)) + '$1.js' }] },
  test: { include: ['*.vitest.test.js'], environment: 'jsdom' },
};
